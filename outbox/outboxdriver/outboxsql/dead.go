package outboxsql

import (
	"database/sql"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// DeadPage reads one page of ListDead from rows, which hold RowColumns
// followed by dead_reason, dead_at and last_error, and closes them. Rows
// that cannot be decoded come back in Poisoned. NextAfterSequence, the
// largest sequence scanned, is set only when the page holds limit rows. The
// error, the driver's, comes with an empty page.
func DeadPage[T any](rows *sql.Rows, limit int, c TimeCodec[T]) (outboxdriver.DeadLetterPage, error) {
	defer rows.Close()
	var page outboxdriver.DeadLetterPage
	scanned := 0
	var last int64
	for rows.Next() {
		var raw Raw[T]
		var reason string
		var deadAt T
		var lastError sql.NullString
		if err := raw.Scan(rows, &reason, &deadAt, &lastError); err != nil {
			return outboxdriver.DeadLetterPage{}, err
		}
		scanned++
		last = raw.Sequence
		env, err := raw.Decode(c)
		if err != nil {
			page.Poisoned = append(page.Poisoned, outboxdriver.PoisonedRecord{
				ID: raw.MessageID(), Sequence: raw.Sequence, Error: err.Error(),
			})
			continue
		}
		page.Records = append(page.Records, outboxdriver.DeadRecord{
			Envelope:   env,
			DeadReason: outboxdriver.DeadReason(reason),
			DeadAt:     c.Decode(deadAt),
			Attempts:   int(raw.Attempts),
			LastError:  lastError.String,
		})
	}
	if err := rows.Err(); err != nil {
		return outboxdriver.DeadLetterPage{}, err
	}
	if scanned == limit {
		page.NextAfterSequence = &last
	}
	return page, nil
}
