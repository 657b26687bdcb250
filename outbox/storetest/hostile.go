package storetest

import (
	"maps"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"

	"github.com/reliar/reliar"
)

// Hostile rows are rows written with plain SQL the way a producer in another
// language writes them: every column it may set, at its edges. HostileRows
// generates them, a dialect's HostileTarget writes them, and RunHostile runs
// a dispatcher over the table and checks that every row ends published or
// dead with a reason.

// Value is what a hostile row writes into one column.
type Value struct {
	// Arg is bound to the column's parameter; nil binds NULL. A time.Time is
	// encoded as the dialect stores times.
	Arg any
	// SQL, when not empty, is written into the statement instead of a
	// parameter: a literal of the dialect, such as '-infinity'.
	SQL string
}

// Expect is what a hostile row may end as, once the table accepted it. A
// table may always refuse a row at insert, except an ExpectPublished one.
type Expect int

const (
	// ExpectPublished rows must be published exactly once.
	ExpectPublished Expect = iota
	// ExpectEither rows must be published exactly once or be dead with a
	// reason, never both: what they end as depends on the store.
	ExpectEither
	// ExpectDead rows must be dead with a reason and never published.
	ExpectDead
)

func (e Expect) String() string {
	return [...]string{"published", "published or dead", "dead"}[e]
}

// HostileRow is one row to insert: the columns it sets (the others take the
// table's defaults) and what it may end as.
type HostileRow struct {
	// ID is the message id, as the publisher sees it.
	ID reliar.MessageID
	// Columns maps column names to what the row writes; it always holds
	// id, message_type and payload.
	Columns map[string]Value
	// Edges names the edges applied, for failure messages.
	Edges []string
	// Expect is what the row may end as.
	Expect Expect
}

// Edge is one way a producer can write a column at its edge.
type Edge struct {
	Name string
	// Expect is what a row with this edge may end as. A row with several
	// edges takes the strictest: dead over either over published.
	Expect Expect
	// Apply sets the row's columns; now is the store's clock.
	Apply func(r *HostileRow, now time.Time)
}

func set(col string, v any) func(*HostileRow, time.Time) {
	return func(r *HostileRow, _ time.Time) { r.Columns[col] = Value{Arg: v} }
}

func setSQL(col, sql string) func(*HostileRow, time.Time) {
	return func(r *HostileRow, _ time.Time) { r.Columns[col] = Value{SQL: sql} }
}

func setTime(col string, d time.Duration) func(*HostileRow, time.Time) {
	return func(r *HostileRow, now time.Time) { r.Columns[col] = Value{Arg: now.Add(d)} }
}

// CommonEdges are the edges every SQL dialect can write: NULLs, odd JSON in
// metadata and headers, unknown versions, ids in other forms, empty, large
// and binary payloads, long and invalid text, past expiries and near-future
// availability, counters at their edges. A dialect adds its own (an
// infinite time on PostgreSQL, say) in HostileTarget.Edges.
func CommonEdges() []Edge {
	return []Edge{
		{"empty payload", ExpectPublished, set("payload", []byte{})},
		{"large payload", ExpectPublished, set("payload", []byte(strings.Repeat("x", 256<<10)))},
		{"binary payload", ExpectPublished, set("payload", []byte{0, 0xff, 0xfe, '\n', 0})},
		{"NULL optional columns", ExpectPublished, func(r *HostileRow, _ time.Time) {
			for _, c := range []string{"correlation_id", "conversation_id", "causation_id", "request_id", "tenant_id",
				"expires_at", "ordering_key", "metadata", "headers", "metadata_version"} {
				r.Columns[c] = Value{}
			}
		}},
		{"metadata JSON null", ExpectPublished, set("metadata", "null")},
		{"metadata with unknown keys", ExpectPublished, set("metadata", `{"vendor": {"x": [1, 2]}, "trace": {}}`)},
		{"metadata an array", ExpectDead, set("metadata", `[1, 2]`)},
		{"metadata a string", ExpectDead, set("metadata", `"text"`)},
		{"metadata of the wrong types", ExpectDead, set("metadata", `{"trace": "x", "routing": 7}`)},
		{"metadata not JSON", ExpectEither, set("metadata", `{not json`)},
		{"headers an empty object", ExpectPublished, set("headers", `{}`)},
		{"headers with numbers", ExpectDead, set("headers", `{"retries": 3}`)},
		{"headers nested", ExpectDead, set("headers", `{"a": {"b": "c"}}`)},
		{"headers an array", ExpectDead, set("headers", `["a"]`)},
		{"metadata_version NULL", ExpectPublished, set("metadata_version", nil)},
		{"unknown metadata_version", ExpectDead, set("metadata_version", 2)},
		{"metadata_version 0", ExpectDead, set("metadata_version", 0)},
		{"message_version 65535", ExpectPublished, set("message_version", 65535)},
		{"message_version 0", ExpectDead, set("message_version", 0)},
		{"message_version negative", ExpectDead, set("message_version", -1)},
		{"message_version above 65535", ExpectDead, set("message_version", 65536)},
		{"upper-case id", ExpectEither, func(r *HostileRow, _ time.Time) {
			r.Columns["id"] = Value{Arg: strings.ToUpper(r.ID.String())}
		}},
		{"id without hyphens", ExpectEither, func(r *HostileRow, _ time.Time) {
			r.Columns["id"] = Value{Arg: strings.ReplaceAll(r.ID.String(), "-", "")}
		}},
		{"id in braces", ExpectEither, func(r *HostileRow, _ time.Time) {
			r.Columns["id"] = Value{Arg: "{" + r.ID.String() + "}"}
		}},
		{"conversation_id in upper case", ExpectPublished, set("conversation_id", strings.ToUpper(reliar.NewMessageID().String()))},
		{"conversation_id not a UUID", ExpectEither, set("conversation_id", "conversation-42")},
		{"empty message_type", ExpectPublished, set("message_type", "")},
		{"long message_type", ExpectPublished, set("message_type", strings.Repeat("t", 200))},
		{"very long message_type", ExpectEither, set("message_type", strings.Repeat("t", 5000))},
		{"message_type not UTF-8", ExpectEither, set("message_type", "caf\xe9")},
		{"NUL in tenant_id", ExpectEither, set("tenant_id", "a\x00b")},
		{"empty content_type", ExpectPublished, set("content_type", "")},
		{"empty ordering_key", ExpectPublished, set("ordering_key", "")},
		{"past expires_at", ExpectDead, setTime("expires_at", -time.Hour)},
		{"far expires_at", ExpectPublished, setTime("expires_at", 24*time.Hour)},
		{"near-future available_at", ExpectPublished, setTime("available_at", 300*time.Millisecond)},
		{"available_at a year ago", ExpectPublished, setTime("available_at", -365*24*time.Hour)},
		{"created_at in year 1001", ExpectPublished, func(r *HostileRow, _ time.Time) {
			r.Columns["created_at"] = Value{Arg: time.Date(1001, 1, 1, 0, 0, 0, 0, time.UTC)}
		}},
		{"lapsed_claims at MaxClaims", ExpectPublished, set("lapsed_claims", hostileMaxClaims)},
		{"claim_count at the top of INT", ExpectPublished, set("claim_count", 2147483647)},
		{"attempts at the top of INT", ExpectPublished, set("attempts", 2147483647)},
		{"attempts at MaxAttempts", ExpectPublished, set("attempts", 10)},
		{"negative attempts", ExpectEither, set("attempts", -5)},
		{"negative lapsed_claims", ExpectEither, set("lapsed_claims", -1)},
	}
}

// SQLEdge is an edge written as an SQL literal of the dialect.
func SQLEdge(name string, expect Expect, column, literal string) Edge {
	return Edge{Name: name, Expect: expect, Apply: setSQL(column, literal)}
}

// hostileMaxClaims is the dispatcher's MaxClaims in RunHostile.
const hostileMaxClaims = 5

// HostileRows returns n rows, about half of them plain good rows and the
// others with one to three edges picked from edges by rng.
func HostileRows(rng *rand.Rand, edges []Edge, n int, now time.Time) []HostileRow {
	picks := make([]byte, n*3)
	for i := range picks {
		picks[i] = byte(rng.IntN(256))
	}
	return HostileRowsFrom(picks, edges, now)
}

// HostileRowsFrom returns rows chosen by picks, three bytes a row: the
// first says how many edges the row gets (none for about half), the others
// which. Fuzz targets derive rows from their input this way.
func HostileRowsFrom(picks []byte, edges []Edge, now time.Time) []HostileRow {
	var rows []HostileRow
	for i := 0; i+2 < len(picks); i += 3 {
		r := goodRow(len(rows))
		if len(edges) > 0 {
			count := int(picks[i] % 6) // 0-2: none, 3-4: one, 5: two
			switch {
			case count < 3:
				count = 0
			case count < 5:
				count = 1
			default:
				count = 2
			}
			touched := map[string]bool{}
			for j := range count {
				e := edges[int(picks[i+1+j])%len(edges)]
				before := maps.Clone(r.Columns)
				e.Apply(&r, now)
				applied := false
				for col, v := range r.Columns {
					old, had := before[col]
					switch {
					case had && reflect.DeepEqual(old, v):
					case touched[col]:
						r.Columns[col] = old // the earlier edge keeps its column
					default:
						touched[col], applied = true, true
					}
				}
				if applied {
					r.Edges = append(r.Edges, e.Name)
					r.Expect = max(r.Expect, e.Expect)
				}
			}
		}
		rows = append(rows, r)
	}
	return rows
}

// goodRow is a row a well-behaved producer writes: the required columns and
// a few optional ones.
func goodRow(n int) HostileRow {
	id := reliar.NewMessageID()
	return HostileRow{
		ID: id,
		Columns: map[string]Value{
			"id":           {Arg: id.String()},
			"message_type": {Arg: "storetest.hostile"},
			"payload":      {Arg: []byte(`{"n":` + strings.Repeat("1", 1+n%5) + `}`)},
			"metadata":     {Arg: `{"routing":{"source":"another-language"}}`},
			"headers":      {Arg: `{"x-producer":"plain-sql"}`},
		},
	}
}
