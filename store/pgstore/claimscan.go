package pgstore

import (
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// claimScanner decodes the rows a claim returns. It is made once per claim
// and reused for every row, so that a row costs no scan destinations,
// reflection or closures: nullable columns scan into pgtype values, the
// metadata and headers documents are read in place from the driver's buffer
// (they are decoded before the next row is read), payloads are copied into
// one buffer per claim, and the few distinct message types and content
// types are shared strings. A claim's rows were the largest client cost of
// dispatching from PostgreSQL.
type claimScanner struct {
	id, conv, cause, req, token pgtype.UUID
	seq                         int64
	msgType, contentType        pgtype.DriverBytes
	payload, meta, headers      pgtype.DriverBytes
	msgVersion, attempts        int32
	claimCount, lapsed          int32
	corr, tenant, key           pgtype.Text
	expires, prevClaimed        pgtype.Timestamptz
	metaVersion                 pgtype.Int4
	created, available          time.Time
	reclaimed, exhausted        bool
	cursor                      pgtype.Text // the fair claim's next cursor
	more                        bool        // the fair claim's More

	dest    []any
	strings map[string]string
	arena   []byte
}

// newFairClaimScanner prepares a scanner for a fair claim, whose rows also
// carry the next cursor and the More flag.
func newFairClaimScanner() *claimScanner {
	c := newClaimScanner()
	c.dest = append(c.dest, &c.cursor, &c.more)
	return c
}

// newClaimScanner prepares a scanner for a claim.
func newClaimScanner() *claimScanner {
	c := &claimScanner{strings: make(map[string]string, 4)}
	// The order of envelopeColumns, then the claim's own columns.
	c.dest = []any{
		&c.id, &c.seq, &c.msgType, &c.msgVersion, &c.corr,
		&c.conv, &c.cause, &c.req, &c.contentType, &c.payload,
		&c.tenant, &c.expires, &c.key, &c.meta, &c.headers,
		&c.metaVersion, &c.created, &c.available, &c.attempts,
		&c.token, &c.claimCount, &c.lapsed, &c.reclaimed, &c.prevClaimed, &c.exhausted,
	}
	return c
}

// scan reads the current row into row and rec. row's metadata and headers
// alias the driver's buffer: decode them before the next row is read.
func (c *claimScanner) scan(rows pgx.Rows, row *outboxdriver.Row, rec *outboxdriver.Record) error {
	if err := rows.Scan(c.dest...); err != nil {
		return err
	}
	*row = outboxdriver.Row{
		ID:             c.id.Bytes,
		Sequence:       c.seq,
		MessageType:    c.intern(c.msgType),
		MessageVersion: int(c.msgVersion),
		ContentType:    c.intern(c.contentType),
		Payload:        c.copyPayload(),
		CorrelationID:  textPtr(c.corr),
		ConversationID: uuidPtr(c.conv),
		CausationID:    uuidPtr(c.cause),
		RequestID:      uuidPtr(c.req),
		TenantID:       textPtr(c.tenant),
		ExpiresAt:      timePtr(c.expires),
		OrderingKey:    textPtr(c.key),
		Metadata:       c.meta,
		Headers:        c.headers,
		CreatedAt:      c.created,
		Attempts:       int(c.attempts),
	}
	if c.metaVersion.Valid {
		v := int(c.metaVersion.Int32)
		row.MetadataVersion = &v
	}
	*rec = outboxdriver.Record{
		Token:         c.token.Bytes,
		Attempts:      int(c.attempts),
		ClaimCount:    int(c.claimCount),
		LapsedClaims:  int(c.lapsed),
		Reclaimed:     c.reclaimed,
		PrevClaimedAt: timePtr(c.prevClaimed),
		AvailableAt:   c.available,
	}
	return nil
}

// intern returns b as a string shared by every row of the claim.
func (c *claimScanner) intern(b []byte) string {
	if s, ok := c.strings[string(b)]; ok {
		return s
	}
	s := string(b)
	c.strings[s] = s
	return s
}

// copyPayload copies the payload into the claim's buffer. Each payload is
// capped at its own length, so that appending to one never writes over the
// next; a buffer that fills up is replaced by one twice its size (up to
// maxArena), and payloads already handed out keep the old one.
func (c *claimScanner) copyPayload() []byte {
	if c.payload == nil {
		return nil
	}
	if cap(c.arena)-len(c.arena) < len(c.payload) {
		c.arena = make([]byte, 0, max(min(2*cap(c.arena), maxArena), minArena, len(c.payload)))
	}
	start := len(c.arena)
	c.arena = append(c.arena, c.payload...)
	return c.arena[start:len(c.arena):len(c.arena)]
}

// The bounds of a claim's payload buffer: small claims allocate little,
// large ones a few buffers.
const (
	minArena = 4 << 10
	maxArena = 1 << 20
)

func textPtr(t pgtype.Text) *string {
	if !t.Valid {
		return nil
	}
	return &t.String
}

func timePtr(t pgtype.Timestamptz) *time.Time {
	if !t.Valid {
		return nil
	}
	return &t.Time
}
