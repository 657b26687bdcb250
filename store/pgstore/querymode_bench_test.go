package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// BenchmarkQueryModes measures what each pgx query mode costs the hot
// path on a direct connection and through PgBouncer in transaction mode:
// an enqueue of one message in its own transaction, and a claim of 10
// rows with their completion (the refill is not timed). Commits do not
// wait for their WAL flush (synchronous_commit off, WithAsyncCommit), so
// that what the modes change, parsing and planning, is not lost in the
// flush's noise. cache_statement,
// pgx's default, is the direct connection's baseline; a pooler refuses it
// (ErrPreparedStatementsPooled) and describe_exec (ErrDescribeExecPooled).
func BenchmarkQueryModes(b *testing.B) {
	type target struct {
		name, dsn string
		modes     []string
	}
	modes := map[string]pgx.QueryExecMode{"cache_statement": pgx.QueryExecModeCacheStatement}
	for k, v := range queryModes {
		modes[k] = v
	}
	for _, tg := range []target{
		{"direct", testDSN, []string{"cache_statement", "cache_describe", "describe_exec", "exec", "simple_protocol"}},
		{"pgbouncer", poolerDSN, pooledModes},
	} {
		for _, m := range tg.modes {
			b.Run(tg.name+"/"+m+"/enqueue1", func(b *testing.B) {
				pool := modePool(b, tg.dsn, modes[m])
				s := storeThrough(b, pool, WithAsyncCommit())
				ctx := b.Context()
				for b.Loop() {
					if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
						if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
							return err
						}
						_, err := s.Enqueue(ctx, tx, reliar.NewMsg(orderPlaced{OrderID: "o-1"}))
						return err
					}); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(tg.name+"/"+m+"/claim10+complete", func(b *testing.B) {
				pool := modePool(b, tg.dsn, modes[m])
				s := storeThrough(b, pool, WithAsyncCommit())
				ctx := b.Context()
				msgs := make([]reliar.Outgoing, 10)
				req := outboxdriver.AcquireRequest{Worker: "bench", BatchSize: 10, Lease: time.Minute}
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
					if err != nil || len(batch.Records) != 10 {
						b.Fatalf("claimed %d rows: %v", len(batch.Records), err)
					}
					leases := make([]outboxdriver.Lease, len(batch.Records))
					for j, r := range batch.Records {
						leases[j] = r.Lease()
					}
					if n, err := s.Complete(ctx, leases); err != nil || n != 10 {
						b.Fatalf("completed %d rows: %v", n, err)
					}
				}
			})
		}
	}
}
