package outboxdriver

import "time"

// ListedRow is what a dead-letter listing read of one row: the row with no
// payload and with its metadata and headers documents as read — at most a
// few bytes more than ListedDocumentBytes, so that a longer one shows as
// longer —, and the dead columns, last_error read the same way.
type ListedRow struct {
	Row         Row
	PayloadSize int
	DeadReason  DeadReason
	DeadAt      time.Time
	LastError   string
}

// Record decodes a listed row for a DeadLetterPage. A document longer than
// ListedDocumentBytes is not decoded: the envelope then holds what the
// columns hold, and the record says it was cut. last_error is cut to
// ListedLastErrorBytes. The error is the decode error of a poisoned row.
func (l ListedRow) Record() (DeadRecord, error) {
	row := l.Row
	row.Payload = nil
	rec := DeadRecord{DeadReason: l.DeadReason, DeadAt: l.DeadAt, Attempts: row.Attempts, PayloadSize: l.PayloadSize}
	if len(row.Metadata) > ListedDocumentBytes {
		row.Metadata, rec.MetadataCut = nil, true
	}
	if len(row.Headers) > ListedDocumentBytes {
		row.Headers, rec.HeadersCut = nil, true
	}
	env, err := row.Envelope()
	if err != nil {
		return DeadRecord{}, err
	}
	env.Payload = nil
	rec.Envelope = env
	rec.LastError, rec.LastErrorCut = CutLastError(l.LastError)
	return rec, nil
}
