package main

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// BenchmarkRelayFairTenantLatency measures issue 21's relay-level threshold:
// behind a 200,000-row plain-SQL backlog of one tenant, a relay at default
// settings publishing to JetStream, and another tenant committing 25
// messages a second once the backlog drains. It reports that tenant's
// commit → arrival at a subscriber of the stream, p50 and p99 over 100
// messages, with --fair tenant and, for comparison, --fair unordered. Run
// it alone, as a measurement (BENCHMARKS.md):
//
//	cd cmd/reliar && go test -run '^$' -bench RelayFairTenantLatency -benchtime 1x .
func BenchmarkRelayFairTenantLatency(b *testing.B) {
	for _, mode := range []string{"tenant", "unordered"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				p50, p99 := relayFairLatency(b, mode)
				b.ReportMetric(p50, "p50-ms")
				b.ReportMetric(p99, "p99-ms")
			}
		})
	}
}

// relayFairLatency runs the scenario once and returns the small tenant's
// commit → arrival p50 and p99 in milliseconds.
func relayFairLatency(b *testing.B, mode string) (p50, p99 float64) {
	const backlog, small, every = 200_000, 100, 40 * time.Millisecond
	db, js := newPG(b), newJetStream(b)
	db.migrate(b)
	if _, err := db.pool.Exec(b.Context(), `INSERT INTO `+db.table()+` (id, message_type, payload, tenant_id)
		SELECT gen_random_uuid(), 'big', convert_to(format('{"n":%s}', i), 'UTF8'), 'big' FROM generate_series(1, $1) AS i`, backlog); err != nil {
		b.Fatal(err)
	}
	if _, err := db.pool.Exec(b.Context(), `ANALYZE `+db.table()); err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	sub, err := js.nc.Subscribe(js.prefix+".small", func(m *nats.Msg) {
		mu.Lock()
		arrived[m.Header.Get("ce-id")] = time.Now()
		mu.Unlock()
	})
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Unsubscribe()
	startRelay(b, "--database-url", postgresURL, "--schema", db.schema, "--broker", natsURL, "--subject-prefix", js.prefix, "--fair", mode)
	waitFor(b, "the backlog draining", func() bool { return db.count(b, "published_at IS NOT NULL") > 0 })
	committed := make(map[string]time.Time, small)
	tick := time.NewTicker(every)
	for range small {
		<-tick.C
		var id string
		if err := db.pool.QueryRow(b.Context(), `INSERT INTO `+db.table()+` (id, message_type, payload, tenant_id)
			VALUES (gen_random_uuid(), 'small', '\x7b7d', 'small') RETURNING id::text`).Scan(&id); err != nil {
			b.Fatal(err)
		}
		committed[id] = time.Now()
	}
	tick.Stop()
	deadline := time.Now().Add(5 * time.Minute)
	var lat []float64
	for time.Now().Before(deadline) {
		mu.Lock()
		lat = lat[:0]
		for id, c := range committed {
			if a, ok := arrived[id]; ok {
				lat = append(lat, float64(a.Sub(c).Microseconds())/1000)
			}
		}
		mu.Unlock()
		if len(lat) == small {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(lat) < small {
		b.Fatalf("%d of the small tenant's %d messages arrived", len(lat), small)
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100]
}
