package admin

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// keys returns the sorted keys of a JSON object.
func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestAPIShapes checks the keys of every JSON document the API answers
// with, and the values of the gauges and dead letters.
func TestAPIShapes(t *testing.T) {
	o := newPGOutbox(t)
	ids := seedMixed(t, o)
	s := newTestServer(t, o.store, false)
	for range 2 {
		if err := s.srv.sampleOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
	}

	var stats map[string]any
	res := s.bearer(t, http.MethodGet, "/api/stats", nil)
	res.json(t, &stats)
	want := []string{"as_of", "dead", "drain_per_minute", "due", "expired_pending", "history", "leased", "oldest_due_age_seconds", "pending", "published_per_minute", "scheduled", "tenants"}
	if got := keys(stats); !slices.Equal(got, want) {
		t.Fatalf("/api/stats keys %v, want %v", got, want)
	}
	if stats["dead"] != 5.0 || stats["scheduled"] != 2.0 || stats["pending"] != 2.0 || stats["due"] != 0.0 {
		t.Errorf("/api/stats %v", stats)
	}
	hist := stats["history"].([]any)
	if len(hist) != 2 {
		t.Fatalf("history %v, want the 2 samples", hist)
	}
	if got := keys(hist[0].(map[string]any)); !slices.Equal(got, []string{"at", "dead", "due", "pending"}) {
		t.Errorf("history point keys %v", got)
	}
	if res.header.Get("Cache-Control") != "no-store" || !strings.HasPrefix(res.header.Get("Content-Type"), "application/json") {
		t.Errorf("headers %v", res.header)
	}

	var dead map[string]any
	s.bearer(t, http.MethodGet, "/api/dead?type=orders.placed&limit=2", nil).json(t, &dead)
	if got := keys(dead); !slices.Equal(got, []string{"next_after_sequence", "poisoned", "records"}) {
		t.Fatalf("/api/dead keys %v", got)
	}
	recs := dead["records"].([]any)
	if len(recs) != 2 || dead["next_after_sequence"] == nil {
		t.Fatalf("/api/dead first page %v", dead)
	}
	first := recs[0].(map[string]any)
	if got := keys(first); !slices.Equal(got, []string{"attempts", "dead_at", "dead_reason", "id", "last_error", "message_type", "payload_size", "sequence", "tenant_id"}) {
		t.Fatalf("dead record keys %v", got)
	}
	if first["id"] != ids[0].String() || first["tenant_id"] != "acme" || first["dead_reason"] != "permanent" || first["attempts"] != 1.0 || first["last_error"] != "broker said no" {
		t.Errorf("dead record %v", first)
	}
	// The cursor leads to the third orders.placed row, and the end.
	var next map[string]any
	s.bearer(t, http.MethodGet, "/api/dead?type=orders.placed&limit=2&after="+itoa(int64(dead["next_after_sequence"].(float64))), nil).json(t, &next)
	if recs := next["records"].([]any); len(recs) != 1 || recs[0].(map[string]any)["id"] != ids[2].String() || next["next_after_sequence"] != nil {
		t.Fatalf("/api/dead second page %v", next)
	}
	// Newest first: the third orders.placed row, then the second, with
	// the before cursor.
	var newest map[string]any
	s.bearer(t, http.MethodGet, "/api/dead?type=orders.placed&limit=2&order=newest", nil).json(t, &newest)
	if recs := newest["records"].([]any); len(recs) != 2 || recs[0].(map[string]any)["id"] != ids[2].String() ||
		recs[1].(map[string]any)["id"] != ids[1].String() || newest["next_before_sequence"] == nil || newest["next_after_sequence"] != nil {
		t.Fatalf("/api/dead?order=newest %v", newest)
	}
	var tenant map[string]any
	s.bearer(t, http.MethodGet, "/api/dead?tenant=globex", nil).json(t, &tenant)
	if recs := tenant["records"].([]any); len(recs) != 2 {
		t.Fatalf("/api/dead?tenant=globex %v", tenant)
	}
	var empty map[string]any
	s.bearer(t, http.MethodGet, "/api/dead?type=nothing", nil).json(t, &empty)
	if recs, ok := empty["records"].([]any); !ok || len(recs) != 0 {
		t.Fatalf("an empty page must hold [] records: %v", empty)
	}

	var action map[string]any
	s.bearer(t, http.MethodPost, "/api/dead/retry", ActionRequest{IDs: idStrings(ids[0])}).json(t, &action)
	if got := keys(action); !slices.Equal(got, []string{"action", "all_matching", "asked", "batches", "done"}) {
		t.Fatalf("action keys %v", got)
	}
}

// TestAPIDeadBadQuery checks the 400 answers of /api/dead.
func TestAPIDeadBadQuery(t *testing.T) {
	o := newPGOutbox(t)
	s := newTestServer(t, o.store, false)
	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "after=-1", "after=x", "type=" + strings.Repeat("t", maxFilterLen+1), "tenant=%ff"} {
		if res := s.bearer(t, http.MethodGet, "/api/dead?"+q, nil); res.status != http.StatusBadRequest {
			t.Errorf("?%s: status %d", q, res.status)
		}
	}
}

// TestPayload checks that a payload comes only from its own endpoint, for a
// dead row named by id and sequence, and that viewing it is audited without
// the payload.
func TestPayload(t *testing.T) {
	o := newPGOutbox(t)
	ids := o.seedDead(t, deadSpec{typ: "orders.placed", note: "secret <b>order</b>"}, deadSpec{typ: "orders.placed", note: "second"})
	pending := o.enqueue(t, reliar.NewMsg(testMsg{Type: "orders.placed", Note: "pending"}))
	s := newTestServer(t, o.store, false)
	page, err := o.store.ListDead(t.Context(), deadQueryAll())
	if err != nil {
		t.Fatal(err)
	}
	seq0, seq1 := page.Records[0].Envelope.Sequence, page.Records[1].Envelope.Sequence

	res := s.bearer(t, http.MethodGet, "/api/dead/"+ids[0].String()+"/payload?seq="+itoa(seq0), nil)
	var doc map[string]any
	res.json(t, &doc)
	if res.status != http.StatusOK {
		t.Fatalf("status %d, %v", res.status, doc)
	}
	if got := keys(doc); !slices.Equal(got, []string{"content_type", "cut", "encoding", "id", "message_type", "payload", "sequence", "shown", "size"}) {
		t.Fatalf("payload keys %v", got)
	}
	if !strings.Contains(doc["payload"].(string), "secret") || doc["encoding"] != "utf-8" || doc["content_type"] != "application/json" ||
		doc["id"] != ids[0].String() || doc["cut"] != false || doc["size"] != doc["shown"] || doc["size"].(float64) != float64(page.Records[0].PayloadSize) {
		t.Fatalf("payload %v", doc)
	}
	viewed := withMessage(s.log.records(t), "admin payload viewed")
	if len(viewed) != 1 || viewed[0]["id"] != ids[0].String() || strings.Contains(s.log.String(), "secret") {
		t.Fatalf("audit of the view: %s", s.log.String())
	}

	// max_bytes cuts what is shown, and says so.
	res = s.bearer(t, http.MethodGet, "/api/dead/"+ids[0].String()+"/payload?seq="+itoa(seq0)+"&max_bytes=5", nil)
	var cut PayloadDocument
	res.json(t, &cut)
	if res.status != http.StatusOK || !cut.Cut || cut.Shown != 5 || len(cut.Payload) != 5 || cut.Size != page.Records[0].PayloadSize {
		t.Fatalf("max_bytes=5: status %d, %+v", res.status, cut)
	}
	// Listings never carry payloads.
	for _, path := range []string{"/api/dead", "/api/stats"} {
		if body := s.bearer(t, http.MethodGet, path, nil).body; strings.Contains(body, "secret") {
			t.Errorf("%s holds a payload", path)
		}
	}
	b := s.login(t)
	if body := b.get("/").body; strings.Contains(body, "secret") {
		t.Error("the dashboard holds a payload")
	}

	tests := []struct {
		name, path string
		want       int
	}{
		{"wrong sequence", "/api/dead/" + ids[0].String() + "/payload?seq=" + itoa(seq1), http.StatusNotFound},
		{"unknown id", "/api/dead/" + reliar.NewMessageID().String() + "/payload?seq=" + itoa(seq0), http.StatusNotFound},
		{"pending row", "/api/dead/" + pending[0].String() + "/payload?seq=" + itoa(seq1+1), http.StatusNotFound},
		{"no sequence", "/api/dead/" + ids[0].String() + "/payload", http.StatusBadRequest},
		{"bad sequence", "/api/dead/" + ids[0].String() + "/payload?seq=0", http.StatusBadRequest},
		{"bad id", "/api/dead/nope/payload?seq=1", http.StatusBadRequest},
		{"negative max_bytes", "/api/dead/" + ids[0].String() + "/payload?seq=" + itoa(seq0) + "&max_bytes=-1", http.StatusBadRequest},
		{"max_bytes over the cap", "/api/dead/" + ids[0].String() + "/payload?seq=" + itoa(seq0) + "&max_bytes=99999999", http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if res := s.bearer(t, http.MethodGet, tt.path, nil); res.status != tt.want {
				t.Fatalf("status %d, want %d: %s", res.status, tt.want, res.body)
			}
		})
	}
}

func TestNewPayloadDocument(t *testing.T) {
	p := outboxdriver.DeadPayload{ID: reliar.NewMessageID(), MessageType: "bin", ContentType: "application/octet-stream", Payload: []byte{0xff, 0x00, 0x01}, Size: 3, Sequence: 7}
	doc := newPayloadDocument(p)
	raw, err := base64.StdEncoding.DecodeString(doc.Payload)
	if err != nil || doc.Encoding != "base64" || string(raw) != string(p.Payload) || doc.Size != 3 || doc.Shown != 3 || doc.Sequence != 7 {
		t.Fatalf("binary payload %+v", doc)
	}
	p.Payload, p.Size = []byte("héllo"), 6
	if doc := newPayloadDocument(p); doc.Encoding != "utf-8" || doc.Payload != "héllo" || doc.Size != 6 || doc.Cut {
		t.Fatalf("text payload %+v", doc)
	}
	// A cut in the middle of a character still shows text.
	p.Payload, p.Size, p.Cut = []byte("hé")[:2], 6, true
	if doc := newPayloadDocument(p); doc.Encoding != "utf-8" || doc.Payload != "h" || doc.Shown != 1 || !doc.Cut {
		t.Fatalf("cut text payload %+v", doc)
	}
}

// downStore is a store whose every call fails.
type downStore struct{}

var errDown = errors.New("connection refused")

func (downStore) Stats(context.Context) (outbox.Stats, error) { return outbox.Stats{}, errDown }
func (downStore) ListDead(context.Context, outbox.DeadQuery) (outbox.DeadLetterPage, error) {
	return outbox.DeadLetterPage{}, errDown
}
func (downStore) DeadPayload(context.Context, reliar.MessageID, int) (outboxdriver.DeadPayload, error) {
	return outboxdriver.DeadPayload{}, errDown
}
func (downStore) RetryDead(context.Context, []reliar.MessageID) (int64, error) { return 0, errDown }
func (downStore) PurgeDead(context.Context, []reliar.MessageID) (int64, error) { return 0, errDown }

// TestStoreDown checks that the page and the API say the store cannot be
// read (503), and that a failed action says so (500) and is logged.
func TestStoreDown(t *testing.T) {
	s := newTestServer(t, downStore{}, false)
	for _, path := range []string{"/api/stats", "/api/dead", "/api/dead/" + reliar.NewMessageID().String() + "/payload?seq=3"} {
		res := s.bearer(t, http.MethodGet, path, nil)
		var doc errorDocument
		res.json(t, &doc)
		if res.status != http.StatusServiceUnavailable || !strings.Contains(doc.Error, "connection refused") {
			t.Errorf("%s: status %d, %q", path, res.status, doc.Error)
		}
	}
	res := s.bearer(t, http.MethodPost, "/api/dead/retry", ActionRequest{AllMatching: true})
	var doc ActionDocument
	res.json(t, &doc)
	if res.status != http.StatusInternalServerError || !strings.Contains(doc.Error, "connection refused") || doc.Action != "retry" {
		t.Fatalf("failed action: status %d, %+v", res.status, doc)
	}
	if n := len(withMessage(s.log.records(t), "admin action failed")); n != 1 {
		t.Fatalf("%d failed actions logged", n)
	}

	b := &browserSession{t: t, s: s, client: &http.Client{}}
	login := b.form("/login", url.Values{"token": {testToken}}, nil)
	cookie := (&http.Response{Header: login.header}).Cookies()
	if len(cookie) != 1 {
		t.Fatalf("login: %d %v", login.status, login.header)
	}
	req := newRequest(t, http.MethodGet, s.ts.URL+"/", nil)
	req.AddCookie(cookie[0])
	page := do(t, nil, req)
	if page.status != http.StatusServiceUnavailable || !strings.Contains(page.body, "The outbox cannot be read") {
		t.Fatalf("dashboard: status %d", page.status)
	}

	// A failed action from the page says what happened on the next page.
	m := csrfInput.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatal("no anti-forgery token on the page")
	}
	form := newRequest(t, http.MethodPost, s.ts.URL+"/dead/purge", nil)
	form.Body = io.NopCloser(strings.NewReader(url.Values{"scope": {"all"}, csrfField: {m[1]}}.Encode()))
	form.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	form.AddCookie(cookie[0])
	if res := do(t, nil, form); res.status != http.StatusSeeOther {
		t.Fatalf("purge all: status %d, %s", res.status, res.body)
	}
	page = do(t, nil, req)
	if !strings.Contains(page.body, "Purged 0 of 0 dead letters. Then it failed:") || !strings.Contains(page.body, "connection refused") {
		t.Fatalf("the failure is not shown: %s", page.body)
	}
}

func TestActionStatus(t *testing.T) {
	tests := []struct {
		err  error
		want int
	}{
		{fmt.Errorf("x: %w", ErrBadRequest), http.StatusBadRequest},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), http.StatusGatewayTimeout},
		{errDown, http.StatusInternalServerError},
	}
	for _, tt := range tests {
		if got := actionStatus(tt.err); got != tt.want {
			t.Errorf("actionStatus(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}
