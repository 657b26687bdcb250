package mysqlstore

import (
	"time"

	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// rowColumns are the columns rawRow.Scan reads, in its order.
const rowColumns = outboxsql.RowColumns

// rawRow holds the columns of rowColumns as stored, times as DATETIME(6).
type rawRow = outboxsql.Raw[time.Time]

// datetime is how the store keeps times: DATETIME(6) in UTC, which the
// driver reads as time.Time (the DSN sets parseTime=true and keeps loc=UTC).
var datetime = outboxsql.TimeCodec[time.Time]{
	Decode: time.Time.UTC,
	Encode: func(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) },
}

// micros is a duration in whole microseconds, for INTERVAL ? MICROSECOND.
func micros(d time.Duration) int64 { return d.Microseconds() }
