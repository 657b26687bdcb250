// Package redact removes secrets (passwords, tokens) from URLs and from any
// text the CLI writes: error messages, logs and summaries.
//
// URLs are redacted by parsing them, never by a regular expression: the
// password of a URL's user information, the whole user information of a NATS
// URL without a password (there it is a token), and the value of every query
// parameter whose key names a secret (password, token, secret, ...) are
// replaced by [Mask]. A URL that does not parse cleanly — a password holding
// an unescaped #, /, ? or space, say — is shown with everything after its
// scheme masked, since no reading of it can be trusted to find the password.
//
// Texts the CLI did not build itself, such as a driver's error that quotes
// the connection string, are redacted by finding each URL in them and
// redacting it as above, and keyword/value pairs (password=...) as in a
// PostgreSQL connection string. A [Redactor] also knows the secrets of the
// URLs and flags the command was given, and replaces every occurrence of
// them, whatever text holds them.
//
// Log records are redacted value by value before they are formatted
// ([Redactor.Handler]), so that a JSON record stays valid JSON.
package redact

import "strings"

// Mask replaces every redacted secret.
const Mask = "xxxxx"

// String returns s with every secret it can recognise replaced by [Mask]:
// the secrets of the URLs it holds, and the values of secret keyword/value
// pairs.
func String(s string) string {
	return keywordPairs(urlsInText(s))
}

// URL returns a database or broker URL fit to be shown: its password, token
// and secret query parameters replaced by [Mask], or everything after its
// scheme when it does not parse cleanly. It never fails. A string without a
// scheme is treated as a keyword/value connection string.
func URL(raw string) string {
	scheme, rest, ok := splitScheme(raw)
	if !ok {
		return keywordPairs(raw)
	}
	return scheme + redactRest(scheme, rest)
}

// Unparsable reports whether URL masks everything after raw's scheme,
// because raw does not parse cleanly.
func Unparsable(raw string) bool {
	scheme, rest, ok := splitScheme(raw)
	return ok && rest != "" && redactRest(scheme, rest) == Mask
}

// Reason returns a parser's reason for refusing raw, fit to be shown: every
// secret of raw removed, and, when raw's user information holds a
// character that defeats parsing (so that the reason may quote a piece of
// the password as a port or a path), a fixed explanation instead.
func Reason(raw, reason string) string {
	if _, rest, ok := splitScheme(raw); ok {
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			if u := rest[:at]; strings.ContainsAny(u, "/?#") || hasSpaceOrControl(u) {
				return ambiguousReason
			}
		}
	}
	r := NewRedactor()
	r.AddURL(raw)
	return r.String(reason)
}

// ambiguousReason explains why a URL whose password holds a character that
// defeats parsing was refused, without quoting any of it.
const ambiguousReason = "its user information does not parse: a password holding #, /, ?, @ or a space must be percent-encoded (%23, %2F, %3F, %40, %20)"
