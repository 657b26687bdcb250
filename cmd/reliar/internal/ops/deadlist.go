package ops

import (
	"fmt"
	"strconv"
	"time"

	"github.com/reliar/reliar/outbox"
)

// DeadListDocument is the JSON document of reliar dead list: one page of
// dead rows, and the cursor of the next page (null after the last).
type DeadListDocument struct {
	Records           []DeadRecordJSON `json:"records"`
	Poisoned          []PoisonedJSON   `json:"poisoned"`
	NextAfterSequence *int64           `json:"next_after_sequence"`
	// NextBeforeSequence is the next page's cursor of a newest-first
	// listing (the admin API's order=newest); absent otherwise.
	NextBeforeSequence *int64 `json:"next_before_sequence,omitempty"`
}

// DeadRecordJSON is one dead row of DeadListDocument.
type DeadRecordJSON struct {
	ID          string `json:"id"`
	Sequence    int64  `json:"sequence"`
	MessageType string `json:"message_type"`
	// TenantID is null for a row without a tenant.
	TenantID   *string `json:"tenant_id"`
	DeadReason string  `json:"dead_reason"`
	Attempts   int     `json:"attempts"`
	// LastError is at most 2 KiB of the row's last_error.
	LastError string    `json:"last_error"`
	DeadAt    time.Time `json:"dead_at"`
	// PayloadSize is the payload's length in bytes; the listing never
	// reads the payload itself (reliar dead show does).
	PayloadSize int `json:"payload_size"`
}

// PoisonedJSON is one dead row that cannot be decoded.
type PoisonedJSON struct {
	ID       string `json:"id"`
	Sequence int64  `json:"sequence"`
	Error    string `json:"error"`
}

// NewDeadListDocument converts a page of dead rows. Its slices are never
// nil, so that they encode as [] rather than null.
func NewDeadListDocument(page outbox.DeadLetterPage) DeadListDocument {
	doc := DeadListDocument{
		Records:            make([]DeadRecordJSON, 0, len(page.Records)),
		Poisoned:           make([]PoisonedJSON, 0, len(page.Poisoned)),
		NextAfterSequence:  page.NextAfterSequence,
		NextBeforeSequence: page.NextBeforeSequence,
	}
	for _, r := range page.Records {
		var tenant *string
		if t := r.Envelope.Metadata.TenantID; t != "" {
			tenant = &t
		}
		doc.Records = append(doc.Records, DeadRecordJSON{
			ID:          r.Envelope.ID.String(),
			Sequence:    r.Envelope.Sequence,
			MessageType: r.Envelope.MessageType,
			TenantID:    tenant,
			DeadReason:  string(r.DeadReason),
			Attempts:    r.Attempts,
			LastError:   r.LastError,
			DeadAt:      r.DeadAt.UTC(),
			PayloadSize: r.PayloadSize,
		})
	}
	for _, p := range page.Poisoned {
		doc.Poisoned = append(doc.Poisoned, PoisonedJSON{ID: p.ID.String(), Sequence: p.Sequence, Error: p.Error})
	}
	return doc
}

// lastErrorWidth is how much of last_error a table shows.
const lastErrorWidth = 72

// DeadTable renders a page of dead rows as aligned tables: the records, then
// the poisoned rows, if any. It returns no lines for an empty page.
func DeadTable(page outbox.DeadLetterPage) []string {
	var lines []string
	if len(page.Records) > 0 {
		rows := [][]string{{"SEQUENCE", "ID", "TYPE", "TENANT", "REASON", "ATTEMPTS", "DEAD_AT", "SIZE", "LAST_ERROR"}}
		for _, r := range page.Records {
			tenant := r.Envelope.Metadata.TenantID
			if tenant == "" {
				tenant = "-"
			}
			rows = append(rows, []string{
				strconv.FormatInt(r.Envelope.Sequence, 10), r.Envelope.ID.String(), r.Envelope.MessageType,
				tenant, string(r.DeadReason), strconv.Itoa(r.Attempts),
				r.DeadAt.UTC().Format(time.RFC3339), strconv.Itoa(r.PayloadSize), Clip(r.LastError, lastErrorWidth),
			})
		}
		lines = append(lines, Table(rows, 2)...)
	}
	if len(page.Poisoned) > 0 {
		rows := [][]string{{"SEQUENCE", "ID", "UNDECODABLE"}}
		for _, p := range page.Poisoned {
			rows = append(rows, []string{strconv.FormatInt(p.Sequence, 10), p.ID.String(), Clip(p.Error, lastErrorWidth)})
		}
		if len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, Table(rows, 2)...)
	}
	return lines
}

// DeadListSummary is reliar dead list's last line.
func DeadListSummary(page outbox.DeadLetterPage) string {
	s := fmt.Sprintf("dead list: %d records, %d poisoned", len(page.Records), len(page.Poisoned))
	if page.NextAfterSequence != nil {
		return s + fmt.Sprintf("; more after sequence %d (--after %d)", *page.NextAfterSequence, *page.NextAfterSequence)
	}
	return s + "; end of list"
}
