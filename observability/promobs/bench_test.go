package promobs_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reliar/reliar/observability/promobs"
)

// BenchmarkPublished measures the per-message cost on the dispatcher's hot
// path: the type cap lookup, a counter and a histogram observation.
func BenchmarkPublished(b *testing.B) {
	m, err := promobs.New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Published("orders.placed", time.Millisecond)
		}
	})
}
