package outboxdriver_test

import (
	"context"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// BenchmarkRowEnvelope measures decoding one claimed row, done for every
// row of every claim.
func BenchmarkRowEnvelope(b *testing.B) {
	m := reliar.NewMsg(order{N: 1})
	m.Headers = map[string]string{"x-request": "abc"}
	m.Metadata.TenantID = "acme"
	row, err := outboxdriver.NewRow(context.Background(), m, nil, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(row.Metadata)), "metadata-bytes")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := row.Envelope(); err != nil {
			b.Fatal(err)
		}
	}
}

// order is the message body of this package's tests.
type order struct {
	N int `json:"n"`
}

func (order) MessageType() string { return "orders.placed" }
