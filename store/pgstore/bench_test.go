package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// benchEnqueue measures transactions of perTx messages each through Enqueue.
func benchEnqueue(b *testing.B, perTx int, opts ...Option) {
	s := newStore(b, opts...)
	msgs := make([]reliar.Outgoing, perTx)
	b.ReportAllocs()
	for b.Loop() {
		enqueueOrders(b, s, msgs)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perTx), "ns/msg")
}

// enqueueOrders commits len(msgs) new order messages in one transaction,
// reusing msgs.
func enqueueOrders(b *testing.B, s *Store, msgs []reliar.Outgoing) {
	b.Helper()
	for i := range msgs {
		msgs[i] = reliar.NewMsg(orderPlaced{OrderID: "o-1"})
	}
	err := pgx.BeginFunc(b.Context(), sharedPool, func(tx pgx.Tx) error {
		_, err := s.Enqueue(b.Context(), tx, msgs...)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkEnqueue is one message per transaction.
func BenchmarkEnqueue(b *testing.B) { benchEnqueue(b, 1) }

// BenchmarkEnqueueWithoutNotify is BenchmarkEnqueue without pg_notify, to
// measure what the notification costs a committing transaction.
func BenchmarkEnqueueWithoutNotify(b *testing.B) { benchEnqueue(b, 1, WithoutNotify()) }

// BenchmarkEnqueueBatch100 is 100 messages per transaction, one round trip.
func BenchmarkEnqueueBatch100(b *testing.B) { benchEnqueue(b, 100) }

// BenchmarkRawSQLInsert is the baseline: a hand-written INSERT per message
// in a transaction, with the same columns Enqueue fills.
func BenchmarkRawSQLInsert(b *testing.B) {
	for _, perTx := range []int{1, 100} {
		b.Run(fmt.Sprint("perTx=", perTx), func(b *testing.B) {
			s := newStore(b)
			ctx := b.Context()
			insert := s.n.render(`INSERT INTO {{table}} (id, message_type, conversation_id, payload, metadata)
VALUES ($1, $2, $3, $4, $5::jsonb)`)
			b.ReportAllocs()
			for b.Loop() {
				err := pgx.BeginFunc(ctx, sharedPool, func(tx pgx.Tx) error {
					for range perTx {
						id := reliar.NewMessageID()
						if _, err := tx.Exec(ctx, insert, pgtype.UUID{Bytes: id, Valid: true}, "orders.placed",
							pgtype.UUID{Bytes: id, Valid: true}, []byte(`{"order_id":"o-1"}`), `{"correlation":{}}`); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perTx), "ns/msg")
		})
	}
}

// BenchmarkEnqueueVsRawInsert measures EnqueueBatch against its baseline,
// interleaved in one loop on one table so that both see the same table size
// and the same noise: each iteration commits 100 messages through Enqueue and
// 100 rows through a hand-written multi-row INSERT (unnest of arrays) that
// fills the columns Enqueue fills for such a message (the body marshalled,
// the message id as conversation id; no metadata document, since the send
// time is the row's created_at), without a notification.
// Metrics: ns per message of each, and their ratio (raw time over Enqueue
// time: above 1 means Enqueue is faster).
func BenchmarkEnqueueVsRawInsert(b *testing.B) {
	s := newStore(b)
	ctx := b.Context()
	insert := s.n.render(`INSERT INTO {{table}} (id, message_type, message_version, conversation_id,
    content_type, payload, metadata_version)
SELECT * FROM unnest($1::uuid[], $2::text[], $3::int4[], $4::uuid[], $5::text[], $6::bytea[], $7::int4[])`)
	const perTx = 100
	msgs := make([]reliar.Outgoing, perTx)
	ids := make([]pgtype.UUID, perTx)
	types := make([]string, perTx)
	versions := make([]int32, perTx)
	ctypes := make([]string, perTx)
	payloads := make([][]byte, perTx)
	var enqueue, raw time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		enqueueOrders(b, s, msgs)
		mid := time.Now()
		var err error
		for i := range perTx {
			ids[i] = pgtype.UUID{Bytes: reliar.NewMessageID(), Valid: true}
			types[i], versions[i], ctypes[i] = "orders.placed", 1, "application/json"
			if payloads[i], err = json.Marshal(orderPlaced{OrderID: "o-1"}); err != nil {
				b.Fatal(err)
			}
		}
		err = pgx.BeginFunc(ctx, sharedPool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, insert, ids, types, versions, ids, ctypes, payloads, versions)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		enqueue += mid.Sub(start)
		raw += time.Since(mid)
	}
	n := float64(b.N * perTx)
	b.ReportMetric(float64(enqueue.Nanoseconds())/n, "enqueue-ns/msg")
	b.ReportMetric(float64(raw.Nanoseconds())/n, "raw-ns/msg")
	b.ReportMetric(raw.Seconds()/enqueue.Seconds(), "raw/enqueue")
}

// BenchmarkClaimComplete acquires 100 rows and completes them; the refill
// is not timed.
func BenchmarkClaimComplete(b *testing.B) {
	s := newStore(b)
	ctx := b.Context()
	msgs := make([]reliar.Outgoing, 100)
	req := outboxdriver.AcquireRequest{Worker: "bench", BatchSize: 100, Lease: time.Minute}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for j := range msgs {
			msgs[j] = reliar.NewMsg(orderPlaced{OrderID: "o-1"})
		}
		if err := pgx.BeginFunc(context.WithoutCancel(ctx), sharedPool, func(tx pgx.Tx) error {
			_, err := s.Enqueue(ctx, tx, msgs...)
			return err
		}); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		batch, err := s.Acquire(ctx, req)
		if err != nil || len(batch.Records) != 100 {
			b.Fatalf("claimed %d rows: %v", len(batch.Records), err)
		}
		leases := make([]outboxdriver.Lease, len(batch.Records))
		for j, r := range batch.Records {
			leases[j] = r.Lease()
		}
		if n, err := s.Complete(ctx, leases); err != nil || n != 100 {
			b.Fatalf("completed %d rows: %v", n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/msg")
}

// BenchmarkEnqueueConcurrent measures enqueue throughput of several
// producers at once, with and without pg_notify: notifications take a
// cluster-wide lock while the committing transaction queues them, which
// serialises those commits.
func BenchmarkEnqueueConcurrent(b *testing.B) {
	const producers = 8
	for _, perTx := range []int{1, 100} {
		for _, notify := range []bool{true, false} {
			b.Run(fmt.Sprintf("perTx=%d/notify=%t", perTx, notify), func(b *testing.B) {
				var opts []Option
				if !notify {
					opts = append(opts, WithoutNotify())
				}
				pool, _ := dedicatedPool(b, producers+1)
				s := newStoreOn(b, pool, opts...)
				ctx := b.Context()
				// RunParallel starts parallelism × GOMAXPROCS goroutines.
				b.SetParallelism(max(producers/runtime.GOMAXPROCS(0), 1))
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					msgs := make([]reliar.Outgoing, perTx)
					for pb.Next() {
						for i := range msgs {
							msgs[i] = reliar.NewMsg(orderPlaced{OrderID: "o-1"})
						}
						err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
							_, err := s.Enqueue(ctx, tx, msgs...)
							return err
						})
						if err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N*perTx)/b.Elapsed().Seconds(), "msg/s")
			})
		}
	}
}
