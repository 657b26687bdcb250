package doctor

import (
	"fmt"
	"strings"

	"github.com/reliar/reliar/cmd/reliar/internal/ops"
)

// Lines renders a report for people: a table of every check and what it
// found, then, for each check that is not ok, why it matters and the fix.
func (r Report) Lines() []string {
	rows := [][]string{{"CHECK", "VERDICT", "FOUND"}}
	for _, c := range r.Checks {
		rows = append(rows, []string{c.Name, string(c.Verdict), c.Found})
	}
	lines := ops.Table(rows, 2)
	for _, c := range r.Checks {
		if c.Verdict == OK {
			continue
		}
		lines = append(lines, "", fmt.Sprintf("%s: %s", strings.ToUpper(string(c.Verdict)), c.Name))
		if c.Why != "" {
			lines = append(lines, "  why: "+c.Why)
		}
		if c.Fix != "" {
			lines = append(lines, "  fix: "+c.Fix)
		}
	}
	return lines
}

// Summary is reliar doctor's last line.
func (r Report) Summary() string {
	return fmt.Sprintf("doctor: %d ok, %d warn, %d red", r.OK, r.Warn, r.Red)
}
