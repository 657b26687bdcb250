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
// present, decides alone: a wrong one is not rescued by a cookie.
func (s *Server) authenticate(r *http.Request) (caller, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || !s.tokenMatches(strings.TrimSpace(token)) {
			return caller{}, false
		}
		return caller{bearer: true}, true
	}
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" {
		return caller{}, false
	}
	sess, ok := s.sessions.get(c.Value)
	if !ok {
		return caller{}, false
	}
	return caller{sessionID: c.Value, csrf: sess.csrf}, true
}

// callerHandler is a handler that knows its caller.
type callerHandler func(w http.ResponseWriter, r *http.Request, c caller)

// api requires authentication and answers 401 without it.
func (s *Server) api(h callerHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.authenticate(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="reliar"`)
			writeError(w, http.StatusUnauthorized, "authentication required: send Authorization: Bearer <token>, or log in")
			return
		}
		h(w, r, c)
	}
}

// page requires a browser session and redirects to the login form without
// one.
func (s *Server) page(h callerHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, ok := s.authenticate(r)
		if !ok || c.bearer {
			http.Redirect(w, r, "/login", http.StatusSeeOther)
			return
		}
		h(w, r, c)
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
