package admin

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
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
