package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/ops"
	"github.com/reliar/reliar/cmd/reliar/internal/output"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
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

// noTenants is a store that cannot list its tenants, as SQLite and MariaDB.
type noTenants struct{ outbox.Store }

// TestStatsTenants prints the stats of a memstore, which lists its
// tenants: the table of tenants after the gauges, longest waiting first,
// and the tenants array in the JSON document; a store that cannot list
// them, or --tenants off, leaves the table out and the array null.
func TestStatsTenants(t *testing.T) {
	now := time.Date(2026, 5, 1, 7, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	store, err := memstore.New(memstore.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	enqueue := func(tenant string, n int) {
		t.Helper()
		for i := range n {
			m := reliar.NewMsg(opsMessage{Type: "orders.placed", N: i})
			m.Metadata.TenantID = tenant
			if _, err := store.Enqueue(t.Context(), m); err != nil {
				t.Fatal(err)
			}
		}
	}
	enqueue("big", 5)
	advance(90 * time.Second)
	enqueue("", 2)
	advance(30 * time.Second)
	enqueue("evil\x1b[31m", 1)
	advance(time.Second)

	print := func(s outbox.Store, tenants int, asJSON bool) string {
		t.Helper()
		var b bytes.Buffer
		if err := printStats(t.Context(), output.New(&b, asJSON), s, "memstore", tenants); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}

	text := print(store, 10, false)
	want := []string{
		"tenants with due rows, the longest waiting first (at most 10, --tenants):",
		"TENANT          DUE  OLDEST_DUE_AGE",
		"big             5    2m1s",
		"-               2    31s",
		`"evil\x1b[31m"  1    1s`,
	}
	if !strings.Contains(text, strings.Join(want, "\n")+"\n") {
		t.Errorf("stats of a memstore:\n%s\nwant the lines\n%s", text, strings.Join(want, "\n"))
	}
	if strings.Contains(text, "\x1b") {
		t.Errorf("a tenant id writes an escape sequence to the terminal:\n%q", text)
	}
	if !statsLine.MatchString(lastLine(t, text)) {
		t.Errorf("the last line is not the summary:\n%s", text)
	}
	if got := print(store, 1, false); !strings.Contains(got, "\nbig ") || strings.Contains(got, "\n- ") {
		t.Errorf("--tenants 1:\n%s\nwant big alone", got)
	}

	var doc struct {
		Due     int64                 `json:"due"`
		Tenants *[]ops.TenantDocument `json:"tenants"`
	}
	if err := json.Unmarshal([]byte(print(store, 2, true)), &doc); err != nil {
		t.Fatal(err)
	}
	wantDocs := []ops.TenantDocument{{TenantID: "big", Due: 5, OldestDueAgeSeconds: 121}, {TenantID: "", Due: 2, OldestDueAgeSeconds: 31}}
	if doc.Due != 8 || doc.Tenants == nil || !slices.Equal(*doc.Tenants, wantDocs) {
		t.Errorf("document: due %d, tenants %+v; want 8, %+v", doc.Due, doc.Tenants, wantDocs)
	}

	empty, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	if got := print(empty, 10, false); !strings.Contains(got, "\nno tenant has due rows\n") {
		t.Errorf("stats of an empty memstore:\n%s", got)
	}
	if got := print(empty, 10, true); !strings.Contains(got, `"tenants": []`) {
		t.Errorf("document of an empty memstore: %s, want an empty tenants array", got)
	}

	for name, c := range map[string]struct {
		store   outbox.Store
		tenants int
	}{"a store that cannot list tenants": {noTenants{store}, 10}, "--tenants off": {store, outbox.Off}} {
		if got := print(c.store, c.tenants, false); strings.Contains(got, "TENANT") || strings.Contains(got, "tenant") {
			t.Errorf("%s: the tenants are shown:\n%s", name, got)
		}
		if got := print(c.store, c.tenants, true); !strings.Contains(got, `"tenants": null`) {
			t.Errorf("%s: document %s, want tenants null", name, got)
		}
	}
}

// TestStatsTenantsCommand runs reliar stats on PostgreSQL, which lists its
// tenants, and on SQLite, which does not.
func TestStatsTenantsCommand(t *testing.T) {
	for _, tg := range opsTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			t.Parallel()
			var rows []seedRow
			rows = append(rows, repeat(3, seedRow{"orders.placed", "acme", fateDue})...)
			rows = append(rows, seedRow{"orders.placed", "", fateDue}, seedRow{"orders.placed", "globex", fateScheduled},
				seedRow{"orders.placed", "initech", fateDead})
			seed(t, tg, rows...)

			r := run(t, nil, tg.cmd("stats", "--json")...)
			if r.code != 0 {
				t.Fatalf("stats --json: code %d, stderr %q", r.code, r.stderr)
			}
			var doc map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
				t.Fatal(err)
			}
			tenants, present := doc["tenants"]
			if xa, told := doc["xid_ahead"]; told != (tg.name == "postgres") || (told && xa.(map[string]any)["rows"] != 0.0) {
				t.Errorf("xid_ahead %v (present %v), want none ahead on PostgreSQL and no key on SQLite", xa, told)
			}
			text := run(t, nil, tg.cmd("stats")...)
			if text.code != 0 {
				t.Fatalf("stats: code %d, stderr %q", text.code, text.stderr)
			}
			if tg.name == "sqlite" {
				if !present || tenants != nil {
					t.Errorf("tenants %v (present %v), want null on SQLite", tenants, present)
				}
				if strings.Contains(text.stdout, "TENANT") {
					t.Errorf("the tenants are shown on SQLite:\n%s", text.stdout)
				}
				return
			}
			list, _ := tenants.([]any)
			got := map[string]float64{}
			for _, e := range list {
				m := e.(map[string]any)
				got[m["tenant_id"].(string)] = m["due"].(float64)
			}
			if len(list) != 2 || got["acme"] != 3 || got[""] != 1 {
				t.Errorf("tenants %v, want acme with 3 due rows and the rows without a tenant with 1", tenants)
			}
			if !regexp.MustCompile(`(?m)^acme +3 +\S+$`).MatchString(text.stdout) || !regexp.MustCompile(`(?m)^- +1 +\S+$`).MatchString(text.stdout) {
				t.Errorf("no tenants table in\n%s", text.stdout)
			}
			if off := run(t, nil, tg.cmd("stats", "--tenants", "off")...); off.code != 0 || strings.Contains(off.stdout, "TENANT") {
				t.Errorf("--tenants off: code %d, stdout\n%s", off.code, off.stdout)
			}
		})
	}
}
