package admin

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestAPIRequiresToken checks that every API endpoint answers 401 without
// the token, with a wrong one, or with another scheme, and serves the right
// one. (Past ten failures a minute from one address, the answer is 429:
// TestWrongBearerTokensRateLimited.)
func TestAPIRequiresToken(t *testing.T) {
	o := newPGOutbox(t)
	ids := o.seedDead(t, deadSpec{typ: "orders.placed", note: "n"})
	page, err := o.store.ListDead(t.Context(), deadQueryAll())
	if err != nil {
		t.Fatal(err)
	}
	payload := "/api/dead/" + ids[0].String() + "/payload?seq=" + itoa(page.Records[0].Envelope.Sequence)
	endpoints := []struct {
		method, path string
		body         any
		ok           int
	}{
		{http.MethodGet, "/api/stats", nil, http.StatusOK},
		{http.MethodGet, "/api/dead", nil, http.StatusOK},
		{http.MethodGet, payload, nil, http.StatusOK},
		{http.MethodPost, "/api/dead/retry", ActionRequest{IDs: []string{"0190a4c2-7b1e-7cde-8f00-1234567890ab"}}, http.StatusOK},
		{http.MethodPost, "/api/dead/purge", ActionRequest{IDs: []string{"0190a4c2-7b1e-7cde-8f00-1234567890ab"}}, http.StatusOK},
	}
	auths := []struct {
		name, header string
		want         int // 0: the endpoint's success status
	}{
		{"none", "", http.StatusUnauthorized},
		{"wrong token", "Bearer not-the-token-at-all-0000", http.StatusUnauthorized},
		{"token prefix", "Bearer " + testToken[:len(testToken)-1], http.StatusUnauthorized},
		{"basic scheme", "Basic " + testToken, http.StatusUnauthorized},
		{"empty bearer", "Bearer ", http.StatusUnauthorized},
		{"right token", "Bearer " + testToken, 0},
		{"lower-case scheme", "bearer " + testToken, 0},
	}
	for _, e := range endpoints {
		// A server per endpoint: its wrong tokens stay below the limit of
		// failures per address.
		s := newTestServer(t, o.store, false)
		for _, a := range auths {
			t.Run(e.method+" "+strings.SplitN(e.path, "?", 2)[0]+" "+a.name, func(t *testing.T) {
				req := newRequest(t, e.method, s.ts.URL+e.path, e.body)
				if a.header != "" {
					req.Header.Set("Authorization", a.header)
				}
				res := do(t, nil, req)
				want := a.want
				if want == 0 {
					want = e.ok
				}
				if res.status != want {
					t.Fatalf("status %d, want %d; body %q", res.status, want, res.body)
				}
				if want == http.StatusUnauthorized {
					if got := res.header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
						t.Errorf("WWW-Authenticate %q", got)
					}
					var doc errorDocument
					res.json(t, &doc)
					if doc.Error == "" {
						t.Errorf("401 without an error message: %q", res.body)
					}
				}
			})
		}
	}
	if !o.deadIDs(t)[ids[0]] {
		t.Fatal("the dead letter is gone after unauthenticated requests")
	}
}

// TestPagesRedirectToLogin checks that pages and page actions send a
// browser without a valid session to the login form, and that a bearer
// token does not open the pages.
func TestPagesRedirectToLogin(t *testing.T) {
	o := newPGOutbox(t)
	s := newTestServer(t, o.store, false)
	tests := []struct {
		name   string
		method string
		path   string
		cookie string
		bearer bool
	}{
		{"dashboard, no cookie", http.MethodGet, "/", "", false},
		{"dashboard, unknown session", http.MethodGet, "/", "forged-session-id", false},
		{"dashboard, bearer", http.MethodGet, "/?type=x", "", true},
		{"retry form, no cookie", http.MethodPost, "/dead/retry", "", false},
		{"purge form, no cookie", http.MethodPost, "/dead/purge", "", false},
		{"logout, no cookie", http.MethodPost, "/logout", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := newRequest(t, tt.method, s.ts.URL+tt.path, nil)
			if tt.cookie != "" {
				req.AddCookie(&http.Cookie{Name: cookieName, Value: tt.cookie})
			}
			if tt.bearer {
				req.Header.Set("Authorization", "Bearer "+testToken)
			}
			res := do(t, nil, req)
			if res.status != http.StatusSeeOther || res.header.Get("Location") != "/login" {
				t.Fatalf("status %d, location %q; want 303 to /login", res.status, res.header.Get("Location"))
			}
		})
	}
	res := do(t, nil, newRequest(t, http.MethodGet, s.ts.URL+"/login", nil))
	if res.status != http.StatusOK || !strings.Contains(res.body, `name="token"`) || !strings.Contains(res.body, `type="password"`) {
		t.Fatalf("login form: status %d, body %q", res.status, res.body)
	}
}

// TestLogin checks the login form: a wrong token is refused without a
// cookie, the right one sets a HttpOnly, SameSite=Strict session cookie
// that opens the pages and the API.
func TestLogin(t *testing.T) {
	o := newPGOutbox(t)
	o.seedDead(t, deadSpec{typ: "orders.placed"})
	s := newTestServer(t, o.store, false)

	b := &browserSession{t: t, s: s, client: &http.Client{}}
	for _, bad := range []string{"", "wrong", testToken + "x", strings.ToUpper(testToken)} {
		res := b.form("/login", url.Values{"token": {bad}}, nil)
		if res.status != http.StatusUnauthorized || !strings.Contains(res.body, "That token is not valid.") {
			t.Fatalf("login with %q: status %d, body %q", bad, res.status, res.body)
		}
		if c := res.header.Get("Set-Cookie"); c != "" {
			t.Fatalf("login with %q set a cookie: %q", bad, c)
		}
	}
	if n := len(withMessage(s.log.records(t), "admin login failed")); n != 4 {
		t.Errorf("%d failed logins logged, want 4", n)
	}

	res := b.form("/login", url.Values{"token": {testToken}}, nil)
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/" {
		t.Fatalf("login: status %d, location %q", res.status, res.header.Get("Location"))
	}
	cookies := (&http.Response{Header: res.header}).Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", cookies)
	}
	c := cookies[0]
	if c.Name != cookieName || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || len(c.Value) < 40 || c.Value == testToken {
		t.Fatalf("session cookie %+v", c)
	}
	if c.MaxAge <= 0 || c.MaxAge > int((24*time.Hour).Seconds()) {
		t.Errorf("session cookie lives %ds", c.MaxAge)
	}

	b = s.login(t)
	page := b.get("/")
	for _, want := range []string{`id="count-dead">1<`, "orders.placed", "Log out"} {
		if !strings.Contains(page.body, want) {
			t.Errorf("dashboard lacks %q", want)
		}
	}
	if res := b.get("/api/stats"); res.status != http.StatusOK {
		t.Fatalf("API with the session cookie: status %d", res.status)
	}
	if res := b.get("/login"); res.status != http.StatusSeeOther || res.header.Get("Location") != "/" {
		t.Fatalf("login form while logged in: status %d, location %q", res.status, res.header.Get("Location"))
	}
	if n := len(withMessage(s.log.records(t), "admin login")); n != 2 {
		t.Errorf("%d logins logged, want 2", n)
	}
}

// TestLogout checks that logging out needs the anti-forgery token, ends the
// session on the server and expires the cookie.
func TestLogout(t *testing.T) {
	o := newPGOutbox(t)
	s := newTestServer(t, o.store, false)
	b := s.login(t)

	if res := b.form("/logout", url.Values{}, nil); res.status != http.StatusForbidden {
		t.Fatalf("logout without the anti-forgery token: status %d", res.status)
	}
	if res := b.get("/"); res.status != http.StatusOK {
		t.Fatalf("a refused logout ended the session: status %d", res.status)
	}
	u, _ := url.Parse(s.ts.URL)
	stolen := b.client.Jar.Cookies(u)

	res := b.action("/logout", url.Values{})
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/login" {
		t.Fatalf("logout: status %d, location %q", res.status, res.header.Get("Location"))
	}
	if !strings.Contains(res.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Errorf("logout does not expire the cookie: %q", res.header.Get("Set-Cookie"))
	}
	if res := b.get("/"); res.status != http.StatusSeeOther {
		t.Fatalf("dashboard after logout: status %d", res.status)
	}
	// The old cookie value is dead on the server too.
	req := newRequest(t, http.MethodGet, s.ts.URL+"/api/stats", nil)
	for _, c := range stolen {
		req.AddCookie(c)
	}
	if res := do(t, nil, req); res.status != http.StatusUnauthorized {
		t.Fatalf("API with the cookie of an ended session: status %d", res.status)
	}
}

// TestSessionsExpireAndAreBounded checks the session store's clock and cap.
func TestSessionsExpireAndAreBounded(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	ss := newSessions(time.Hour, 3, func() time.Time { return now })
	first, _ := ss.create()
	if _, ok := ss.get(first); !ok {
		t.Fatal("a new session is not found")
	}
	now = now.Add(59 * time.Minute)
	if _, ok := ss.get(first); !ok {
		t.Fatal("a session expired early")
	}
	now = now.Add(time.Minute)
	if _, ok := ss.get(first); ok {
		t.Fatal("a session outlived its TTL")
	}
	var ids []string
	for i := range 5 {
		now = now.Add(time.Second * time.Duration(i+1))
		id, s := ss.create()
		if s.csrf == "" || id == s.csrf {
			t.Fatalf("session %q has anti-forgery token %q", id, s.csrf)
		}
		ids = append(ids, id)
	}
	if len(ss.m) != 3 {
		t.Fatalf("%d sessions kept, want the cap of 3", len(ss.m))
	}
	for i, id := range ids {
		_, ok := ss.get(id)
		if want := i >= 2; ok != want {
			t.Errorf("session %d kept %t, want %t (the oldest go first)", i, ok, want)
		}
	}
	ss.setFlash(ids[4], "done", false)
	if msg, isErr := ss.takeFlash(ids[4]); msg != "done" || isErr {
		t.Fatalf("flash %q, %t", msg, isErr)
	}
	if msg, _ := ss.takeFlash(ids[4]); msg != "" {
		t.Fatalf("flash shown twice: %q", msg)
	}
	if msg, _ := ss.takeFlash("unknown"); msg != "" {
		t.Fatalf("flash of an unknown session: %q", msg)
	}
}
