package prometheus_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	reliarprom "github.com/reliar/reliar/observability/prometheus"
)

// BenchmarkPublished measures the per-message cost on the dispatcher's hot
// path: the type cap lookup, a counter and a histogram observation.
func BenchmarkPublished(b *testing.B) {
	m, err := reliarprom.New(prometheus.NewRegistry())
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
