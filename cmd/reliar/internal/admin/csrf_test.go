package admin

import (
	"net/http"
	"net/url"
	"testing"
)

// TestCrossSiteRequestsRefused checks that no state-changing request from
// another site, or from a session without its anti-forgery token, changes
// anything.
func TestCrossSiteRequestsRefused(t *testing.T) {
	o := newPGOutbox(t)
	ids := o.seedDead(t, deadSpec{typ: "orders.placed"}, deadSpec{typ: "orders.placed"})
	s := newTestServer(t, o.store, false)
	b := s.login(t)
	one := url.Values{"only": {ids[0].String()}}
	withToken := func(v url.Values) url.Values {
		c := url.Values{}
		for k, vs := range v {
			c[k] = vs
		}
		c.Set(csrfField, b.csrf)
		return c
	}
	tests := []struct {
		name    string
		path    string
		form    url.Values
		headers map[string]string
	}{
		{"no anti-forgery token", "/dead/retry", one, nil},
		{"wrong anti-forgery token", "/dead/purge", url.Values{"only": {ids[0].String()}, csrfField: {"forged"}}, nil},
		{"foreign Origin", "/dead/purge", withToken(one), map[string]string{"Origin": "https://evil.example"}},
		{"null Origin", "/dead/purge", withToken(one), map[string]string{"Origin": "null"}},
		{"foreign Referer without Origin", "/dead/retry", withToken(one), map[string]string{"Origin": "", "Referer": "https://evil.example/page"}},
		{"Sec-Fetch-Site cross-site", "/dead/purge", withToken(one), map[string]string{"Sec-Fetch-Site": "cross-site"}},
		{"Sec-Fetch-Site same-site", "/dead/purge", withToken(one), map[string]string{"Sec-Fetch-Site": "same-site"}},
		{"all matching, no token", "/dead/purge", url.Values{"scope": {"all"}}, nil},
		{"logout from another site", "/logout", withToken(url.Values{}), map[string]string{"Origin": "https://evil.example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := b.form(tt.path, tt.form, tt.headers)
			if res.status != http.StatusForbidden {
				t.Fatalf("status %d, want 403; body %q", res.status, res.body)
			}
		})
	}

	// The API: a session must send the token in a header; a foreign
	// Origin is refused even with the bearer token.
	api := []struct {
		name    string
		bearer  bool
		headers map[string]string
	}{
		{"session without X-CSRF-Token", false, map[string]string{"Origin": s.ts.URL}},
		{"session with a wrong X-CSRF-Token", false, map[string]string{"Origin": s.ts.URL, csrfHeader: "forged"}},
		{"session, foreign Origin", false, map[string]string{"Origin": "https://evil.example", csrfHeader: b.csrf}},
		{"bearer, foreign Origin", true, map[string]string{"Origin": "https://evil.example"}},
		{"bearer, foreign Referer", true, map[string]string{"Referer": "http://evil.example/"}},
	}
	for _, tt := range api {
		t.Run("api "+tt.name, func(t *testing.T) {
			req := newRequest(t, http.MethodPost, s.ts.URL+"/api/dead/purge", ActionRequest{IDs: idStrings(ids...)})
			if tt.bearer {
				req.Header.Set("Authorization", "Bearer "+testToken)
			}
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			if res := do(t, b.client, req); res.status != http.StatusForbidden {
				t.Fatalf("status %d, want 403; body %q", res.status, res.body)
			}
		})
	}

	t.Run("login from another site", func(t *testing.T) {
		anon := &browserSession{t: t, s: s, client: &http.Client{}}
		res := anon.form("/login", url.Values{"token": {testToken}}, map[string]string{"Origin": "https://evil.example"})
		if res.status != http.StatusForbidden || res.header.Get("Set-Cookie") != "" {
			t.Fatalf("status %d, cookie %q", res.status, res.header.Get("Set-Cookie"))
		}
	})

	dead := o.deadIDs(t)
	if len(dead) != 2 || !dead[ids[0]] || !dead[ids[1]] {
		t.Fatalf("refused requests changed the dead letters: %v", dead)
	}
	if n := len(withMessage(s.log.records(t), "admin action")); n != 0 {
		t.Fatalf("%d actions audited, want none", n)
	}
	if n := len(withMessage(s.log.records(t), "admin request refused: cross-site")); n < 8 {
		t.Errorf("%d cross-site refusals logged", n)
	}

	// The same session, with its token, from its own page, succeeds; so
	// does the session's API call with the header, and a client that is
	// not a browser (no Origin, no Referer) with the bearer token.
	if res := b.action("/dead/retry", url.Values{"only": {ids[0].String()}}); res.status != http.StatusSeeOther {
		t.Fatalf("same-origin retry: status %d, body %q", res.status, res.body)
	}
	req := newRequest(t, http.MethodPost, s.ts.URL+"/api/dead/retry", ActionRequest{IDs: idStrings(ids[1])})
	req.Header.Set("Origin", s.ts.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set(csrfHeader, b.csrf)
	if res := do(t, b.client, req); res.status != http.StatusOK {
		t.Fatalf("session API retry: status %d, body %q", res.status, res.body)
	}
	if dead := o.deadIDs(t); len(dead) != 0 {
		t.Fatalf("dead letters left: %v", dead)
	}
}

func TestCrossSite(t *testing.T) {
	tests := []struct {
		name    string
		headers map[string]string
		cross   bool
	}{
		{"no browser headers", nil, false},
		{"same Origin", map[string]string{"Origin": "http://admin.local:8080"}, false},
		{"same Origin https", map[string]string{"Origin": "https://admin.local:8080"}, false},
		{"Origin other port", map[string]string{"Origin": "http://admin.local:9090"}, true},
		{"Origin other host", map[string]string{"Origin": "http://evil.local:8080"}, true},
		{"Origin other scheme", map[string]string{"Origin": "ftp://admin.local:8080"}, true},
		{"Origin malformed", map[string]string{"Origin": "http://%zz"}, true},
		{"same Referer", map[string]string{"Referer": "http://admin.local:8080/?type=a"}, false},
		{"foreign Referer", map[string]string{"Referer": "http://evil.local/"}, true},
		{"same Origin wins over a foreign Referer", map[string]string{"Origin": "http://admin.local:8080", "Referer": "http://evil.local/"}, false},
		{"Sec-Fetch-Site none", map[string]string{"Sec-Fetch-Site": "none"}, false},
		{"Sec-Fetch-Site same-origin", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://admin.local:8080"}, false},
		{"Sec-Fetch-Site cross-site", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://admin.local:8080"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodPost, "http://admin.local:8080/dead/retry", nil)
			for k, v := range tt.headers {
				r.Header.Set(k, v)
			}
			if why := crossSite(r); (why != "") != tt.cross {
				t.Fatalf("crossSite = %q, want cross %t", why, tt.cross)
			}
		})
	}
}
