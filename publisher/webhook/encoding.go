package webhook

import (
	"errors"
	"strings"
)

// percentEncode encodes a CloudEvents attribute value for an HTTP header as
// the HTTP binding requires: every byte of its UTF-8 form outside the
// printable ASCII range U+0021–U+007E, and space, double quote and percent,
// becomes %XX (upper-case hex), so the header is printable ASCII.
func percentEncode(s string) string {
	n := 0
	for i := range len(s) {
		if mustEncode(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := range len(s) {
		c := s[i]
		if mustEncode(c) {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func mustEncode(c byte) bool { return c <= ' ' || c >= 0x7f || c == '"' || c == '%' }

// errBadEncoding reports a header value whose percent-encoding is broken.
var errBadEncoding = errors.New("webhook: bad percent-encoding")

// percentDecode applies the HTTP binding's receive rule to a header value:
// a double-quoted string is unquoted first, then one round of %XX
// decoding.
func percentDecode(s string) (string, error) {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		var b strings.Builder
		for i := 1; i < len(s)-1; i++ {
			if s[i] == '\\' && i+1 < len(s)-1 {
				i++
			}
			b.WriteByte(s[i])
		}
		s = b.String()
	}
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errBadEncoding
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", errBadEncoding
		}
		b.WriteByte(hi<<4 | lo)
		i += 2
	}
	return b.String(), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
