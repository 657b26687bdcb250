package redact

import (
	"net/url"
	"strings"
)

// splitScheme splits "scheme://rest" into "scheme://" and rest.
func splitScheme(raw string) (scheme, rest string, ok bool) {
	i := strings.Index(raw, "://")
	if i <= 0 || !isScheme(raw[:i]) {
		return "", raw, false
	}
	return raw[:i+3], raw[i+3:], true
}

// isScheme reports whether s is a URL scheme: a letter, then letters,
// digits, +, - and dots.
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isLetter(c):
		case i > 0 && (isDigit(c) || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// tokenSchemes are the schemes whose user information, without a password,
// is a token.
var tokenSchemes = []string{"nats://", "tls://", "ws://", "wss://"}

// redactRest redacts what follows a URL's scheme. A URL whose parse cannot
// be trusted — an unescaped #, /, ?, whitespace or control character before
// its last @, or a parse error — is masked whole.
func redactRest(scheme, rest string) string {
	if rest == "" {
		return ""
	}
	userinfo, hostAndRest, hasUser := "", rest, false
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		userinfo, hostAndRest, hasUser = rest[:at], rest[at+1:], true
		if strings.ContainsAny(userinfo, "/?#") || hasSpaceOrControl(userinfo) {
			return Mask
		}
	}
	if _, err := url.Parse(scheme + rest); err != nil {
		return Mask
	}
	var b strings.Builder
	if hasUser {
		user, _, hasPassword := strings.Cut(userinfo, ":")
		switch {
		case hasPassword:
			b.WriteString(user + ":" + Mask)
		case isTokenScheme(scheme) && user != "":
			b.WriteString(Mask)
		default:
			b.WriteString(user)
		}
		b.WriteByte('@')
	}
	beforeFragment, fragment, hasFragment := strings.Cut(hostAndRest, "#")
	base, query, hasQuery := strings.Cut(beforeFragment, "?")
	b.WriteString(base)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(redactQuery(query))
	}
	if hasFragment {
		b.WriteByte('#')
		b.WriteString(keywordPairs(redactQuery(fragment)))
	}
	return b.String()
}

func isTokenScheme(scheme string) bool {
	for _, s := range tokenSchemes {
		if strings.EqualFold(scheme, s) {
			return true
		}
	}
	return false
}

// hasSpaceOrControl reports whether s holds whitespace or a control
// character, which no URL holds unescaped.
func hasSpaceOrControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// redactQuery masks the values of a raw query's secret parameters, leaving
// the rest as written.
func redactQuery(q string) string {
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, _, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		if key, err := url.QueryUnescape(k); err == nil && SecretKey(key) || SecretKey(k) {
			parts[i] = k + "=" + Mask
		}
	}
	return strings.Join(parts, "&")
}

// secretWords are the names, and parts of names, of parameters that hold
// secrets.
var secretWords = []string{"password", "passwd", "pwd", "pass", "secret", "token", "apikey", "api_key", "api-key", "nkey", "jwt", "credential", "signature", "sig", "auth"}

// SecretKey reports whether a parameter named key holds a secret: password,
// sslpassword, token, access_token, client_secret, api_key, ... (any case).
// Short words (pwd, pass, sig, auth, jwt, nkey) count only as the whole name
// or its last part after _ or -, so that "passive" or "authority" stay
// visible.
func SecretKey(key string) bool {
	k := strings.ToLower(strings.TrimSpace(key))
	if k == "" {
		return false
	}
	last := k
	if i := strings.LastIndexAny(k, "_-."); i >= 0 {
		last = k[i+1:]
	}
	for _, w := range secretWords {
		if len(w) <= 4 {
			if k == w || last == w {
				return true
			}
			continue
		}
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}
