package redact

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// minSecret is the shortest secret, or piece of one, that a Redactor
// replaces wherever it appears: a shorter one would mask ordinary words.
const minSecret = 3

// Redactor redacts texts as [String] does, and also replaces every
// occurrence of the secrets it was told about: the passwords, tokens and
// secret query values of the URLs given to the command, and secret flags.
// The zero value knows no secret. It is safe for concurrent use.
type Redactor struct {
	mu      sync.RWMutex
	secrets []string // longest first
}

// NewRedactor returns a Redactor that knows no secret yet.
func NewRedactor() *Redactor { return &Redactor{} }

// Add makes r replace secret, and each piece of it between separators
// (#, /, ?, @, :, &, whitespace) that a parser may quote on its own. Pieces
// shorter than three bytes are left alone.
func (r *Redactor) Add(secrets ...string) {
	var add []string
	for _, s := range secrets {
		for _, v := range variants(s) {
			add = append(add, v)
			add = append(add, strings.FieldsFunc(v, isSeparator)...)
		}
	}
	r.add(add)
}

// add makes r replace each of secrets as given.
func (r *Redactor) add(secrets []string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range secrets {
		if len(s) >= minSecret && !slices.Contains(r.secrets, s) && !strings.Contains(Mask, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	slices.SortStableFunc(r.secrets, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
}

// AddURL makes r replace the secrets of a URL (see [Secrets]) and, when
// the URL does not parse cleanly, everything after its scheme.
func (r *Redactor) AddURL(raw string) {
	r.Add(Secrets(raw)...)
	raw = strings.TrimSpace(raw)
	if _, rest, ok := splitScheme(raw); ok && Unparsable(raw) {
		r.add([]string{rest})
	}
}

// variants returns s as given, percent-decoded and percent-encoded, since a
// driver may quote any of them.
func variants(s string) []string {
	out := []string{s}
	if d, err := url.PathUnescape(s); err == nil && d != s {
		out = append(out, d)
	}
	if d, err := url.QueryUnescape(s); err == nil && d != s {
		out = append(out, d)
	}
	if e := url.QueryEscape(s); e != s {
		out = append(out, e)
	}
	return out
}

func isSeparator(r rune) bool {
	return strings.ContainsRune("#/?@:&=", r) || r <= ' '
}

// String returns s with every known secret and every secret [String]
// recognises replaced by [Mask].
func (r *Redactor) String(s string) string {
	s = String(s)
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, secret := range r.secrets {
		if strings.Contains(s, secret) {
			s = strings.ReplaceAll(s, secret, Mask)
		}
	}
	return s
}

// Secrets returns the secrets of a URL, read leniently so that a URL that
// does not parse still gives them up: the password (everything between the
// first colon of the user information and its last @), a NATS token, the
// values of secret query parameters. A string without a scheme is read as
// keyword/value pairs.
func Secrets(raw string) []string {
	scheme, rest, ok := splitScheme(strings.TrimSpace(raw))
	if !ok {
		return pairSecrets(raw)
	}
	var out []string
	hostAndRest := rest
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		userinfo := rest[:at]
		hostAndRest = rest[at+1:]
		if _, pw, ok := strings.Cut(userinfo, ":"); ok {
			out = append(out, pw)
		} else if isTokenScheme(scheme) {
			out = append(out, userinfo)
		}
	}
	if _, q, ok := strings.Cut(hostAndRest, "?"); ok {
		q, _, _ = strings.Cut(q, "#")
		for p := range strings.SplitSeq(q, "&") {
			if k, v, ok := strings.Cut(p, "="); ok && SecretKey(k) {
				out = append(out, v)
			}
		}
	}
	return out
}

// pairSecrets returns the values of the secret key=value pairs of s.
func pairSecrets(s string) []string {
	var out []string
	for {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return out
		}
		k := eq
		for k > 0 && isKeyChar(s[k-1]) {
			k--
		}
		n := valueLen(s[eq+1:])
		if k < eq && SecretKey(s[k:eq]) {
			v := s[eq+1 : eq+1+n]
			if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
				v = v[1 : len(v)-1]
			}
			out = append(out, v)
		}
		s = s[eq+1+n:]
	}
}
