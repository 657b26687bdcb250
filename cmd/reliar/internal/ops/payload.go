package ops

import "unicode/utf8"

// TrimPartialRune drops an incomplete UTF-8 sequence at the end of b, which
// a payload cut at a byte count may end with, so that a cut text still
// shows as text.
func TrimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}
