package rig

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"

	"github.com/reliar/reliar/chaos/check"
)

// Tally adds up the reports of every run of a test binary.
type Tally struct {
	mu        sync.Mutex
	scenarios map[string]*total
}

type total struct {
	runs int
	sum  check.Report
}

// Add records one run of scenario.
func (t *Tally) Add(scenario string, r check.Report) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.scenarios == nil {
		t.scenarios = make(map[string]*total)
	}
	s := t.scenarios[scenario]
	if s == nil {
		s = &total{}
		t.scenarios[scenario] = s
	}
	s.runs++
	add(&s.sum, r)
}

func add(into *check.Report, r check.Report) {
	into.Committed += r.Committed
	into.Delivered += r.Delivered
	into.Attempts += r.Attempts
	into.Lost += r.Lost
	into.Unknown += r.Unknown
	into.Duplicates += r.Duplicates
	for w := range r.ByWindow {
		into.ByWindow[w] += r.ByWindow[w]
	}
	into.Unattributed += r.Unattributed
	into.OrderViolations += r.OrderViolations
	into.LeasedLeft += r.LeasedLeft
	into.PendingLeft += r.PendingLeft
	into.Dead += r.Dead
}

// Summary is one line per scenario, then the totals line:
// "chaos: scenarios=S runs=R lost=L unattributed_duplicates=U duplicates=D leased_left=X".
func (t *Tally) Summary() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	names := make([]string, 0, len(t.scenarios))
	for n := range t.scenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	var all check.Report
	runs := 0
	for _, n := range names {
		s := t.scenarios[n]
		fmt.Fprintf(&b, "chaos: %s runs=%d %s\n", n, s.runs, s.sum)
		runs += s.runs
		add(&all, s.sum)
	}
	fmt.Fprintf(&b, "chaos: scenarios=%d runs=%d lost=%d unattributed_duplicates=%d duplicates=%d leased_left=%d\n",
		len(names), runs, all.Lost, all.Unattributed, all.Duplicates, all.LeasedLeft)
	return b.String()
}

// WriteSummary writes header (when not empty) and Summary to path.
func (t *Tally) WriteSummary(path, header string) error {
	if header != "" && !strings.HasSuffix(header, "\n") {
		header += "\n"
	}
	if err := os.WriteFile(path, []byte(header+t.Summary()), 0o644); err != nil {
		return fmt.Errorf("rig: summary: %w", err)
	}
	return nil
}
