package admin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/store/pgstore"
)

// postgresURL is the PostgreSQL server the tests use; they fail without it.
const postgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// testToken is the access token of the test servers.
const testToken = "test-token-0123456789abcdef"

// pgOutbox is a migrated outbox table in a fresh PostgreSQL schema, dropped
// after the test.
type pgOutbox struct {
	pool   *pgxpool.Pool
	store  *pgstore.Store
	schema string
}

func newPGOutbox(t *testing.T) *pgOutbox {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, postgresURL)
	if err != nil {
		t.Fatalf("PostgreSQL at %s is required: %v", postgresURL, err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	schema := "reliar_admin_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		if _, err := pool.Exec(context.Background(), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
		pool.Close()
	})
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(schema)); err != nil {
		t.Fatalf("PostgreSQL at %s is required: migrate: %v", postgresURL, err)
	}
	store, err := pgstore.New(ctx, pool, pgstore.WithSchema(schema), pgstore.WithLogger(slog.New(slog.DiscardHandler)), pgstore.WithoutNotify())
	if err != nil {
		t.Fatal(err)
	}
	return &pgOutbox{pool: pool, store: store, schema: schema}
}

// testMsg is the body of the messages the tests enqueue.
type testMsg struct {
	Type string `json:"-"`
	Note string `json:"note"`
}

func (m testMsg) MessageType() string { return m.Type }

// deadSpec describes a dead letter to seed.
type deadSpec struct {
	typ, tenant, note, err string
}

// enqueue writes msgs in one transaction.
func (o *pgOutbox) enqueue(t *testing.T, msgs ...reliar.Outgoing) []reliar.MessageID {
	t.Helper()
	ctx := context.Background()
	tx, err := o.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	ids, err := o.store.Enqueue(ctx, tx, msgs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return ids
}

// seedDead enqueues one message per spec, claims them and fails them for
// good, so that they go dead with reason permanent. It returns their ids in
// order. Other due rows the claim picks up are released untouched.
func (o *pgOutbox) seedDead(t *testing.T, specs ...deadSpec) []reliar.MessageID {
	t.Helper()
	ctx := context.Background()
	msgs := make([]reliar.Outgoing, len(specs))
	errText := map[reliar.MessageID]string{}
	for i, s := range specs {
		m := reliar.NewMsg(testMsg{Type: s.typ, Note: s.note})
		m.Metadata.TenantID = s.tenant
		msgs[i] = m
		errText[m.ID] = s.err
		if s.err == "" {
			errText[m.ID] = "broker said no"
		}
	}
	ids := o.enqueue(t, msgs...)
	batch, err := o.store.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "seed", BatchSize: 1000, Lease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	var fail []outboxdriver.FailedOutcome
	var release []outboxdriver.Lease
	for _, r := range batch.Records {
		if e, ok := errText[r.Envelope.ID]; ok {
			fail = append(fail, outboxdriver.FailedOutcome{Lease: r.Lease(), Error: e, DeadReason: outbox.DeadPermanent})
		} else {
			release = append(release, r.Lease())
		}
	}
	if n, err := o.store.Fail(ctx, fail); err != nil || n != int64(len(specs)) {
		t.Fatalf("fail %d seeded rows: %d, %v", len(specs), n, err)
	}
	if _, err := o.store.Release(ctx, release); err != nil {
		t.Fatal(err)
	}
	return ids
}

// seedScheduled enqueues n messages due in an hour.
func (o *pgOutbox) seedScheduled(t *testing.T, n int) {
	t.Helper()
	msgs := make([]reliar.Outgoing, n)
	for i := range msgs {
		m := reliar.NewMsg(testMsg{Type: "orders.later", Note: "later"})
		m.AvailableAt = time.Now().Add(time.Hour)
		msgs[i] = m
	}
	o.enqueue(t, msgs...)
}

// deadIDs lists the ids of every dead row.
func (o *pgOutbox) deadIDs(t *testing.T) map[reliar.MessageID]bool {
	t.Helper()
	page, err := o.store.ListDead(context.Background(), outbox.DeadQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[reliar.MessageID]bool{}
	for _, r := range page.Records {
		out[r.Envelope.ID] = true
	}
	return out
}

// stats reads the gauges.
func (o *pgOutbox) stats(t *testing.T) outbox.Stats {
	t.Helper()
	st, err := o.store.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// records parses the JSON log records written so far.
func (s *syncBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(s.String()), "\n") {
		if line == "" {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, rec)
	}
	return out
}

// withMessage returns the records whose msg is msg.
func withMessage(recs []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, r := range recs {
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// testServer is an admin server on a real HTTP listener, and its log.
type testServer struct {
	srv *Server
	ts  *httptest.Server
	log *syncBuffer
}

// newTestServer serves store's admin page for the test.
func newTestServer(t *testing.T, store Store, readOnly bool) *testServer {
	t.Helper()
	log := &syncBuffer{}
	srv, err := New(Config{
		Store:    store,
		Token:    testToken,
		ReadOnly: readOnly,
		Logger:   slog.New(slog.NewJSONHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo})),
		Database: "postgres test",
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return &testServer{srv: srv, ts: ts, log: log}
}

// response is a read answer.
type response struct {
	status int
	header http.Header
	body   string
}

// json decodes the body into v.
func (r response) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("status %d, body %q: %v", r.status, r.body, err)
	}
}

// do sends a request and reads the answer, never following redirects.
func do(t *testing.T, client *http.Client, req *http.Request) response {
	t.Helper()
	if client == nil {
		client = &http.Client{}
	}
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: res.StatusCode, header: res.Header, body: string(body)}
}

// newRequest builds a request; a non-nil body is sent as JSON.
func newRequest(t *testing.T, method, url string, body any) *http.Request {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// bearer sends an API request with the token.
func (s *testServer) bearer(t *testing.T, method, path string, body any) response {
	t.Helper()
	req := newRequest(t, method, s.ts.URL+path, body)
	req.Header.Set("Authorization", "Bearer "+testToken)
	return do(t, nil, req)
}

// browserSession is a logged-in browser: a cookie jar and the page's anti-forgery
// token.
type browserSession struct {
	t      *testing.T
	s      *testServer
	client *http.Client
	csrf   string
}

var csrfInput = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// login logs in through the form, as a browser does.
func (s *testServer) login(t *testing.T) *browserSession {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &browserSession{t: t, s: s, client: &http.Client{Jar: jar}}
	res := b.form("/login", url.Values{"token": {testToken}}, nil)
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/" {
		t.Fatalf("login: status %d, location %q, body %q", res.status, res.header.Get("Location"), res.body)
	}
	page := b.get("/")
	m := csrfInput.FindStringSubmatch(page.body)
	if page.status != http.StatusOK || m == nil {
		t.Fatalf("dashboard after login: status %d, no anti-forgery token in %q", page.status, page.body)
	}
	b.csrf = m[1]
	return b
}

// get loads a page with the session's cookie.
func (b *browserSession) get(path string) response {
	b.t.Helper()
	return do(b.t, b.client, newRequest(b.t, http.MethodGet, b.s.ts.URL+path, nil))
}

// form posts a form from this server's page (Origin set) with extra
// headers; an empty header value removes it.
func (b *browserSession) form(path string, v url.Values, headers map[string]string) response {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.s.ts.URL+path, strings.NewReader(v.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.s.ts.URL)
	for k, val := range headers {
		if val == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, val)
		}
	}
	return do(b.t, b.client, req)
}

// action posts the dashboard's action form with the session's token.
func (b *browserSession) action(path string, v url.Values) response {
	b.t.Helper()
	v.Set(csrfField, b.csrf)
	return b.form(path, v, nil)
}

// ids returns the ids as strings.
func idStrings(ids ...reliar.MessageID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}

// deadQueryAll selects every dead row, up to the store's cap.
func deadQueryAll() outbox.DeadQuery { return outbox.DeadQuery{Limit: 1000} }

// itoa formats a sequence number.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// newJSONLogger logs JSON records at info into w.
func newJSONLogger(w *syncBuffer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
