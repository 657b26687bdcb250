package outboxsql

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// deadRow is a scripted row of Listing.Columns: RowColumns without the
// payload, followed by the payload's length, dead_reason, dead_at and
// last_error.
func deadRow(seq int64, id string, deadAt time.Time, lastError any) []driverValue {
	return []driverValue{
		seq, id, "t", int64(1), nil,
		nil, nil, nil, "application/json", nil, nil,
		nil, nil, nil, nil, nil, deadAt.UnixMicro(),
		deadAt.UnixMicro(), int64(5),
		int64(2), "max_attempts", deadAt.UnixMicro(), lastError,
	}
}

func TestDeadPage(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	good := []reliar.MessageID{reliar.NewMessageID(), reliar.NewMessageID()}
	cols := make([]string, len(deadRow(0, "", at, nil)))
	tests := []struct {
		name     string
		rows     [][]driverValue
		limit    int
		records  int
		poisoned int
		next     int64 // 0 for no next page
		wantErr  error
	}{
		{name: "empty", limit: 10},
		{name: "short page", limit: 10, records: 2, rows: [][]driverValue{
			deadRow(3, good[0].String(), at, "boom"), deadRow(8, good[1].String(), at, nil)}},
		{name: "full page", limit: 2, records: 2, next: 8, rows: [][]driverValue{
			deadRow(3, good[0].String(), at, "boom"), deadRow(8, good[1].String(), at, nil)}},
		{name: "poisoned row counts toward the page", limit: 2, records: 1, poisoned: 1, next: 9, rows: [][]driverValue{
			deadRow(3, good[0].String(), at, nil), deadRow(9, "not-a-uuid", at, nil)}},
		{name: "scan error", limit: 10, wantErr: errors.New("converting"), rows: [][]driverValue{
			append(deadRow(3, good[0].String(), at, nil)[:18], "not a number", int64(2), "r", int64(0), nil)}},
		{name: "broken row", limit: 10, wantErr: errRow, rows: [][]driverValue{
			deadRow(3, good[0].String(), at, nil), {errRow}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDB{answer: func(string, []any) ([]string, [][]driverValue, error) { return cols, tt.rows, nil }}
			rows, err := f.open(t).QueryContext(t.Context(), "SELECT")
			if err != nil {
				t.Fatal(err)
			}
			page, err := DeadPage(rows, tt.limit, testMicros)
			if tt.wantErr != nil {
				if err == nil || (!errors.Is(err, tt.wantErr) && !strings.Contains(err.Error(), tt.wantErr.Error())) {
					t.Fatalf("DeadPage: %v, want %v", err, tt.wantErr)
				}
				if len(page.Records)+len(page.Poisoned) != 0 || page.NextAfterSequence != nil {
					t.Fatalf("a failed DeadPage returned %+v", page)
				}
				return
			}
			if err != nil || len(page.Records) != tt.records || len(page.Poisoned) != tt.poisoned {
				t.Fatalf("DeadPage = %+v, %v", page, err)
			}
			if (page.NextAfterSequence == nil) != (tt.next == 0) || (tt.next != 0 && *page.NextAfterSequence != tt.next) {
				t.Fatalf("NextAfterSequence = %v, want %d", page.NextAfterSequence, tt.next)
			}
			if tt.records > 0 {
				r := page.Records[0]
				if r.Envelope.ID != good[0] || r.DeadReason != outboxdriver.DeadReason("max_attempts") ||
					!r.DeadAt.Equal(at) || r.Attempts != 5 || r.PayloadSize != 2 || r.Envelope.Payload != nil {
					t.Fatalf("record %+v", r)
				}
			}
			if tt.poisoned > 0 {
				p := page.Poisoned[0]
				if p.Sequence != 9 || p.ID != (reliar.MessageID{}) || !strings.Contains(p.Error, "not a UUID") {
					t.Fatalf("poisoned %+v", p)
				}
			}
		})
	}
}

func TestListingColumns(t *testing.T) {
	l := Listing{Prefix: PrefixSubstr, Octets: func(c string) string { return "length(" + c + ")" }}
	got := l.Columns()
	for _, want := range []string{" NULL,", "substr(metadata, 1, 8193)", "substr(headers, 1, 8193)",
		"attempts, length(payload), dead_reason, dead_at, substr(last_error, 1, 2049)"} {
		if !strings.Contains(got, want) {
			t.Errorf("Columns() = %q, lacks %q", got, want)
		}
	}
	if strings.Contains(got, " payload,") {
		t.Errorf("Columns() reads the payload: %q", got)
	}
}
