package cli

import (
	"encoding/json"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
)

// deadListDoc is dead list's --json document as a script reads it.
type deadListDoc struct {
	Records []struct {
		ID          string    `json:"id"`
		Sequence    int64     `json:"sequence"`
		MessageType string    `json:"message_type"`
		TenantID    *string   `json:"tenant_id"`
		DeadReason  string    `json:"dead_reason"`
		Attempts    int       `json:"attempts"`
		LastError   string    `json:"last_error"`
		DeadAt      time.Time `json:"dead_at"`
	} `json:"records"`
	Poisoned          []json.RawMessage `json:"poisoned"`
	NextAfterSequence *int64            `json:"next_after_sequence"`
}

func deadList(t *testing.T, tg opsTarget, args ...string) deadListDoc {
	t.Helper()
	r := run(t, nil, tg.cmd(append([]string{"dead", "list", "--json"}, args...)...)...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("dead list %v: code %d, stderr %q", args, r.code, r.stderr)
	}
	var doc deadListDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("dead list --json %q: %v", r.stdout, err)
	}
	return doc
}

// seedDead seeds 3 dead orders.placed rows of tenant acme, 2 of tenant
// globex, 2 dead payments.captured rows without a tenant, and a due row.
func seedDead(t *testing.T, tg opsTarget) []string {
	var rows []seedRow
	rows = append(rows, repeat(3, seedRow{"orders.placed", "acme", fateDead})...)
	rows = append(rows, repeat(2, seedRow{"orders.placed", "globex", fateDead})...)
	rows = append(rows, repeat(2, seedRow{"payments.captured", "", fateDead})...)
	rows = append(rows, seedRow{"orders.placed", "acme", fateDue})
	var ids []string
	for _, id := range seed(t, tg, rows...) {
		ids = append(ids, id.String())
	}
	return ids
}

func TestDeadList(t *testing.T) {
	for _, tg := range opsTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			ids := seedDead(t, tg)

			all := deadList(t, tg)
			if len(all.Records) != 7 || len(all.Poisoned) != 0 || all.NextAfterSequence != nil {
				t.Fatalf("all: %d records, %d poisoned, next %v; want 7, 0, null", len(all.Records), len(all.Poisoned), all.NextAfterSequence)
			}
			first := all.Records[0]
			if first.ID != ids[0] || first.MessageType != "orders.placed" || first.TenantID == nil || *first.TenantID != "acme" ||
				first.DeadReason != "permanent" || first.Attempts != 1 || first.LastError != "broker said no" || time.Since(first.DeadAt) > time.Hour {
				t.Fatalf("first record %+v", first)
			}
			if all.Records[6].TenantID != nil {
				t.Fatalf("a row without a tenant has tenant_id %q, want null", *all.Records[6].TenantID)
			}
			for i := 1; i < len(all.Records); i++ {
				if all.Records[i].Sequence <= all.Records[i-1].Sequence {
					t.Fatalf("records not in sequence order: %d after %d", all.Records[i].Sequence, all.Records[i-1].Sequence)
				}
			}

			filters := []struct {
				args []string
				want int
			}{
				{[]string{"--type", "orders.placed"}, 5},
				{[]string{"--tenant", "globex"}, 2},
				{[]string{"--type", "orders.placed", "--tenant", "acme"}, 3},
				{[]string{"--type", "nothing"}, 0},
				{[]string{"--before", "1h"}, 0},
				{[]string{"--before", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, 7},
				{[]string{"--after", strconv.FormatInt(all.Records[4].Sequence, 10)}, 2},
			}
			for _, f := range filters {
				if got := deadList(t, tg, f.args...); len(got.Records) != f.want {
					t.Errorf("%v: %d records, want %d", f.args, len(got.Records), f.want)
				}
			}

			// Paging by three follows the cursor to the end.
			var seen []string
			after := "0"
			for page := 0; ; page++ {
				if page > 5 {
					t.Fatal("paging does not end")
				}
				doc := deadList(t, tg, "--limit", "3", "--after", after)
				for _, r := range doc.Records {
					seen = append(seen, r.ID)
				}
				if doc.NextAfterSequence == nil {
					break
				}
				after = strconv.FormatInt(*doc.NextAfterSequence, 10)
			}
			if strings.Join(seen, ",") != strings.Join(ids[:7], ",") {
				t.Fatalf("paged through %v, want %v", seen, ids[:7])
			}

			// The human table: a header, one line per row, then the summary
			// with the next cursor.
			r := run(t, nil, tg.cmd("dead", "list", "--limit", "2")...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("code %d, stderr %q", r.code, r.stderr)
			}
			lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
			if len(lines) != 4 || !strings.HasPrefix(lines[0], "SEQUENCE") || !strings.Contains(lines[1], ids[0]) || !strings.Contains(lines[1], "broker said no") {
				t.Fatalf("table:\n%s", r.stdout)
			}
			want := regexp.MustCompile(`^dead list: 2 records, 0 poisoned; more after sequence (\d+) \(--after (\d+)\)$`)
			if m := want.FindStringSubmatch(lines[3]); m == nil || m[1] != strconv.FormatInt(all.Records[1].Sequence, 10) {
				t.Fatalf("last line %q", lines[3])
			}
		})
	}
}

func TestDeadBadInput(t *testing.T) {
	t.Parallel()
	tg := newSQLiteTarget(t)
	id := "0190a4c2-7b1e-7cde-8f00-1234567890ab"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"bad before", []string{"dead", "list", "--before", "yesterday"}, `invalid argument "yesterday"`},
		{"negative before", []string{"dead", "list", "--before", "-2h"}, "a positive duration ago"},
		{"negative limit", []string{"dead", "list", "--limit", "-1"}, `for "--limit" flag`},
		{"limit too large", []string{"dead", "list", "--limit", "5000"}, "at most 1000"},
		{"negative after", []string{"dead", "list", "--after", "-1"}, "--after must not be negative"},
		{"list takes no ids", []string{"dead", "list", id}, `unknown command "` + id + `"`},
		{"bad id", []string{"dead", "retry", "not-a-uuid"}, `bad message id "not-a-uuid"`},
		{"nil id", []string{"dead", "purge", "00000000-0000-0000-0000-000000000000"}, "the nil UUID names no message"},
		{"no ids", []string{"dead", "retry"}, "name the dead rows by id, or select them with --all-matching"},
		{"ids and all-matching", []string{"dead", "purge", "--all-matching", "--yes", id}, "give ids or --all-matching, not both"},
		{"filter without all-matching", []string{"dead", "retry", "--type", "x", id}, "--type selects rows with --all-matching only"},
		{"all-matching bad limit", []string{"dead", "retry", "--all-matching", "--yes", "--limit", "1001"}, `for "--limit" flag`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, nil, tg.cmd(tt.args...)...)
			if r.code != exitcode.Usage || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, tt.want) {
				t.Fatalf("code %d, stdout %q, stderr %q; want 2, nothing, one line with %q", r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
}

// TestDeadRetryAndPurgeByID retries and deletes named rows; ids that are not
// dead rows (unknown, or pending) are reported and exit 1.
func TestDeadRetryAndPurgeByID(t *testing.T) {
	for _, tg := range opsTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			ids := seedDead(t, tg)
			unknown := "0190a4c2-7b1e-7cde-8f00-1234567890ab"
			pending := ids[7]
			tests := []struct {
				name   string
				args   []string
				code   int
				last   string
				stderr string
			}{
				{"retry two", []string{"dead", "retry", ids[0], ids[1], ids[0]}, 0, "dead retry: retried 2 of 2", ""},
				{"retry again", []string{"dead", "retry", ids[0]}, exitcode.Failure, "dead retry: retried 0 of 1", "1 of 1 ids were not dead rows"},
				{"purge one and unknown ones", []string{"dead", "purge", ids[2], unknown, pending}, exitcode.Failure, "dead purge: purged 1 of 3", "2 of 3 ids were not dead rows"},
				{"purge one", []string{"dead", "purge", ids[3]}, 0, "dead purge: purged 1 of 1", ""},
			}
			for _, tt := range tests {
				r := run(t, nil, tg.cmd(tt.args...)...)
				if r.code != tt.code || lastLine(t, r.stdout) != tt.last {
					t.Fatalf("%s: code %d, stdout %q, stderr %q; want %d and %q", tt.name, r.code, r.stdout, r.stderr, tt.code, tt.last)
				}
				if (tt.stderr == "") != (r.stderr == "") || !strings.Contains(r.stderr, tt.stderr) {
					t.Fatalf("%s: stderr %q, want %q", tt.name, r.stderr, tt.stderr)
				}
			}
			// 7 dead: 2 retried and 2 purged leave 3; the retried rows and
			// the pending one are due.
			st := statsOf(t, tg)
			if st["dead"] != 3 || st["due"] != 3 {
				t.Fatalf("stats after: %v; want dead 3, due 3", st)
			}
			r := run(t, nil, tg.cmd("dead", "retry", "--json", ids[4])...)
			var doc deadActionJSON
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || doc != (deadActionJSON{Action: "retry", Asked: 1, Done: 1, Batches: 1}) {
				t.Fatalf("--json: code %d, %q: %v", r.code, r.stdout, err)
			}
		})
	}
}

func TestDeadAllMatching(t *testing.T) {
	for _, tg := range opsTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			seedDead(t, tg)
			r := run(t, nil, tg.cmd("dead", "retry", "--all-matching", "--type", "orders.placed", "--limit", "2", "--yes")...)
			if r.code != 0 || r.stderr != "" || lastLine(t, r.stdout) != "dead retry: retried 5 of 5" {
				t.Fatalf("retry: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			if st := statsOf(t, tg); st["dead"] != 2 || st["due"] != 6 {
				t.Fatalf("stats after retry: %v", st)
			}
			r = run(t, nil, tg.cmd("dead", "purge", "--all-matching", "--tenant", "nobody", "--yes")...)
			if r.code != 0 || lastLine(t, r.stdout) != "dead purge: purged 0 of 0" {
				t.Fatalf("purge nothing: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
			}
			r = run(t, nil, tg.cmd("dead", "purge", "--all-matching", "--yes", "--limit", "1", "--json")...)
			var doc deadActionJSON
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 ||
				doc != (deadActionJSON{Action: "purge", AllMatching: true, Asked: 2, Done: 2, Batches: 2}) {
				t.Fatalf("purge --json: code %d, %q, stderr %q: %v", r.code, r.stdout, r.stderr, err)
			}
			if st := statsOf(t, tg); st["dead"] != 0 || st["due"] != 6 {
				t.Fatalf("stats after purge: %v", st)
			}
		})
	}
}

// TestDeadAllMatchingNeedsYes runs with stdin on /dev/null, not a terminal:
// --all-matching without --yes is refused before anything is touched,
// while named ids proceed.
func TestDeadAllMatchingNeedsYes(t *testing.T) {
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	stdin := os.Stdin
	os.Stdin = devNull
	defer func() { os.Stdin = stdin }()

	tg := newPostgresTarget(t, true)
	ids := seedDead(t, tg)
	for _, act := range []string{"retry", "purge"} {
		// RELIAR_YES does not confirm: only --yes typed on the command line does.
		r := run(t, map[string]string{"RELIAR_YES": "true"}, tg.cmd("dead", act, "--all-matching")...)
		if r.code != exitcode.Usage || r.stdout != "" || !strings.Contains(r.stderr, "stdin is not a terminal to confirm on: add --yes") {
			t.Fatalf("%s: code %d, stdout %q, stderr %q", act, r.code, r.stdout, r.stderr)
		}
	}
	if st := statsOf(t, tg); st["dead"] != 7 {
		t.Fatalf("refused commands touched rows: %v", st)
	}
	r := run(t, nil, tg.cmd("dead", "retry", ids[0])...)
	if r.code != 0 || lastLine(t, r.stdout) != "dead retry: retried 1 of 1" {
		t.Fatalf("retry by id: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
