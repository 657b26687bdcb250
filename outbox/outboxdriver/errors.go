package outboxdriver

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reliar/reliar"
)

// ErrNotDead is matched (with errors.Is) by the error of DeadPayload for a
// row that does not exist or is not dead.
var ErrNotDead = errors.New("outbox: no dead row with this id")

// ErrDuplicateID is matched (with errors.Is) by a *DuplicateIDError.
var ErrDuplicateID = errors.New("outbox: message id already enqueued")

// DuplicateIDError reports an enqueue that reused a message id. It is a
// permanent failure: the same insert fails the same way.
type DuplicateIDError struct {
	// ID is the reused id, when the store can tell which one it was.
	ID  reliar.MessageID
	Err error
}

func (e *DuplicateIDError) Error() string {
	return fmt.Sprintf("outbox: message id %s already enqueued", e.ID)
}
func (e *DuplicateIDError) Unwrap() error                   { return e.Err }
func (e *DuplicateIDError) Is(target error) bool            { return target == ErrDuplicateID }
func (e *DuplicateIDError) FailureKind() reliar.FailureKind { return reliar.FailurePermanent }

// ErrPayloadTooLarge is matched (with errors.Is) by a *PayloadTooLargeError.
var ErrPayloadTooLarge = errors.New("outbox: payload too large")

// PayloadTooLargeError reports a message whose serialized payload exceeds the
// store's limit. Nothing of the enqueue call was written.
type PayloadTooLargeError struct {
	ID   reliar.MessageID
	Size int
	Max  int
}

func (e *PayloadTooLargeError) Error() string {
	return fmt.Sprintf("outbox: payload of message %s is %d bytes, over the limit of %d", e.ID, e.Size, e.Max)
}
func (e *PayloadTooLargeError) Is(target error) bool            { return target == ErrPayloadTooLarge }
func (e *PayloadTooLargeError) FailureKind() reliar.FailureKind { return reliar.FailurePermanent }

// ErrUndecodable is matched (with errors.Is) by a *DecodeError.
var ErrUndecodable = errors.New("outbox: undecodable row")

// DecodeError reports a stored row that cannot be decoded (a poison row).
type DecodeError struct {
	ID     reliar.MessageID
	Reason string
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("outbox: row %s undecodable: %s", e.ID, e.Reason)
}
func (e *DecodeError) Is(target error) bool { return target == ErrUndecodable }

// MaxErrorBytes is the longest last_error a store writes.
const MaxErrorBytes = 2048

// SanitizeError prepares an error text for last_error: NUL bytes and invalid
// UTF-8 removed, then truncated to at most MaxErrorBytes on a UTF-8 boundary.
func SanitizeError(s string) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.ReplaceAll(s, "\x00", "")
	return TruncateUTF8(s, MaxErrorBytes)
}

// TruncateUTF8 returns the longest prefix of s of at most n bytes that does
// not cut a UTF-8 sequence.
func TruncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// ErrNotMigrated is matched (with errors.Is) by a *NotMigratedError: the
// error every Reliar store's New returns for a schema older than it needs.
// Each store package names it too (pgstore.ErrNotMigrated,
// sqlitestore.ErrNotMigrated, ...): they are this one value, so one
// errors.Is matches a behind schema of every store.
var ErrNotMigrated = errors.New("outbox: schema not migrated")

// NotMigratedError reports a database whose schema is older than the store
// needs. Match it with errors.As to read the versions; it matches
// [ErrNotMigrated] with errors.Is. Each store package names it too
// (pgstore.NotMigratedError, ...), as an alias of this type. It is a
// permanent failure: retrying does not migrate.
type NotMigratedError struct {
	// Store is the store package that refused the schema: "pgstore",
	// "sqlitestore", "mysqlstore".
	Store string
	// Schema is the PostgreSQL schema that holds the tables; "" for stores
	// that have none.
	Schema string
	// Have is the applied schema version; 0 when nothing is applied.
	Have int
	// Want is the version the store needs (its SchemaVersion).
	Want int
}

// Error says which version the schema has, which it needs and how to
// migrate it.
func (e *NotMigratedError) Error() string {
	where := "schema"
	if e.Schema != "" {
		where = fmt.Sprintf("schema %q", e.Schema)
	}
	return fmt.Sprintf("%s: %s is at version %d, this release needs %d: run %s.Migrate (or `reliar migrate`)",
		e.Store, where, e.Have, e.Want, e.Store)
}

// Is matches ErrNotMigrated.
func (e *NotMigratedError) Is(target error) bool { return target == ErrNotMigrated }

// FailureKind is permanent: the schema does not migrate itself.
func (e *NotMigratedError) FailureKind() reliar.FailureKind { return reliar.FailurePermanent }
