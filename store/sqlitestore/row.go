package sqlitestore

import (
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// rowColumns are the columns rawRow.Scan reads, in its order.
const rowColumns = outboxsql.RowColumns

// rawRow holds the columns of rowColumns as stored, times in microseconds.
type rawRow = outboxsql.Raw[int64]

// micros is how the store keeps times: INTEGER microseconds since the Unix
// epoch, which sort and compare exactly.
var micros = outboxsql.TimeCodec[int64]{Decode: fromMicros, Encode: toMicros}

// toMicros encodes a time as stored: microseconds since the Unix epoch.
func toMicros(t time.Time) int64 { return t.UnixMicro() }

// fromMicros decodes a stored time, in UTC.
func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }
