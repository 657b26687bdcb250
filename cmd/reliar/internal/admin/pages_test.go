package admin

import (
	"context"
	"html"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
)

var nextPage = regexp.MustCompile(`<a href="([^"]+)" id="next-page">`)

// TestDashboardPaging follows the keyset cursor from page to page, keeping
// the filter.
func TestDashboardPaging(t *testing.T) {
	o := newPGOutbox(t)
	ids := o.seedDead(t,
		deadSpec{typ: "a", tenant: "t1"}, deadSpec{typ: "a", tenant: "t1"}, deadSpec{typ: "b", tenant: "t1"},
		deadSpec{typ: "a", tenant: "t1"}, deadSpec{typ: "a", tenant: "t2"},
	)
	s := newTestServer(t, o.store, false)
	b := s.login(t)

	var seen []string
	path := "/?type=a&tenant=t1&limit=2"
	for i := 0; path != ""; i++ {
		if i > 3 {
			t.Fatal("the pages do not end")
		}
		page := b.get(path)
		if page.status != http.StatusOK {
			t.Fatalf("%s: status %d", path, page.status)
		}
		for _, id := range ids {
			if strings.Contains(page.body, `data-id="`+id.String()+`"`) {
				seen = append(seen, id.String())
			}
		}
		if i > 0 && !strings.Contains(page.body, `id="first-page"`) {
			t.Errorf("page %d has no link to the first page", i+1)
		}
		path = ""
		if m := nextPage.FindStringSubmatch(page.body); m != nil {
			path = html.UnescapeString(m[1])
			if !strings.Contains(path, "type=a") || !strings.Contains(path, "tenant=t1") || !strings.Contains(path, "limit=2") || !strings.Contains(path, "after=") {
				t.Fatalf("next page %q loses the filter", path)
			}
		}
	}
	want := idStrings(ids[0], ids[1], ids[3])
	if strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Fatalf("pages listed %v, want %v", seen, want)
	}

	bad := b.get("/?limit=5000")
	if bad.status != http.StatusOK || !strings.Contains(bad.body, "limit must be between 1 and 1000") {
		t.Fatalf("a bad filter: status %d", bad.status)
	}
}

// TestPoisonedRows lists a dead row that cannot be decoded apart, shows its
// payload (which the poison is not in: the store reads it alone), and lets
// it be purged.
func TestPoisonedRows(t *testing.T) {
	o := newPGOutbox(t)
	ids := o.seedDead(t, deadSpec{typ: "a"}, deadSpec{typ: "b"})
	if _, err := o.pool.Exec(context.Background(), `UPDATE "`+o.schema+`".outbox SET metadata_version = 999 WHERE id = $1`, ids[1]); err != nil {
		t.Fatal(err)
	}
	s := newTestServer(t, o.store, false)
	b := s.login(t)
	page := b.get("/")
	if !strings.Contains(page.body, "Undecodable dead rows") || !strings.Contains(page.body, `id="poisoned-table"`) {
		t.Fatal("the poisoned row is not listed apart")
	}
	var doc map[string]any
	s.bearer(t, http.MethodGet, "/api/dead", nil).json(t, &doc)
	if p := doc["poisoned"].([]any); len(p) != 1 || p[0].(map[string]any)["id"] != ids[1].String() {
		t.Fatalf("/api/dead poisoned %v", doc["poisoned"])
	}
	res := s.bearer(t, http.MethodGet, "/api/dead/"+ids[1].String()+"/payload?seq=2", nil)
	if res.status != http.StatusOK || !strings.Contains(res.body, `"size":`) {
		t.Fatalf("payload of a poisoned row: %d %s", res.status, res.body)
	}
	if res := b.action("/dead/purge", map[string][]string{"only": {ids[1].String()}}); res.status != http.StatusSeeOther {
		t.Fatalf("purge: %d", res.status)
	}
	if dead := o.deadIDs(t); len(dead) != 1 || !dead[ids[0]] {
		t.Fatalf("dead rows %v", dead)
	}
	if st := o.stats(t); st.Dead != 1 {
		t.Fatalf("dead %d after purging the poisoned row", st.Dead)
	}
}

// TestPageHeaders checks the security headers, the static files and the
// escaping of filter values.
func TestPageHeaders(t *testing.T) {
	o := newPGOutbox(t)
	s := newTestServer(t, o.store, false)
	b := s.login(t)
	page := b.get(`/?type=%3Cscript%3Ealert(1)%3C/script%3E`)
	if strings.Contains(page.body, "<script>alert(1)") || !strings.Contains(page.body, "&lt;script&gt;alert(1)") {
		t.Fatal("a filter value is not escaped")
	}
	h := page.header
	for k, want := range map[string]string{
		"X-Content-Type-Options": "nosniff",
		"X-Frame-Options":        "DENY",
		"Cache-Control":          "no-store",
		"Referrer-Policy":        "same-origin",
	} {
		if got := h.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if csp := h.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q", csp)
	}
	for path, ct := range map[string]string{"/static/admin.css": "text/css", "/static/admin.js": "text/javascript"} {
		res := do(t, nil, newRequest(t, http.MethodGet, s.ts.URL+path, nil))
		if res.status != http.StatusOK || !strings.HasPrefix(res.header.Get("Content-Type"), ct) || len(res.body) < 500 {
			t.Errorf("%s: status %d, type %q", path, res.status, res.header.Get("Content-Type"))
		}
	}
	if res := do(t, nil, newRequest(t, http.MethodGet, s.ts.URL+"/nothing", nil)); res.status != http.StatusNotFound {
		t.Errorf("unknown path: %d", res.status)
	}
	if res := s.bearer(t, http.MethodDelete, "/api/dead", nil); res.status != http.StatusMethodNotAllowed {
		t.Errorf("DELETE /api/dead: %d", res.status)
	}
}

// noTenants is a store that cannot list its tenants, as SQLite and MariaDB.
type noTenants struct{ Store }

// tenantRowPattern matches one row of the tenants table: its id (or the
// rows without a tenant) and its due rows.
var tenantRowPattern = regexp.MustCompile(`<tr class="tenant-row">\s*<td>(?:<span class="tenant" title="[^"]*">([^<]*)</span>|<span class="muted">– \(no tenant\)</span>)</td>\s*<td class="num">(\d+)</td>`)

// TestDashboardTenants: the overview of a store that lists its tenants
// shows the tenants with due rows, the longest waiting first, their ids
// escaped, to a logged-in browser only, and /api/stats holds them; a store
// that cannot list them shows no table, and null.
func TestDashboardTenants(t *testing.T) {
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	store, err := memstore.New(memstore.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	const evil = `<script>alert("t")</script>`
	for _, b := range []struct {
		tenant string
		n      int
	}{{"acme", 3}, {evil, 1}, {"", 2}} {
		for range b.n {
			m := reliar.NewMsg(testMsg{Type: "orders.placed"})
			m.Metadata.TenantID = b.tenant
			if _, err := store.Enqueue(t.Context(), m); err != nil {
				t.Fatal(err)
			}
		}
		mu.Lock()
		now = now.Add(time.Minute)
		mu.Unlock()
	}
	s := newTestServer(t, store, false)

	if res := do(t, nil, newRequest(t, http.MethodGet, s.ts.URL+"/", nil)); res.status != http.StatusSeeOther || strings.Contains(res.body, "acme") {
		t.Fatalf("before login: status %d, body %q; want a redirect that shows nothing", res.status, res.body)
	}
	page := s.login(t).get("/")
	if page.status != http.StatusOK || !strings.Contains(page.body, `id="tenants-table"`) {
		t.Fatalf("status %d, no tenants table in the overview", page.status)
	}
	var got []string
	for _, m := range tenantRowPattern.FindAllStringSubmatch(page.body, -1) {
		got = append(got, html.UnescapeString(m[1])+"="+m[2])
	}
	if want := []string{"acme=3", evil + "=1", "=2"}; !slices.Equal(got, want) {
		t.Errorf("tenant rows %q, want %q", got, want)
	}
	if strings.Contains(page.body, "<script>alert") || !strings.Contains(page.body, "&lt;script&gt;alert(") {
		t.Error("a tenant id is not escaped")
	}

	var doc struct {
		Tenants []map[string]any `json:"tenants"`
	}
	s.bearer(t, http.MethodGet, "/api/stats", nil).json(t, &doc)
	if len(doc.Tenants) != 3 || doc.Tenants[0]["tenant_id"] != "acme" || doc.Tenants[0]["due"] != 3.0 || doc.Tenants[0]["oldest_due_age_seconds"].(float64) < 180 {
		t.Errorf("/api/stats tenants %v", doc.Tenants)
	}

	for _, c := range []struct {
		name  string
		cfg   Config
		rows  int
		table bool
	}{
		{"one tenant", Config{Store: store, Tenants: 1}, 1, true},
		{"off", Config{Store: store, Tenants: outbox.Off}, 0, false},
		{"a store that cannot list them", Config{Store: noTenants{store}}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Token, c.cfg.Logger = testToken, slog.New(slog.DiscardHandler)
			srv, err := New(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(srv.Handler())
			defer ts.Close()
			ss := &testServer{srv: srv, ts: ts, log: &syncBuffer{}}
			page := ss.login(t).get("/")
			n, table := len(tenantRowPattern.FindAllString(page.body, -1)), strings.Contains(page.body, `id="tenants-table"`)
			if n != c.rows || table != c.table {
				t.Errorf("%d tenant rows, table %v; want %d, %v", n, table, c.rows, c.table)
			}
			var doc map[string]any
			ss.bearer(t, http.MethodGet, "/api/stats", nil).json(t, &doc)
			if v, ok := doc["tenants"]; !ok || (!c.table && v != nil) {
				t.Errorf("/api/stats tenants %v (present %v)", v, ok)
			}
		})
	}

	empty, err := memstore.New()
	if err != nil {
		t.Fatal(err)
	}
	if page := newTestServer(t, empty, false).login(t).get("/"); !strings.Contains(page.body, "No tenant has due rows.") {
		t.Error("an empty store's overview does not say that no tenant has due rows")
	}
}

var newestPage = regexp.MustCompile(`<a href="([^"]+)" id="newest-page">`)

// TestDashboardNewestFirst: from the first page of the oldest first, one
// link jumps to the newest dead letters; the newest-first listing pages
// backwards with its own cursor, keeping the filter, and links back.
func TestDashboardNewestFirst(t *testing.T) {
	o := newPGOutbox(t)
	ids := o.seedDead(t,
		deadSpec{typ: "a", tenant: "t1"}, deadSpec{typ: "a", tenant: "t1"}, deadSpec{typ: "b", tenant: "t1"},
		deadSpec{typ: "a", tenant: "t1"}, deadSpec{typ: "a", tenant: "t1"}, deadSpec{typ: "a", tenant: "t2"},
	)
	s := newTestServer(t, o.store, false)
	b := s.login(t)

	listed := func(body string) []string {
		type at struct {
			id  string
			pos int
		}
		var found []at
		for _, id := range ids {
			if i := strings.Index(body, `data-id="`+id.String()+`"`); i >= 0 {
				found = append(found, at{id.String(), i})
			}
		}
		slices.SortFunc(found, func(x, y at) int { return x.pos - y.pos })
		out := make([]string, len(found))
		for i, f := range found {
			out[i] = f.id
		}
		return out
	}
	first := b.get("/?type=a&tenant=t1&limit=2")
	m := newestPage.FindStringSubmatch(first.body)
	if m == nil {
		t.Fatalf("the oldest-first page has no link to the newest page:\n%s", first.body)
	}
	var seen []string
	path := html.UnescapeString(m[1])
	for i := 0; path != ""; i++ {
		if i > 3 {
			t.Fatal("the pages do not end")
		}
		if !strings.Contains(path, "order=newest") || !strings.Contains(path, "type=a") || !strings.Contains(path, "tenant=t1") || !strings.Contains(path, "limit=2") {
			t.Fatalf("newest-first page %q loses the order or the filter", path)
		}
		page := b.get(path)
		if page.status != http.StatusOK || !strings.Contains(page.body, "newest first") {
			t.Fatalf("%s: status %d, no newest-first caption", path, page.status)
		}
		seen = append(seen, listed(page.body)...)
		path = ""
		if m := nextPage.FindStringSubmatch(page.body); m != nil {
			path = html.UnescapeString(m[1])
			if !strings.Contains(path, "before=") {
				t.Fatalf("next newest-first page %q has no before cursor", path)
			}
		}
	}
	want := idStrings(ids[4], ids[3], ids[1], ids[0])
	if strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Fatalf("newest-first pages listed %v, want %v", seen, want)
	}
	if bad := b.get("/?order=sideways"); !strings.Contains(bad.body, "order must be newest or oldest") {
		t.Errorf("a bad order is not refused")
	}
}
