package outboxsql

import (
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// testMicros stores times as microseconds since the Unix epoch.
var testMicros = TimeCodec[int64]{
	Decode: func(us int64) time.Time { return time.UnixMicro(us).UTC() },
	Encode: func(t time.Time) int64 { return t.UnixMicro() },
}

// goodRaw is a stored row that decodes.
func goodRaw(id reliar.MessageID, at time.Time) Raw[int64] {
	return Raw[int64]{
		Sequence:        7,
		ID:              id.String(),
		MessageType:     "order.placed",
		MessageVersion:  2,
		CorrelationID:   sql.NullString{String: "corr", Valid: true},
		ConversationID:  sql.NullString{String: id.String(), Valid: true},
		ContentType:     "application/json",
		Payload:         []byte(`{"a":1}`),
		TenantID:        sql.NullString{String: "acme", Valid: true},
		ExpiresAt:       sql.Null[int64]{V: at.Add(time.Hour).UnixMicro(), Valid: true},
		OrderingKey:     sql.NullString{String: "k", Valid: true},
		Metadata:        sql.NullString{String: `{}`, Valid: true},
		Headers:         sql.NullString{String: `{"h":"v"}`, Valid: true},
		MetadataVersion: sql.NullInt64{Int64: outboxdriver.MetadataVersion, Valid: true},
		CreatedAt:       at.UnixMicro(),
		AvailableAt:     at.UnixMicro(),
		Attempts:        3,
	}
}

func TestRawDecode(t *testing.T) {
	id := reliar.NewMessageID()
	at := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	tests := []struct {
		name   string
		change func(r *Raw[int64])
		check  func(t *testing.T, e reliar.SerializedEnvelope)
		reason string // when not empty, the decode error contains it
	}{
		{name: "every column", check: func(t *testing.T, e reliar.SerializedEnvelope) {
			if e.ID != id || e.Sequence != 7 || e.MessageType != "order.placed" || e.MessageVersion != 2 ||
				e.Attempt != 4 || !e.CreatedAt.Equal(at) || e.OrderingKey != "k" || e.Headers["h"] != "v" ||
				e.Metadata.TenantID != "acme" || e.Metadata.Correlation.CorrelationID != "corr" ||
				e.Metadata.Delivery.ExpiresAt == nil || !e.Metadata.Delivery.ExpiresAt.Equal(at.Add(time.Hour)) {
				t.Fatalf("envelope %+v", e)
			}
		}},
		{name: "nulls", change: func(r *Raw[int64]) {
			r.Payload, r.Metadata, r.Headers, r.ExpiresAt = nil, sql.NullString{}, sql.NullString{}, sql.Null[int64]{}
			r.ConversationID, r.MetadataVersion = sql.NullString{}, sql.NullInt64{}
		}, check: func(t *testing.T, e reliar.SerializedEnvelope) {
			if e.Payload == nil || len(e.Payload) != 0 || e.Headers != nil || e.Metadata.Delivery.ExpiresAt != nil ||
				e.Metadata.Correlation.ConversationID != id {
				t.Fatalf("envelope %+v", e)
			}
		}},
		{name: "causation and request ids", change: func(r *Raw[int64]) {
			r.CausationID = sql.NullString{String: id.String(), Valid: true}
			r.RequestID = sql.NullString{String: id.String(), Valid: true}
		}, check: func(t *testing.T, e reliar.SerializedEnvelope) {
			c := e.Metadata.Correlation
			if c.CausationID == nil || *c.CausationID != id || c.RequestID == nil || *c.RequestID != id {
				t.Fatalf("correlation %+v", c)
			}
		}},
		{name: "id not a UUID", change: func(r *Raw[int64]) { r.ID = "x" }, reason: "id is not a UUID"},
		{name: "conversation id not a UUID", change: func(r *Raw[int64]) { r.ConversationID.String = "x" }, reason: "conversation_id"},
		{name: "causation id not a UUID", change: func(r *Raw[int64]) { r.CausationID = sql.NullString{String: "x", Valid: true} }, reason: "causation_id"},
		{name: "request id not a UUID", change: func(r *Raw[int64]) { r.RequestID = sql.NullString{String: "x", Valid: true} }, reason: "request_id"},
		{name: "bad metadata", change: func(r *Raw[int64]) { r.Metadata.String = "{" }, reason: "metadata"},
		{name: "unknown metadata version", change: func(r *Raw[int64]) { r.MetadataVersion.Int64 = 99 }, reason: "metadata_version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := goodRaw(id, at)
			if tt.change != nil {
				tt.change(&r)
			}
			e, err := r.Decode(testMicros)
			if tt.reason != "" {
				if !errors.Is(err, outboxdriver.ErrUndecodable) || !strings.Contains(err.Error(), tt.reason) {
					t.Fatalf("Decode: %v, want an undecodable row for %s", err, tt.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, e)
		})
	}
}

func TestRawMessageID(t *testing.T) {
	id := reliar.NewMessageID()
	for _, tt := range []struct {
		stored string
		want   reliar.MessageID
	}{{id.String(), id}, {"not-a-uuid", uuid.Nil}} {
		r := Raw[int64]{ID: tt.stored}
		if got := r.MessageID(); got != tt.want {
			t.Errorf("MessageID of %q = %v, want %v", tt.stored, got, tt.want)
		}
	}
}

// scanFunc is a Scanner.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

func TestRawScan(t *testing.T) {
	var extra string
	var r Raw[int64]
	err := r.Scan(scanFunc(func(dest ...any) error {
		if len(dest) != strings.Count(RowColumns, ",")+2 {
			t.Fatalf("%d destinations for the columns and one extra", len(dest))
		}
		*dest[0].(*int64) = 42
		*dest[1].(*string) = "id"
		*dest[len(dest)-1].(*string) = "extra"
		return nil
	}), &extra)
	if err != nil || r.Sequence != 42 || r.ID != "id" || extra != "extra" {
		t.Fatalf("Scan: %v, %+v, %q", err, r, extra)
	}
	boom := errors.New("boom")
	if err := r.Scan(scanFunc(func(...any) error { return boom })); !errors.Is(err, boom) {
		t.Fatalf("Scan error %v, want %v", err, boom)
	}
}

func TestTimeCodecNull(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	if got := testMicros.Null(sql.Null[int64]{}); got != nil {
		t.Errorf("Null(NULL) = %v", got)
	}
	if got := testMicros.Null(sql.Null[int64]{V: at.UnixMicro(), Valid: true}); got == nil || !got.Equal(at) {
		t.Errorf("Null = %v, want %v", got, at)
	}
	if got := testMicros.NullArg(nil); got != nil {
		t.Errorf("NullArg(nil) = %v", got)
	}
	if got := testMicros.NullArg(&at); got != at.UnixMicro() {
		t.Errorf("NullArg = %v, want %d", got, at.UnixMicro())
	}
}
