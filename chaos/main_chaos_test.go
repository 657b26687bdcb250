//go:build chaos

package chaos_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/reliar/reliar/chaos/check"
	"github.com/reliar/reliar/chaos/internal/rig"
	"github.com/reliar/reliar/outbox"
)

// The suite's knobs, from the environment (the Makefile sets them):
// CHAOS_ITER iterations of each scenario (default 1), CHAOS_SOAK the
// soak's fault phase (default 20s), CHAOS_RELAY which relay to run (relay,
// the only one, or auto), CHAOS_SUMMARY the file the totals are written to.
var (
	bin        rig.Binary
	tally      rig.Tally
	iterations = 1
	soakFor    = 20 * time.Second
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if v := os.Getenv("CHAOS_ITER"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "chaos: CHAOS_ITER=%q: want a positive integer\n", v)
			return 2
		}
		iterations = n
	}
	if v := os.Getenv("CHAOS_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			fmt.Fprintf(os.Stderr, "chaos: CHAOS_SOAK=%q: want a positive duration\n", v)
			return 2
		}
		soakFor = d
	}
	dir, err := os.MkdirTemp("", "reliar-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	bin, err = rig.BuildRelay(ctx, dir, os.Getenv("CHAOS_RELAY"), os.Getenv("CHAOS_RACE") != "0")
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	header := fmt.Sprintf("chaos: relay=%s per_key=%v iterations=%d soak=%v", bin.Kind, bin.PerKey, iterations, soakFor)
	fmt.Println(header)
	code := m.Run()
	path := os.Getenv("CHAOS_SUMMARY")
	if path == "" {
		fmt.Print(tally.Summary())
	} else {
		if err := tally.WriteSummary(path, header); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return code
}

// iterate runs one scenario CHAOS_ITER times, each a subtest, and adds
// every report to the totals.
func iterate(t *testing.T, scenario string, run func(t *testing.T) check.Report) {
	for i := range iterations {
		t.Run(fmt.Sprintf("run%d", i+1), func(t *testing.T) {
			tally.Add(scenario, run(t))
		})
	}
}

// waitFor polls cond every few milliseconds until it holds, failing the
// test after within.
func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// count counts the rows of the relay's events of kind.
func count(t *testing.T, p *rig.Relay, kind outbox.EventKind) int {
	t.Helper()
	evs, err := p.Events()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n += e.Count
		}
	}
	return n
}

func ctxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// alive fails the test when a relay the scenario did not stop has exited:
// no fault may end the relay.
func alive(t *testing.T, relays ...*rig.Relay) {
	t.Helper()
	for _, p := range relays {
		if done, err := p.Exited(); done {
			t.Fatalf("relay %s exited during the faults: %v\n%s", p.Name, err, p.Stderr())
		}
	}
}
