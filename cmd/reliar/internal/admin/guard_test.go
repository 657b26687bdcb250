package admin

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// hammer sends n requests at once from this test's address, each made by
// req, and returns their answers.
func hammer(t *testing.T, n int, req func() *http.Request) []response {
	t.Helper()
	out := make([]response, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range n {
		sem <- struct{}{}
		r := req()
		wg.Go(func() {
			defer func() { <-sem }()
			out[i] = do(t, nil, r)
		})
	}
	wg.Wait()
	return out
}

// checkLimited checks a burst of failed credentials: at most ten refused
// with 401, every other one with 429 and a Retry-After of at most a
// minute, and one record of the burst in the log.
func checkLimited(t *testing.T, s *testServer, res []response, refused int) {
	t.Helper()
	var unauthorized, limited int
	for _, r := range res {
		switch r.status {
		case refused:
			unauthorized++
		case http.StatusTooManyRequests:
			limited++
			secs, err := strconv.Atoi(r.header.Get("Retry-After"))
			if err != nil || secs < 1 || secs > 60 {
				t.Fatalf("429 with Retry-After %q", r.header.Get("Retry-After"))
			}
		default:
			t.Fatalf("status %d, body %q", r.status, r.body)
		}
	}
	if unauthorized > maxFailures || limited < len(res)-maxFailures {
		t.Fatalf("%d refused with %d and %d limited of %d; want at most %d refused before the limit", unauthorized, refused, limited, len(res), maxFailures)
	}
	if n := len(withMessage(s.log.records(t), burstMessage)); n != 1 {
		t.Fatalf("the burst is logged %d times, want once:\n%s", n, s.log.String())
	}
	if n := len(s.log.records(t)); n > maxFailures+2 {
		t.Fatalf("%d log records for one burst:\n%s", n, s.log.String())
	}
}

// TestWrongBearerTokensRateLimited sends 3,000 wrong bearer tokens as fast
// as it can: after ten, the address gets 429 with Retry-After, even with
// the right token, and the burst is logged once.
func TestWrongBearerTokensRateLimited(t *testing.T) {
	o := newPGOutbox(t)
	s := newTestServer(t, o.store, false)
	res := hammer(t, 3000, func() *http.Request {
		req := newRequest(t, http.MethodGet, s.ts.URL+"/api/stats", nil)
		req.Header.Set("Authorization", "Bearer wrong-token-guess-000000")
		return req
	})
	checkLimited(t, s, res, http.StatusUnauthorized)
	if r := s.bearer(t, http.MethodGet, "/api/stats", nil); r.status != http.StatusTooManyRequests {
		t.Fatalf("the right token during the block: status %d, want 429", r.status)
	}
	// A minute later the address may try again.
	s.srv.guard.advance(time.Minute + time.Second)
	if r := s.bearer(t, http.MethodGet, "/api/stats", nil); r.status != http.StatusOK {
		t.Fatalf("the right token a minute later: status %d", r.status)
	}
}

// TestWrongLoginsRateLimited posts wrong tokens to the login form: after
// ten, 429 with Retry-After and the form says to wait.
func TestWrongLoginsRateLimited(t *testing.T) {
	o := newPGOutbox(t)
	s := newTestServer(t, o.store, false)
	b := &browserSession{t: t, s: s, client: &http.Client{}}
	var res []response
	for range 40 {
		res = append(res, b.form("/login", url.Values{"token": {"wrong-token-guess-000000"}}, nil))
	}
	checkLimited(t, s, res, http.StatusUnauthorized)
	last := res[len(res)-1]
	if !strings.Contains(last.body, "Too many failed attempts") || strings.Contains(last.body, "Set-Cookie") {
		t.Fatalf("429 page %q", last.body)
	}
	if r := b.form("/login", url.Values{"token": {testToken}}, nil); r.status != http.StatusTooManyRequests {
		t.Fatalf("the right token during the block: status %d, want 429", r.status)
	}
}

// TestSuccessfulLoginsUnaffected: an operator who logs in again and again,
// and uses the API with the right token, never meets the limit.
func TestSuccessfulLoginsUnaffected(t *testing.T) {
	o := newPGOutbox(t)
	s := newTestServer(t, o.store, false)
	for range 3 * maxFailures {
		s.login(t)
		if r := s.bearer(t, http.MethodGet, "/api/stats", nil); r.status != http.StatusOK {
			t.Fatalf("status %d", r.status)
		}
	}
	// Failures below the limit do not block either.
	for range maxFailures - 1 {
		req := newRequest(t, http.MethodGet, s.ts.URL+"/api/stats", nil)
		req.Header.Set("Authorization", "Bearer wrong-token-guess-000000")
		if r := do(t, nil, req); r.status != http.StatusUnauthorized {
			t.Fatalf("status %d", r.status)
		}
	}
	s.login(t)
	if n := len(withMessage(s.log.records(t), burstMessage)); n != 0 {
		t.Fatalf("burst logged without a burst")
	}
}

// TestGuardPerAddressAndBounded: one address's failures do not block
// another (an IPv6 /64 counts as one address), and the table of addresses
// stays bounded whatever the number of addresses.
func TestGuardPerAddressAndBounded(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	g := newGuard(maxFailures, time.Minute, 100, func() time.Time { return now })
	for range maxFailures {
		g.fail("192.0.2.1:1000")
	}
	if _, blocked := g.blocked("192.0.2.1:2000"); !blocked {
		t.Fatal("the address is not blocked after ten failures")
	}
	if _, blocked := g.blocked("192.0.2.2:1000"); blocked {
		t.Fatal("another address is blocked")
	}
	for range maxFailures {
		g.fail("[2001:db8:1:2::1]:1")
	}
	if _, blocked := g.blocked("[2001:db8:1:2:ffff::9]:1"); !blocked {
		t.Fatal("another address of the same /64 is not blocked")
	}
	if _, blocked := g.blocked("[2001:db8:1:3::1]:1"); blocked {
		t.Fatal("another /64 is blocked")
	}
	for i := range 10000 {
		g.fail("198.51.100." + strconv.Itoa(i%250) + ":" + strconv.Itoa(i))
		g.fail("[2001:db8:" + strconv.FormatInt(int64(i), 16) + "::1]:1")
		if len(g.m) > 100 {
			t.Fatalf("%d addresses kept, over the cap of 100", len(g.m))
		}
	}
	now = now.Add(2 * time.Minute)
	if _, blocked := g.blocked("192.0.2.1:1"); blocked {
		t.Fatal("blocked after the window")
	}
}

// TestLoginPageShowsNothingAboutTheInstallation loads the login form in a
// real browser, and over plain HTTP every page an unauthenticated visitor
// can reach: none names the database, its host, the schema or a version.
func TestLoginPageShowsNothingAboutTheInstallation(t *testing.T) {
	o := newPGOutbox(t)
	log := &syncBuffer{}
	srv, err := New(Config{Store: o.store, Token: testToken, Logger: newJSONLogger(log),
		Database: `postgres 127.0.0.1:5432/test schema "` + o.schema + `"`})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	secrets := []string{"127.0.0.1:5432", o.schema, "postgres", "reliar_"}
	check := func(where, body string) {
		t.Helper()
		for _, s := range secrets {
			if strings.Contains(strings.ToLower(body), strings.ToLower(s)) {
				t.Errorf("%s shows %q:\n%s", where, s, body)
			}
		}
	}
	for _, path := range []string{"/login", "/", "/api/stats", "/api/dead", "/static/", "/nothing"} {
		res := do(t, nil, newRequest(t, http.MethodGet, ts.URL+path, nil))
		check(path, res.body)
	}
	b := &browserSession{t: t, s: &testServer{srv: srv, ts: ts, log: log}, client: &http.Client{}}
	check("a refused login", b.form("/login", url.Values{"token": {"wrong"}}, nil).body)

	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(ts.URL+"/login"), chromedp.WaitVisible(chromedp.CSS("#token"))); err != nil {
		t.Fatal(err)
	}
	html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html")))
	if err != nil {
		t.Fatal(err)
	}
	check("the login page in the browser", html)
}

// TestStaticNeverListsDirectories: the static files are served, and no
// directory under /static/ is ever listed.
func TestStaticNeverListsDirectories(t *testing.T) {
	o := newPGOutbox(t)
	s := newTestServer(t, o.store, false)
	for _, path := range []string{"/static/", "/static/.", "/static/./", "/static//", "/static/%2e/", "/static/admin.css/", "/static/..%2f"} {
		// Follow the redirects of the path cleaning to the end.
		resp, err := http.Get(s.ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		res := response{status: resp.StatusCode, body: string(body)}
		if res.status != http.StatusNotFound || strings.Contains(res.body, "admin.css") || strings.Contains(res.body, "<a href") {
			t.Errorf("%s: status %d, body %q", path, res.status, res.body)
		}
	}
	if res := do(t, nil, newRequest(t, http.MethodGet, s.ts.URL+"/static/admin.css", nil)); res.status != http.StatusOK {
		t.Errorf("/static/admin.css: %d", res.status)
	}
}
