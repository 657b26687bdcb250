package admin

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
)

// csrfField and csrfHeader carry a session's anti-forgery token: the first
// in the page's forms, the second in scripts' API calls.
const (
	csrfField  = "csrf_token"
	csrfHeader = "X-CSRF-Token"
)

// crossSite reports why a state-changing request does not come from this
// server's own pages, or "" when it does or when it comes from a client that
// is not a browser (which sends neither Sec-Fetch-Site, Origin nor Referer).
func crossSite(r *http.Request) string {
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		return "Sec-Fetch-Site is " + site
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !sameHost(origin, r.Host) {
			return "Origin " + origin + " is not this server"
		}
		return ""
	}
	if ref := r.Header.Get("Referer"); ref != "" && !sameHost(ref, r.Host) {
		return "Referer is not this server"
	}
	return ""
}

// sameHost reports whether the http(s) URL raw names host.
func sameHost(raw, host string) bool {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, host)
}

// csrfMatches compares a presented anti-forgery token with the session's in
// constant time.
func csrfMatches(presented, want string) bool {
	return presented != "" && want != "" && subtle.ConstantTimeCompare([]byte(presented), []byte(want)) == 1
}

// maxFormBytes bounds the body of a state-changing request.
const maxFormBytes = 1 << 20

// checked guards a state-changing handler against forgery: a cross-site
// request, and a session request without its anti-forgery token, are
// refused with 403.
func (s *Server) checked(h callerHandler) callerHandler {
	return func(w http.ResponseWriter, r *http.Request, c caller) {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if why := crossSite(r); why != "" {
			s.log.Warn("admin request refused: cross-site", "path", r.URL.Path, "why", why, "remote", r.RemoteAddr)
			writeError(w, http.StatusForbidden, "cross-site request refused")
			return
		}
		if !c.bearer {
			presented := r.Header.Get(csrfHeader)
			if presented == "" && isForm(r) {
				presented = r.PostFormValue(csrfField)
			}
			if !csrfMatches(presented, c.csrf) {
				s.log.Warn("admin request refused: missing or wrong anti-forgery token", "path", r.URL.Path, "remote", r.RemoteAddr)
				writeError(w, http.StatusForbidden, "missing or wrong anti-forgery token: reload the page")
				return
			}
		}
		h(w, r, c)
	}
}

// write guards a handler that changes the outbox: checked, and refused with
// 403 in read-only mode.
func (s *Server) write(h callerHandler) callerHandler {
	return s.checked(func(w http.ResponseWriter, r *http.Request, c caller) {
		if s.cfg.ReadOnly {
			s.log.Warn("admin request refused: read-only", "path", r.URL.Path, "remote", r.RemoteAddr)
			writeError(w, http.StatusForbidden, "this admin page is read-only")
			return
		}
		h(w, r, c)
	})
}

// isForm reports whether the request's body is an HTML form.
func isForm(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	return strings.HasPrefix(ct, "application/x-www-form-urlencoded") || strings.HasPrefix(ct, "multipart/form-data")
}
