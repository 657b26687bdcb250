package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
)

// cookieName is the session cookie's name.
const cookieName = "reliar_session"

// caller is who made a request: a bearer of the token, or a browser session.
type caller struct {
	// bearer is true for "Authorization: Bearer <token>".
	bearer bool
	// sessionID and csrf are the browser session's, when not bearer.
	sessionID string
	csrf      string
}

// how names the way the caller authenticated, for audit records.
func (c caller) how() string {
	if c.bearer {
		return "bearer"
	}
	return "session"
}

// tokenMatches compares a presented token with the server's in constant
// time; hashing both first hides the token's length too.
func (s *Server) tokenMatches(presented string) bool {
	a := sha256.Sum256([]byte(presented))
	b := sha256.Sum256([]byte(s.cfg.Token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// authenticate finds the request's caller. An Authorization header, when
// present, decides alone: a wrong one is not rescued by a cookie, and it
// counts as a failed credential of the request's address, which is refused
// with 429 once it failed too often (answered is then true: the answer is
// written). A session cookie is not a guessable credential and is not
// counted.
func (s *Server) authenticate(w http.ResponseWriter, r *http.Request, asPage bool) (c caller, ok, answered bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		if !s.admit(w, r, asPage) {
			return caller{}, false, true
		}
		scheme, token, found := strings.Cut(h, " ")
		ok := found && strings.EqualFold(scheme, "Bearer") && s.tokenMatches(strings.TrimSpace(token))
		s.checkDone(r, ok, "admin bearer token refused")
		if !ok {
			return caller{}, false, false
		}
		return caller{bearer: true}, true, false
	}
	ck, err := r.Cookie(cookieName)
	if err != nil || ck.Value == "" {
		return caller{}, false, false
	}
	sess, found := s.sessions.get(ck.Value)
	if !found {
		return caller{}, false, false
	}
	return caller{sessionID: ck.Value, csrf: sess.csrf}, true, false
}

// callerHandler is a handler that knows its caller.
type callerHandler func(w http.ResponseWriter, r *http.Request, c caller)

// api requires authentication and answers 401 without it.
func (s *Server) api(h callerHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok, answered := s.authenticate(w, r, false)
		switch {
		case answered:
		case !ok:
			w.Header().Set("WWW-Authenticate", `Bearer realm="reliar"`)
			writeError(w, http.StatusUnauthorized, "authentication required: send Authorization: Bearer <token>, or log in")
		default:
			h(w, r, c)
		}
	}
}

// page requires a browser session and redirects to the login form without
// one.
func (s *Server) page(h callerHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok, answered := s.authenticate(w, r, true)
		switch {
		case answered:
		case !ok || c.bearer:
			http.Redirect(w, r, "/login", http.StatusSeeOther)
		default:
			h(w, r, c)
		}
	}
}

// setSessionCookie gives the browser its session: HttpOnly, SameSite=Strict,
// and Secure when the request came over TLS.
func setSessionCookie(w http.ResponseWriter, r *http.Request, id string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName,
		Value:    id,
		Path:     "/",
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
}
