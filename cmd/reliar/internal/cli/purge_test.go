package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/ops"
)

func TestPurge(t *testing.T) {
	for _, tg := range opsTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			var rows []seedRow
			rows = append(rows, repeat(5, seedRow{"orders.placed", "", fatePublished})...)
			rows = append(rows, repeat(3, seedRow{"orders.placed", "", fateDead})...)
			rows = append(rows, seedRow{"orders.placed", "", fateExpired}, seedRow{"orders.placed", "", fateDue})
			seed(t, tg, rows...)

			tests := []struct {
				name string
				args []string
				last string
			}{
				// The rows are seconds old: the default retentions keep
				// them, but the expired row goes dead.
				{"defaults", nil, "purge: published_deleted=0 dead_deleted=0 expired=1 passes=1"},
				// Zero is the default, never "delete everything": young rows
				// go only with a tiny retention, and dead ones with --force.
				{"zero is the default", []string{"--published-retention", "0s", "--dead-retention", "0", "--force"},
					"purge: published_deleted=0 dead_deleted=0 expired=0 passes=1"},
				{"one pass", []string{"--published-retention", "1ms", "--dead-retention", "14d", "--batch-size", "2"},
					"purge: published_deleted=2 dead_deleted=0 expired=0 passes=1"},
				// 3 published and 4 dead in batches of 2: the second pass
				// deletes a full batch of dead rows, so a third finds none.
				{"loop", []string{"--published-retention", "1ms", "--dead-retention", "1ms", "--force", "--batch-size", "2", "--loop"},
					"purge: published_deleted=3 dead_deleted=4 expired=0 passes=3"},
				{"nothing left", []string{"--published-retention", "1ms", "--dead-retention", "1ms", "--force", "--loop"},
					"purge: published_deleted=0 dead_deleted=0 expired=0 passes=1"},
			}
			for _, tt := range tests {
				r := run(t, nil, tg.cmd(append([]string{"purge"}, tt.args...)...)...)
				if r.code != 0 || r.stderr != "" || lastLine(t, r.stdout) != tt.last {
					t.Fatalf("%s: code %d, stdout %q, stderr %q; want last line %q", tt.name, r.code, r.stdout, r.stderr, tt.last)
				}
			}
			if st := statsOf(t, tg); st["dead"] != 0 || st["pending"] != 1 {
				t.Fatalf("stats after: %v", st)
			}
			r := run(t, nil, tg.cmd("purge", "--json")...)
			var doc ops.PurgeTally
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || doc != (ops.PurgeTally{Passes: 1}) {
				t.Fatalf("--json: code %d, %q: %v", r.code, r.stdout, err)
			}
		})
	}
}

func TestPurgeBadInput(t *testing.T) {
	t.Parallel()
	tg := newSQLiteTarget(t)
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"bad duration", nil, []string{"--published-retention", "never"}, `invalid argument "never" for "--published-retention"`},
		{"off is not a retention", nil, []string{"--dead-retention", "off"}, `invalid argument "off" for "--dead-retention"`},
		{"young dead letters", nil, []string{"--dead-retention", "59m"}, "add --force"},
		{"force from env", map[string]string{"RELIAR_FORCE": "true"}, []string{"--dead-retention", "1s"}, "add --force"},
		{"negative duration", nil, []string{"--dead-retention", "-1h"}, "must not be negative"},
		{"fractional days", nil, []string{"--dead-retention", "1.5d"}, "want a whole number of days"},
		{"negative batch", nil, []string{"--batch-size", "-1"}, `"--batch-size"`},
		{"bad duration from env", map[string]string{"RELIAR_DEAD_RETENTION": "soon"}, nil, "RELIAR_DEAD_RETENTION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.env, tg.cmd(append([]string{"purge"}, tt.args...)...)...)
			if r.code != exitcode.Usage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("code %d, stdout %q, stderr %q; want 2, nothing, one line with %q", r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
}
