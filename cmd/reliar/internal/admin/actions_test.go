package admin

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/reliar/reliar"
)

// seedMixed seeds five dead letters: three orders.placed (tenants acme,
// acme, globex) and two invoice.issued (acme, globex), and two scheduled
// rows.
func seedMixed(t *testing.T, o *pgOutbox) []reliar.MessageID {
	t.Helper()
	ids := o.seedDead(t,
		deadSpec{typ: "orders.placed", tenant: "acme", note: "order 1"},
		deadSpec{typ: "orders.placed", tenant: "acme", note: "order 2"},
		deadSpec{typ: "orders.placed", tenant: "globex", note: "order 3"},
		deadSpec{typ: "invoice.issued", tenant: "acme", note: "invoice 1"},
		deadSpec{typ: "invoice.issued", tenant: "globex", note: "invoice 2"},
	)
	o.seedScheduled(t, 2)
	return ids
}

// TestAPIActions retries and purges one, a selection and every row
// matching a filter through the JSON API, and checks the table and the
// audit records.
func TestAPIActions(t *testing.T) {
	tests := []struct {
		name string
		path string
		req  func(ids []reliar.MessageID) ActionRequest
		// left are the indexes of the rows still dead afterwards.
		left      []int
		asked     int64
		done      int64
		scope     string
		retried   bool
		allFilter bool
	}{
		{"retry one", "/api/dead/retry", func(ids []reliar.MessageID) ActionRequest { return ActionRequest{IDs: idStrings(ids[1])} },
			[]int{0, 2, 3, 4}, 1, 1, scopeOne, true, false},
		{"purge one", "/api/dead/purge", func(ids []reliar.MessageID) ActionRequest { return ActionRequest{IDs: idStrings(ids[1])} },
			[]int{0, 2, 3, 4}, 1, 1, scopeOne, false, false},
		{"retry a selection", "/api/dead/retry", func(ids []reliar.MessageID) ActionRequest {
			return ActionRequest{IDs: idStrings(ids[0], ids[3], ids[0])}
		}, []int{1, 2, 4}, 2, 2, scopeSelection, true, false},
		{"purge a selection", "/api/dead/purge", func(ids []reliar.MessageID) ActionRequest {
			return ActionRequest{IDs: idStrings(ids[2], ids[4])}
		}, []int{0, 1, 3}, 2, 2, scopeSelection, false, false},
		{"retry all of a type", "/api/dead/retry", func([]reliar.MessageID) ActionRequest {
			return ActionRequest{AllMatching: true, Type: "orders.placed"}
		}, []int{3, 4}, 3, 3, scopeAllMatching, true, true},
		{"purge all of a type and tenant", "/api/dead/purge", func([]reliar.MessageID) ActionRequest {
			return ActionRequest{AllMatching: true, Type: "orders.placed", Tenant: "acme"}
		}, []int{2, 3, 4}, 2, 2, scopeAllMatching, false, true},
		{"purge all of a tenant", "/api/dead/purge", func([]reliar.MessageID) ActionRequest {
			return ActionRequest{AllMatching: true, Tenant: "globex"}
		}, []int{0, 1, 3}, 2, 2, scopeAllMatching, false, true},
		{"purge everything", "/api/dead/purge", func([]reliar.MessageID) ActionRequest { return ActionRequest{AllMatching: true} },
			nil, 5, 5, scopeAllMatching, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newPGOutbox(t)
			ids := seedMixed(t, o)
			s := newTestServer(t, o.store, false)
			res := s.bearer(t, http.MethodPost, tt.path, tt.req(ids))
			if res.status != http.StatusOK {
				t.Fatalf("status %d, body %q", res.status, res.body)
			}
			var doc ActionDocument
			res.json(t, &doc)
			wantAction := map[bool]string{true: "retry", false: "purge"}[tt.retried]
			if doc.Action != wantAction || doc.Asked != tt.asked || doc.Done != tt.done || doc.AllMatching != tt.allFilter || doc.Batches < 1 || doc.Error != "" {
				t.Fatalf("answer %+v", doc)
			}
			dead := o.deadIDs(t)
			if len(dead) != len(tt.left) {
				t.Fatalf("%d dead rows left, want %d", len(dead), len(tt.left))
			}
			for _, i := range tt.left {
				if !dead[ids[i]] {
					t.Errorf("row %d is no longer dead", i)
				}
			}
			st := o.stats(t)
			wantDue := int64(0)
			if tt.retried {
				wantDue = tt.done
			}
			if st.Due != wantDue || st.Scheduled != 2 || st.Dead != int64(len(tt.left)) {
				t.Errorf("stats %+v: want due %d, scheduled 2, dead %d", st, wantDue, len(tt.left))
			}
			audit := withMessage(s.log.records(t), "admin action")
			if len(audit) != 1 {
				t.Fatalf("%d audit records: %s", len(audit), s.log.String())
			}
			a := audit[0]
			if a["level"] != "INFO" || a["action"] != wantAction || a["scope"] != tt.scope || a["done"] != float64(tt.done) || a["asked"] != float64(tt.asked) || a["auth"] != "bearer" {
				t.Errorf("audit record %v", a)
			}
			for _, note := range []string{"order 1", "order 2", "invoice 1", "note"} {
				if strings.Contains(s.log.String(), note) {
					t.Errorf("the log holds a payload: %s", s.log.String())
				}
			}
		})
	}
}

// TestAPIActionsRefuseBadRequests checks the 400 answers, which change
// nothing.
func TestAPIActionsRefuseBadRequests(t *testing.T) {
	o := newPGOutbox(t)
	ids := seedMixed(t, o)
	s := newTestServer(t, o.store, false)
	many := make([]string, maxIDs+1)
	for i := range many {
		many[i] = ids[0].String()
	}
	tests := []struct {
		name string
		body any
		want string
	}{
		{"neither ids nor all", ActionRequest{}, "select at least one"},
		{"both ids and all", ActionRequest{IDs: idStrings(ids[0]), AllMatching: true}, "not both"},
		{"filter without all", ActionRequest{IDs: idStrings(ids[0]), Type: "orders.placed"}, "all_matching only"},
		{"bad id", ActionRequest{IDs: []string{"not-a-uuid"}}, "bad message id"},
		{"nil id", ActionRequest{IDs: []string{"00000000-0000-0000-0000-000000000000"}}, "nil UUID"},
		{"too many ids", ActionRequest{IDs: many}, "more than"},
		{"unknown field", map[string]any{"idz": []string{ids[0].String()}}, "unknown field"},
		{"not JSON", "retry everything", "body"},
		{"long type", ActionRequest{AllMatching: true, Type: strings.Repeat("t", maxFilterLen+1)}, "at most"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.bearer(t, http.MethodPost, "/api/dead/purge", tt.body)
			var doc errorDocument
			res.json(t, &doc)
			if res.status != http.StatusBadRequest || !strings.Contains(doc.Error, tt.want) {
				t.Fatalf("status %d, error %q; want 400 with %q", res.status, doc.Error, tt.want)
			}
		})
	}
	if n := len(o.deadIDs(t)); n != 5 {
		t.Fatalf("%d dead rows left, want 5", n)
	}
}

// TestAPIActionOnRowsNotDead checks that ids of rows that are not dead are
// counted as asked, not done.
func TestAPIActionOnRowsNotDead(t *testing.T) {
	o := newPGOutbox(t)
	ids := o.seedDead(t, deadSpec{typ: "a"})
	pending := o.enqueue(t, reliar.NewMsg(testMsg{Type: "b"}))
	s := newTestServer(t, o.store, false)
	res := s.bearer(t, http.MethodPost, "/api/dead/retry", ActionRequest{IDs: idStrings(ids[0], pending[0], reliar.NewMessageID())})
	var doc ActionDocument
	res.json(t, &doc)
	if res.status != http.StatusOK || doc.Asked != 3 || doc.Done != 1 {
		t.Fatalf("status %d, %+v", res.status, doc)
	}
}

// TestPageActions drives the dashboard's forms: retry one row, purge a
// selection, and retry and purge every row matching the filter; each
// redirects back to the filtered page, which says what was done.
func TestPageActions(t *testing.T) {
	o := newPGOutbox(t)
	ids := seedMixed(t, o)
	s := newTestServer(t, o.store, false)
	b := s.login(t)

	res := b.action("/dead/retry", url.Values{"only": {ids[0].String()}, "id": {ids[1].String()}, "type": {"orders.placed"}, "limit": {"50"}})
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/?type=orders.placed" {
		t.Fatalf("retry one: status %d, location %q", res.status, res.header.Get("Location"))
	}
	page := b.get(res.header.Get("Location"))
	if !strings.Contains(page.body, "Retried 1 of 1 dead letter.") || strings.Contains(page.body, ids[0].String()) || !strings.Contains(page.body, ids[1].String()) {
		t.Fatalf("page after retry one: %s", page.body)
	}
	if again := b.get("/?type=orders.placed"); strings.Contains(again.body, "Retried 1") {
		t.Fatal("the message is shown twice")
	}

	res = b.action("/dead/purge", url.Values{"id": idStrings(ids[1], ids[2], ids[0])})
	if res.status != http.StatusSeeOther {
		t.Fatalf("purge selection: status %d", res.status)
	}
	page = b.get(res.header.Get("Location"))
	if !strings.Contains(page.body, "Purged 2 of 3 dead letters. The others were no longer dead.") {
		t.Fatalf("page after purge selection lacks the summary")
	}

	res = b.action("/dead/retry", url.Values{"scope": {"all"}, "tenant": {"globex"}, "after": {"99"}})
	if loc := res.header.Get("Location"); res.status != http.StatusSeeOther || loc != "/?tenant=globex" {
		t.Fatalf("retry all matching: status %d, location %q", res.status, loc)
	}
	if page = b.get("/?tenant=globex"); !strings.Contains(page.body, "Retried 1 of 1 dead letter.") {
		t.Fatal("page after retry all matching lacks the summary")
	}

	res = b.action("/dead/purge", url.Values{"scope": {"all"}})
	if page = b.get(res.header.Get("Location")); !strings.Contains(page.body, "Purged 1 of 1 dead letter.") || !strings.Contains(page.body, "No dead letters.") {
		t.Fatal("page after purge all lacks the summary or still lists rows")
	}

	res = b.action("/dead/retry", url.Values{"scope": {"selected"}})
	if page = b.get(res.header.Get("Location")); !strings.Contains(page.body, "select at least one dead letter") || !strings.Contains(page.body, `class="flash error"`) {
		t.Fatal("an empty selection is not reported as an error")
	}

	if dead := o.deadIDs(t); len(dead) != 0 {
		t.Fatalf("dead rows left: %v", dead)
	}
	st := o.stats(t)
	if st.Due != 2 || st.Scheduled != 2 {
		t.Fatalf("stats %+v; want the two retried rows due", st)
	}
	audit := withMessage(s.log.records(t), "admin action")
	scopes := []string{}
	for _, a := range audit {
		if a["auth"] != "session" {
			t.Errorf("audit record %v", a)
		}
		scopes = append(scopes, a["action"].(string)+" "+a["scope"].(string))
	}
	if got := strings.Join(scopes, ", "); got != "retry one, purge selection, retry all_matching, purge all_matching" {
		t.Fatalf("audited %s", got)
	}
}

// TestReadOnly checks that a read-only server shows everything, hides the
// buttons, and refuses every write with 403.
func TestReadOnly(t *testing.T) {
	o := newPGOutbox(t)
	ids := seedMixed(t, o)
	s := newTestServer(t, o.store, true)
	b := s.login(t)

	page := b.get("/")
	if page.status != http.StatusOK || !strings.Contains(page.body, ids[0].String()) || !strings.Contains(page.body, "read-only") {
		t.Fatalf("read-only dashboard: status %d", page.status)
	}
	for _, hidden := range []string{"Retry selected", "Purge all matching", `class="retry-one"`, `class="row-select"`, `formaction="/dead/purge"`} {
		if strings.Contains(page.body, hidden) {
			t.Errorf("read-only dashboard shows %q", hidden)
		}
	}
	if res := s.bearer(t, http.MethodGet, "/api/dead", nil); res.status != http.StatusOK {
		t.Fatalf("read-only list: %d", res.status)
	}
	for _, path := range []string{"/api/dead/retry", "/api/dead/purge"} {
		for _, body := range []ActionRequest{{IDs: idStrings(ids[0])}, {AllMatching: true}} {
			if res := s.bearer(t, http.MethodPost, path, body); res.status != http.StatusForbidden {
				t.Fatalf("%s %+v: status %d", path, body, res.status)
			}
		}
	}
	for _, path := range []string{"/dead/retry", "/dead/purge"} {
		if res := b.action(path, url.Values{"only": {ids[0].String()}}); res.status != http.StatusForbidden {
			t.Fatalf("%s form: status %d", path, res.status)
		}
	}
	if res := b.action("/logout", url.Values{}); res.status != http.StatusSeeOther {
		t.Fatalf("logout is not a write: status %d", res.status)
	}
	if n := len(o.deadIDs(t)); n != 5 {
		t.Fatalf("%d dead rows left, want 5", n)
	}
	if n := len(withMessage(s.log.records(t), "admin request refused: read-only")); n != 6 {
		t.Fatalf("%d read-only refusals logged, want 6", n)
	}
}
