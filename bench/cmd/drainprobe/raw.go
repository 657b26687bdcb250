package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The peer harness's pinned raw loop (bench/internal/rawsql), on the rows
// Reliar enqueued: two workers, claims of 500, completion by id = ANY.
const (
	rawWorkers = 2
	rawClaim   = `WITH due AS (
    SELECT id FROM outbox
    WHERE published_at IS NULL AND dead_at IS NULL
      AND available_at <= now()
      AND (locked_until IS NULL OR locked_until <= now())
    ORDER BY available_at, sequence
    LIMIT 500
    FOR UPDATE SKIP LOCKED
)
UPDATE outbox o SET locked_by = $1, locked_until = now() + interval '30 seconds',
    lease_token = gen_random_uuid(), claim_count = o.claim_count + 1, last_claimed_at = now()
FROM due WHERE o.id = due.id
RETURNING o.id, o.payload`
	rawComplete = `UPDATE outbox SET published_at = now(), attempts = attempts + 1,
    locked_by = NULL, locked_until = NULL, lease_token = NULL, updated_at = now()
WHERE id = ANY($1)`
)

func drainRaw(ctx context.Context, pool *pgxpool.Pool, n int) error {
	var done atomic.Int64
	errs := make([]error, rawWorkers)
	var wg sync.WaitGroup
	for w := range rawWorkers {
		wg.Go(func() {
			ids := make([]uuid.UUID, 0, 500)
			for done.Load() < int64(n) && ctx.Err() == nil {
				ids = ids[:0]
				rows, err := pool.Query(ctx, rawClaim, fmt.Sprint("raw-", w))
				if err != nil {
					errs[w] = err
					return
				}
				var id uuid.UUID
				var body []byte
				if _, err := pgx.ForEachRow(rows, []any{&id, &body}, func() error {
					ids = append(ids, id)
					return nil
				}); err != nil {
					errs[w] = err
					return
				}
				if len(ids) == 0 {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				if _, err := pool.Exec(ctx, rawComplete, ids); err != nil {
					errs[w] = err
					return
				}
				done.Add(int64(len(ids)))
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("raw loop: %w", err)
		}
	}
	return ctx.Err()
}
