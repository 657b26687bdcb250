package redact

import "strings"

// urlsInText redacts every URL found in s, as URL does. A URL ends at
// whitespace, a quote or an angle bracket — unless an @ follows on the same
// line after a colon that comes before the whitespace, as in a password
// holding a space ("postgres://app:pa ss@db"): then the URL runs through
// that @ when a host follows it, and the whitespace in it has it masked
// whole.
func urlsInText(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		start := i
		for start > 0 && isSchemeChar(s[start-1]) {
			start--
		}
		for start < i && !isLetter(s[start]) {
			start++
		}
		if start == i {
			// No scheme before "://": copy it and go on.
			b.WriteString(s[:i+3])
			s = s[i+3:]
			continue
		}
		b.WriteString(s[:start])
		end := urlEnd(s, i+3)
		b.WriteString(URL(s[start:end]))
		s = s[end:]
	}
}

func isSchemeChar(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '+' || c == '-' || c == '.'
}

// isURLEnd reports whether c ends a URL in running text.
func isURLEnd(c byte) bool {
	switch c {
	case '"', '\'', '`', '<', '>':
		return true
	}
	return c <= ' ' || c == 0x7f
}

// urlEnd returns where the URL whose authority starts at from ends in s.
func urlEnd(s string, from int) int {
	end := from
	for end < len(s) && !isURLEnd(s[end]) {
		end++
	}
	// The line the URL is on, up to a quote or the next URL.
	line := len(s)
	for j := from; j < len(s); j++ {
		if c := s[j]; c == '\n' || c == '\r' || c == '"' || c == '\'' || c == '`' {
			line = j
			break
		}
	}
	if next := strings.Index(s[from:line], "://"); next >= 0 {
		line = from + next
	}
	at := strings.LastIndexByte(s[from:line], '@')
	if at < 0 || from+at < end {
		return end
	}
	userinfo := s[from : from+at]
	colon := strings.IndexByte(userinfo, ':')
	space := strings.IndexFunc(userinfo, func(r rune) bool { return r <= ' ' })
	if colon < 0 || space >= 0 && space < colon || !hostFollows(s[from+at+1:]) {
		return end
	}
	end = from + at + 1
	for end < len(s) && !isURLEnd(s[end]) {
		end++
	}
	return end
}

// hostFollows reports whether s starts with a host name or address.
func hostFollows(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	return isLetter(c) || isDigit(c) || c == '['
}

// keywordPairs masks the values of secret key=value pairs, as in a
// PostgreSQL keyword/value connection string ("host=db password=abc") or a
// query: a quoted value up to its closing quote, else up to whitespace, &,
// or ;.
func keywordPairs(s string) string {
	if !strings.Contains(s, "=") {
		return s
	}
	var b strings.Builder
	for {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			b.WriteString(s)
			return b.String()
		}
		k := eq
		for k > 0 && isKeyChar(s[k-1]) {
			k--
		}
		if k == eq || !SecretKey(s[k:eq]) {
			b.WriteString(s[:eq+1])
			s = s[eq+1:]
			continue
		}
		b.WriteString(s[:eq+1])
		b.WriteString(Mask)
		s = s[eq+1+valueLen(s[eq+1:]):]
	}
}

func isKeyChar(c byte) bool {
	return isLetter(c) || isDigit(c) || c == '_' || c == '-'
}

// valueLen returns the length of the value at the start of s.
func valueLen(s string) int {
	if s == "" {
		return 0
	}
	if q := s[0]; q == '\'' || q == '"' {
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case q:
				return i + 1
			}
		}
		return len(s)
	}
	i := 0
	for i < len(s) && s[i] > ' ' && s[i] != '&' && s[i] != ';' && s[i] != '"' && s[i] != '\'' {
		i++
	}
	return i
}
