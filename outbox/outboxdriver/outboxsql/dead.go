package outboxsql

import (
	"database/sql"
	"strconv"
	"strings"

	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Listing is how a dialect spells what a dead-letter listing reads of a
// row instead of the whole of it.
type Listing struct {
	// Prefix returns SQL for the first n characters of a text column, such
	// as substr(col, 1, n) or LEFT(col, n).
	Prefix func(col string, n int) string
	// Octets returns SQL for the length in bytes of a blob column, such as
	// length(col) or OCTET_LENGTH(col).
	Octets func(col string) string
}

// Columns returns RowColumns as a listing reads them — no payload (NULL),
// the metadata and headers documents cut a character past
// outboxdriver.ListedDocumentBytes — followed by the payload's length,
// dead_reason, dead_at and last_error cut a character past
// outboxdriver.ListedLastErrorBytes: what DeadPage scans.
func (l Listing) Columns() string {
	doc := outboxdriver.ListedDocumentBytes + 1
	cols := strings.Split(RowColumns, ",")
	for i, c := range cols {
		switch name := strings.TrimSpace(c); name {
		case "payload":
			cols[i] = " NULL"
		case "metadata", "headers":
			cols[i] = " " + l.Prefix(name, doc)
		}
	}
	return strings.Join(cols, ",") + ", " + l.Octets("payload") + ", dead_reason, dead_at, " +
		l.Prefix("last_error", outboxdriver.ListedLastErrorBytes+1)
}

// DeadPage reads one page of ListDead from rows, which hold the columns of
// Listing.Columns, and closes them. Rows that cannot be decoded come back in
// Poisoned. NextAfterSequence, the largest sequence scanned, is set only when
// the page holds limit rows. The error, the driver's, comes with an empty
// page.
func DeadPage[T any](rows *sql.Rows, limit int, c TimeCodec[T]) (outboxdriver.DeadLetterPage, error) {
	defer rows.Close()
	var page outboxdriver.DeadLetterPage
	scanned := 0
	var last int64
	for rows.Next() {
		var raw Raw[T]
		var size int64
		var reason string
		var deadAt T
		var lastError sql.NullString
		if err := raw.Scan(rows, &size, &reason, &deadAt, &lastError); err != nil {
			return outboxdriver.DeadLetterPage{}, err
		}
		scanned++
		last = raw.Sequence
		row, err := raw.Row(c)
		var rec outboxdriver.DeadRecord
		if err == nil {
			rec, err = outboxdriver.ListedRow{
				Row: row, PayloadSize: int(size), DeadReason: outboxdriver.DeadReason(reason),
				DeadAt: c.Decode(deadAt), LastError: lastError.String,
			}.Record()
		}
		if err != nil {
			page.Poisoned = append(page.Poisoned, outboxdriver.PoisonedRecord{
				ID: raw.MessageID(), Sequence: raw.Sequence, Error: err.Error(),
			})
			continue
		}
		page.Records = append(page.Records, rec)
	}
	if err := rows.Err(); err != nil {
		return outboxdriver.DeadLetterPage{}, err
	}
	if scanned == limit {
		page.NextAfterSequence = &last
	}
	return page, nil
}

// ScanDeadPayload reads the answer of a dead-payload query — sequence,
// message_type, content_type, the payload's first bytes and its length —
// into p; found is false when the query found no row.
func ScanDeadPayload(row *sql.Row, p *outboxdriver.DeadPayload) (found bool, err error) {
	var size int64
	err = row.Scan(&p.Sequence, &p.MessageType, &p.ContentType, &p.Payload, &size)
	if err == sql.ErrNoRows {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	p.Size = int(size)
	p.Cut = len(p.Payload) < p.Size
	if p.Payload == nil {
		p.Payload = []byte{}
	}
	return true, nil
}

// PrefixSubstr is the Listing.Prefix of dialects with substr(col, 1, n).
func PrefixSubstr(col string, n int) string { return "substr(" + col + ", 1, " + strconv.Itoa(n) + ")" }
