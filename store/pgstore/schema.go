package pgstore

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
)

// DefaultSchema is the schema that holds the outbox table unless configured
// otherwise.
const DefaultSchema = "public"

// maxIdentifierBytes is PostgreSQL's identifier limit (NAMEDATALEN - 1).
const maxIdentifierBytes = 63

// ErrInvalidSchema is matched (with errors.Is) by an *InvalidSchemaError.
var ErrInvalidSchema = errors.New("pgstore: invalid schema name")

// InvalidSchemaError reports a schema name that is not a plain identifier:
// letters, digits and underscores, not starting with a digit, at most 63
// bytes. Such names are refused rather than escaped, so that no name can
// smuggle SQL into a statement.
type InvalidSchemaError struct {
	Name   string
	Reason string
}

// Error names the refused schema and the reason.
func (e *InvalidSchemaError) Error() string {
	return fmt.Sprintf("pgstore: invalid schema name %q: %s", e.Name, e.Reason)
}

// Is matches ErrInvalidSchema.
func (e *InvalidSchemaError) Is(target error) bool { return target == ErrInvalidSchema }

// ValidateSchema reports whether name can be used as the outbox schema.
func ValidateSchema(name string) error {
	switch {
	case name == "":
		return &InvalidSchemaError{Name: name, Reason: "empty"}
	case len(name) > maxIdentifierBytes:
		return &InvalidSchemaError{Name: name, Reason: "longer than 63 bytes"}
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		digit := c >= '0' && c <= '9'
		if !letter && !(digit && i > 0) {
			return &InvalidSchemaError{Name: name, Reason: "only letters, digits and _ are allowed, and no leading digit"}
		}
	}
	return nil
}

// names holds the SQL spellings derived from one validated schema name.
type names struct {
	schema  string // the raw schema name, for catalog lookups
	quoted  string // "schema"
	table   string // "schema".outbox
	channel string // the LISTEN/NOTIFY channel
}

func newNames(schema string) (names, error) {
	if err := ValidateSchema(schema); err != nil {
		return names{}, err
	}
	quoted := `"` + schema + `"`
	return names{
		schema:  schema,
		quoted:  quoted,
		table:   quoted + ".outbox",
		channel: channelName(schema),
	}, nil
}

// channelName returns the notification channel of a schema's outbox table.
// Channel names share the identifier limit, so a long schema name is replaced
// by its hash.
func channelName(schema string) string {
	name := "reliar." + schema + ".outbox"
	if len(name) <= maxIdentifierBytes {
		return name
	}
	return "reliar." + strconv.FormatUint(hash64(schema), 16) + ".outbox"
}

// advisoryKey derives a stable advisory-lock key for purpose on schema.
func advisoryKey(purpose, schema string) int64 {
	return int64(hash64("reliar." + purpose + ":" + schema + ".outbox"))
}

func hash64(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// quoteLiteral quotes s as a SQL string literal. Only used for names built
// from validated identifiers.
func quoteLiteral(s string) string { return "'" + s + "'" }
