package storeurl

import (
	"slices"
	"strings"
)

// ConnectError is a failure to connect to a database, told in one line.
// pgx reports every attempt of a connection on a line of its own — the TLS
// attempt of sslmode=prefer and the plain one after it, each address of a
// host — which is most often one failure repeated: each line is kept once.
type ConnectError struct {
	// Where is the database, secrets redacted.
	Where string
	// Err is the driver's error.
	Err error
}

func (e *ConnectError) Error() string {
	var parts []string
	for line := range strings.SplitSeq(e.Err.Error(), "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !slices.Contains(parts, line) {
			parts = append(parts, line)
		}
	}
	return "connect to " + e.Where + ": " + strings.Join(parts, " ")
}

// Unwrap returns the driver's error.
func (e *ConnectError) Unwrap() error { return e.Err }
