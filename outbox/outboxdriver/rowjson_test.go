package outboxdriver

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/reliar/reliar"
)

// metadataDocs are documents of the shapes stores hold: what NewRow writes,
// PostgreSQL's jsonb rendering of it (spaces after separators, keys
// reordered), full Metadata documents written by hand, and documents the
// fast path must leave to encoding/json.
var metadataDocs = []string{
	`{"delivery":{"sent_at":"2026-11-30T02:09:45.123456789Z"}}`,
	`{"delivery": {"sent_at": "2026-11-30T02:09:45.123456+00:00"}}`,
	`{"trace": {"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "tracestate": "k=v"}, "routing": {"source": "orders", "reply_to": "r", "destination": "d"}, "delivery": {"sent_at": "2026-11-30T02:09:45Z", "deduplication_id": "dd"}}`,
	`{"correlation":{"correlation_id":"c","conversation_id":"0192f6a8-7e36-7b7a-8b5e-6f0a1d2c3b4a","causation_id":"0192f6a8-7e36-7b7a-8b5e-6f0a1d2c3b4b","request_id":"0192f6a8-7e36-7b7a-8b5e-6f0a1d2c3b4c"},"tenant_id":"acme","delivery":{"expires_at":"2027-01-01T00:00:00Z","content_type":"application/json"}}`,
	" \t\n{ } \r\n",
	`{}`,
	`{"routing":{"source":"zürich"}}`,
	`{"routing":{"source":"a\"b"}}`,
	`{"routing":{"source":"\u00e9"}}`,
	`{"Routing":{"Source":"x"}}`,
	`{"routing":{"source":null}}`,
	`{"routing":null}`,
	`{"tenant_id":5}`,
	`{"extra":"x"}`,
	`{"delivery":{"sent_at":"yesterday"}}`,
	`{"correlation":{"conversation_id":"nope"}}`,
	`{"correlation":{"causation_id":null}}`,
	`{"routing":{"source":"a","source":"b"}}`,
	"{\"routing\":{\"source\":\"\xff\"}}",
	`{"routing":{"source":"a"}} x`,
	`{"routing":{"source":"a"},}`,
	`{"routing":{"source":"a"}`,
	`[]`,
	`"s"`,
	``,
}

var headerDocs = []string{
	`{"k":"v"}`,
	`{"a": "1", "b": "2"}`,
	`{}`,
	`{"k":"v","k":"w"}`,
	`{"k":"\n"}`,
	`{"k":1}`,
	`{"k":null}`,
	`[]`,
	`{"k":"v"`,
	`null`,
}

// The fast path gives exactly what encoding/json gives, or steps aside.
func TestDecodeMetadataMatchesEncodingJSON(t *testing.T) {
	for _, doc := range metadataDocs {
		checkMetadata(t, []byte(doc))
	}
}

func TestDecodeHeadersMatchesEncodingJSON(t *testing.T) {
	for _, doc := range headerDocs {
		checkHeaders(t, []byte(doc))
	}
}

// The documents NewRow writes take the fast path.
func TestFastPathTakesWrittenDocuments(t *testing.T) {
	for _, doc := range metadataDocs[:7] {
		var m reliar.Metadata
		if !scanMetadata([]byte(doc), &m) {
			t.Errorf("fast path refused %s", doc)
		}
	}
	if _, ok := scanHeaders([]byte(headerDocs[1])); !ok {
		t.Errorf("fast path refused %s", headerDocs[1])
	}
}

func checkMetadata(t *testing.T, b []byte) {
	t.Helper()
	var want reliar.Metadata
	wantErr := json.Unmarshal(b, &want)
	var got reliar.Metadata
	err := decodeMetadata(b, &got)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, encoding/json %v", b, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %+v\nwant %+v", b, got, want)
	}
	var fast reliar.Metadata
	if scanMetadata(b, &fast) && (wantErr != nil || !reflect.DeepEqual(fast, want)) {
		t.Fatalf("%q: fast path accepted what encoding/json decodes differently (%v)", b, wantErr)
	}
}

func checkHeaders(t *testing.T, b []byte) {
	t.Helper()
	var want map[string]string
	wantErr := json.Unmarshal(b, &want)
	got, err := decodeHeaders(b)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, encoding/json %v", b, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: got %v, want %v", b, got, want)
	}
}

func FuzzDecodeMetadata(f *testing.F) {
	for _, doc := range metadataDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkMetadata(t, b) })
}

func FuzzDecodeHeaders(f *testing.F) {
	for _, doc := range headerDocs {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkHeaders(t, b) })
}

// metadataValues are the metadata documents NewRow is asked to encode:
// plain, empty, and values encoding/json escapes or refuses.
func metadataValues() []reliar.Metadata {
	sent := time.Date(2026, 11, 30, 2, 9, 45, 123456789, time.UTC)
	local := time.Date(2026, 11, 30, 2, 9, 45, 0, time.FixedZone("x", 3600))
	zero := time.Time{}
	far := time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	return []reliar.Metadata{
		{},
		{Delivery: reliar.Delivery{SentAt: &sent}},
		{Delivery: reliar.Delivery{SentAt: &local, DeduplicationID: "d-1"}},
		{Delivery: reliar.Delivery{SentAt: &zero}},
		{Delivery: reliar.Delivery{SentAt: &far}},
		{Delivery: reliar.Delivery{DeduplicationID: "only"}},
		{Trace: reliar.Trace{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},
		{Trace: reliar.Trace{Tracestate: "k=v"}, Routing: reliar.Routing{ReplyTo: "r"}},
		{Routing: reliar.Routing{Source: "orders", Destination: "billing", ReplyTo: "x"}, Delivery: reliar.Delivery{SentAt: &sent}},
		{Routing: reliar.Routing{Source: "a<b>&c"}},
		{Routing: reliar.Routing{Source: "quote\"back\\slash"}},
		{Routing: reliar.Routing{Source: "zürich"}},
		{Routing: reliar.Routing{Source: "bad\xff"}},
		{Routing: reliar.Routing{Source: "tab\tnl\n"}},
		{TenantID: "acme", Delivery: reliar.Delivery{ContentType: "x", SentAt: &sent}}, // columns of their own: not in the document
	}
}

// The encoder writes exactly what encoding/json writes.
func TestEncodeMetadataMatchesEncodingJSON(t *testing.T) {
	for _, m := range metadataValues() {
		checkEncode(t, m)
	}
}

func checkEncode(t *testing.T, m reliar.Metadata) {
	t.Helper()
	want, wantErr := json.Marshal(newMetadataDoc(&m))
	got, err := encodeMetadata(&m)
	if (err != nil) != (wantErr != nil) || string(got) != string(want) {
		t.Fatalf("%+v:\n got %s (%v)\nwant %s (%v)", m, got, err, want, wantErr)
	}
}

func FuzzEncodeMetadata(f *testing.F) {
	f.Add("00-ab-01", "", "orders", "", "", "d", int64(1764468585123456789), true)
	f.Add("", "k=v", "", "b<", "\"", "", int64(0), false)
	f.Fuzz(func(t *testing.T, tp, ts, src, dst, reply, dedup string, nanos int64, withTime bool) {
		m := reliar.Metadata{
			Trace:   reliar.Trace{Traceparent: tp, Tracestate: ts},
			Routing: reliar.Routing{Source: src, Destination: dst, ReplyTo: reply},
		}
		m.Delivery.DeduplicationID = dedup
		if withTime {
			sent := time.Unix(0, nanos).In(time.FixedZone("f", int(nanos%50000)))
			m.Delivery.SentAt = &sent
		}
		checkEncode(t, m)
	})
}
