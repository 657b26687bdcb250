// Package rawsql is the benchmark's ceiling: the smallest correct dispatch
// loop over pgstore's own outbox table, with pinned SQL. Two workers, each
// on its own connection, claim 500 rows with a SKIP LOCKED CTE feeding an
// UPDATE … RETURNING, hand them to the sink, and mark them published with
// one UPDATE by id = ANY($1). No retries, no leases renewed, no fencing, no
// metrics: what is left is the database's work.
package rawsql

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/sink"
	"github.com/reliar/reliar/store/pgstore"
)

// The loop's pinned parameters.
const (
	// Workers is the number of claim loops, one connection each.
	Workers = 2
	// ClaimSize is the number of rows one claim takes.
	ClaimSize = 500
	// IdleWait is a worker's pause after an empty claim.
	IdleWait = 10 * time.Millisecond
)

// The loop's pinned SQL. The table is pgstore's, created by pgstore.Migrate;
// the unqualified name resolves through the run's search_path.
const (
	insertSQL = `INSERT INTO outbox (id, message_type, payload)
SELECT * FROM unnest($1::uuid[], $2::text[], $3::bytea[])`

	claimSQL = `WITH due AS (
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

	completeSQL = `UPDATE outbox SET published_at = now(), attempts = attempts + 1,
    locked_by = NULL, locked_until = NULL, lease_token = NULL, updated_at = now()
WHERE id = ANY($1)`
)

// Claimed is one claimed row.
type Claimed struct {
	ID      uuid.UUID
	Payload []byte
}

// DeliverFunc delivers one claimed batch; the batch is marked published
// when it returns nil. The loop ends with its error.
type DeliverFunc func(ctx context.Context, s *sink.Sink, batch []Claimed) error

// ToSink is the DeliverFunc of the no-op sink.
func ToSink(_ context.Context, s *sink.Sink, batch []Claimed) error {
	for _, c := range batch {
		if err := s.DeliverPayload(c.Payload); err != nil {
			return err
		}
	}
	return nil
}

// System is the raw loop, delivering to the sink, as a harness system.
func System() harness.System {
	return harness.System{Name: "raw sql", Open: func(ctx context.Context, env pgenv.Env) (harness.Target, error) {
		return Open(ctx, env, ToSink)
	}}
}

// Open sets the loop up on env's schema with deliver as its destination.
func Open(ctx context.Context, env pgenv.Env, deliver DeliverFunc) (harness.Target, error) {
	pool, err := env.Pool(ctx, Workers)
	if err != nil {
		return nil, err
	}
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(env.Schema)); err != nil {
		pool.Close()
		return nil, fmt.Errorf("rawsql: migrate: %w", err)
	}
	return &target{pool: pool, deliver: deliver}, nil
}

// target is the raw loop on one run's schema.
type target struct {
	pool    *pgxpool.Pool
	deliver DeliverFunc
}

func (t *target) Enqueue(ctx context.Context, docs []payload.Doc) error {
	ids := make([]uuid.UUID, len(docs))
	types := make([]string, len(docs))
	payloads := make([][]byte, len(docs))
	for i, d := range docs {
		ids[i] = uuid.Must(uuid.NewV7())
		types[i] = "bench.message"
		payloads[i] = d.Encode()
	}
	err := pgx.BeginFunc(ctx, t.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, insertSQL, ids, types, payloads)
		return err
	})
	if err != nil {
		return fmt.Errorf("rawsql: insert: %w", err)
	}
	return nil
}

func (t *target) Start(ctx context.Context, s *sink.Sink) (func(context.Context) error, error) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	errs := make([]error, Workers)
	for i := range Workers {
		wg.Go(func() { errs[i] = t.work(rctx, "raw-"+strconv.Itoa(i), s) })
	}
	return func(context.Context) error {
		cancel()
		wg.Wait()
		return errors.Join(errs...)
	}, nil
}

// work claims, delivers and completes until ctx is cancelled.
func (t *target) work(ctx context.Context, worker string, s *sink.Sink) error {
	ids := make([]uuid.UUID, 0, ClaimSize)
	batch := make([]Claimed, 0, ClaimSize)
	for {
		ids, batch = ids[:0], batch[:0]
		rows, err := t.pool.Query(ctx, claimSQL, worker)
		if err == nil {
			var c Claimed
			_, err = pgx.ForEachRow(rows, []any{&c.ID, &c.Payload}, func() error {
				ids = append(ids, c.ID)
				batch = append(batch, c)
				return nil
			})
		}
		if err == nil && len(ids) > 0 {
			err = t.deliver(ctx, s, batch)
		}
		if err == nil && len(ids) > 0 {
			_, err = t.pool.Exec(ctx, completeSQL, ids)
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("rawsql: %s: %w", worker, err)
		}
		if len(ids) == 0 {
			select {
			case <-time.After(IdleWait):
			case <-ctx.Done():
				return nil
			}
		}
	}
}

func (t *target) Pending(ctx context.Context) (int64, error) {
	var n int64
	err := t.pool.QueryRow(ctx, `SELECT count(*) FROM outbox WHERE published_at IS NULL AND dead_at IS NULL`).Scan(&n)
	return n, err
}

func (t *target) Close(context.Context) error {
	t.pool.Close()
	return nil
}
