package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/store/pgstore"
)

var statsLine = regexp.MustCompile(`^stats: pending=(\d+) due=(\d+) leased=(\d+) scheduled=(\d+) expired_pending=(\d+) dead=(\d+) oldest_due_age=\S+$`)

func TestStats(t *testing.T) {
	for _, tg := range opsTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			var rows []seedRow
			rows = append(rows, repeat(3, seedRow{"orders.placed", "", fateDue})...)
			rows = append(rows, repeat(2, seedRow{"orders.placed", "", fateDead})...)
			rows = append(rows, seedRow{"orders.placed", "", fatePublished},
				seedRow{"orders.placed", "", fateScheduled},
				seedRow{"orders.placed", "", fateLeased},
				seedRow{"orders.placed", "", fateExpired})
			seed(t, tg, rows...)

			got := statsOf(t, tg)
			want := map[string]float64{"pending": 6, "due": 3, "leased": 1, "scheduled": 1, "expired_pending": 1, "dead": 2}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v (document %v)", k, got[k], v, got)
				}
			}
			if got["oldest_due_age_seconds"] < 0 || got["oldest_due_age_seconds"] > 600 {
				t.Errorf("oldest_due_age_seconds = %v", got["oldest_due_age_seconds"])
			}

			r := run(t, nil, tg.cmd("stats")...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("code %d, stderr %q", r.code, r.stderr)
			}
			m := statsLine.FindStringSubmatch(lastLine(t, r.stdout))
			if m == nil || m[1] != "6" || m[2] != "3" || m[6] != "2" {
				t.Fatalf("last line of\n%s\ndoes not match %v with pending=6 due=3 dead=2", r.stdout, statsLine)
			}
			// The table's rows start with the state and align the counts.
			lines := strings.Split(r.stdout, "\n")
			col := -1
			for _, l := range lines {
				for _, state := range []string{"due ", "leased ", "dead "} {
					if strings.HasPrefix(l, state) {
						c := strings.IndexFunc(l[len(state):], func(r rune) bool { return r != ' ' }) + len(state)
						if col >= 0 && c != col {
							t.Fatalf("counts not aligned:\n%s", r.stdout)
						}
						col = c
					}
				}
			}
			if col < 0 {
				t.Fatalf("no table in\n%s", r.stdout)
			}
		})
	}
}

func TestStatsEmptyJSON(t *testing.T) {
	t.Parallel()
	tg := newSQLiteTarget(t)
	got := statsOf(t, tg)
	for _, k := range []string{"pending", "due", "leased", "scheduled", "dead", "expired_pending", "oldest_due_age_seconds"} {
		v, ok := got[k]
		if !ok || v != 0 {
			t.Errorf("%s = %v (present %v), want 0", k, v, ok)
		}
	}
}

// TestOpsCommandsUnmigrated runs every store command against databases
// without an outbox table: a clear message and exit status 1; a SQLite file
// that does not exist is bad input (2) and is not created.
func TestOpsCommandsUnmigrated(t *testing.T) {
	t.Parallel()
	pg := newPostgresTarget(t, false)
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.db")
	commands := [][]string{
		{"stats"},
		{"dead", "list"},
		{"dead", "retry", "0190a4c2-7b1e-7cde-8f00-1234567890ab"},
		{"dead", "purge", "--all-matching", "--yes"},
		{"purge"},
	}
	targets := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"postgres schema", pg.args, exitcode.Failure, fmt.Sprintf("has no outbox table (schema version 0, need %d)", pgstore.SchemaVersion)},
		{"empty sqlite file", []string{"--database-url", "sqlite://" + empty}, exitcode.Failure, "has no outbox table"},
		{"missing sqlite file", []string{"--database-url", "sqlite://" + missing}, exitcode.Usage, "no SQLite database at"},
	}
	for _, tt := range targets {
		for _, c := range commands {
			t.Run(tt.name+"/"+strings.Join(c, " "), func(t *testing.T) {
				r := run(t, nil, append(c, tt.args...)...)
				if r.code != tt.code || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tt.want) {
					t.Fatalf("code %d, stdout %q, stderr %q; want %d, nothing, one line with %q", r.code, r.stdout, r.stderr, tt.code, tt.want)
				}
			})
		}
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Fatalf("the commands created %s: %v", missing, err)
	}
}
