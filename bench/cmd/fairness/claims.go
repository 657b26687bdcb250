package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/quietlog"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/store/pgstore"
)

// claimResult is one run of the claim-cost scenario.
type claimResult struct {
	rows, claims int
	// took is the time spent in the Acquire calls that returned rows.
	took time.Duration
	// p50 is the median of those calls.
	p50 time.Duration
}

// perRow is the claim cost per row.
func (r claimResult) perRow() time.Duration {
	if r.rows == 0 {
		return 0
	}
	return r.took / time.Duration(r.rows)
}

// claimRun fills a fresh schema with c.perTenant due rows of each of
// c.tenants tenants and claims them with Store.Acquire at the default
// BatchSize under f until a claim returns no row, completing every batch
// (untimed) as a dispatcher would, so that the claims see what a
// dispatcher's claims see.
func claimRun(ctx context.Context, c config, f outbox.Fairness) (res claimResult, err error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.runTimeout, fmt.Errorf("%w: claim run under %s exceeded %s", harness.ErrTimeout, f, c.runTimeout))
	defer cancel()
	env, drop, err := pgenv.Fresh(ctx, c.dsn, "fairness claims "+f.String())
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, dropWithin(ctx, drop)) }()
	pool, err := env.Pool(ctx, 0)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(env.Schema)); err != nil {
		return res, fmt.Errorf("migrate: %w", err)
	}
	store, err := pgstore.New(ctx, pool, pgstore.WithSchema(env.Schema), pgstore.WithLogger(quietlog.AtLevel(slog.LevelError)))
	if err != nil {
		return res, fmt.Errorf("new store: %w", err)
	}
	total := c.tenants * c.perTenant
	doc := payload.New(0, time.Now().UnixNano())
	// Tenant g % tenants, so that the due order (available_at) cycles
	// through the tenants.
	_, err = pool.Exec(ctx, `INSERT INTO outbox (id, message_type, payload, tenant_id, available_at)
SELECT gen_random_uuid(), 'bench.message',
    convert_to('{"seq":"' || lpad(g::text, 12, '0') || '","ts":"' || $3::text || '","pad":"' || $4::text || '"}', 'UTF8'),
    'tenant-' || lpad((g % $2::int)::text, 6, '0'),
    now() - interval '1 minute' + g * interval '1 microsecond'
FROM generate_series(0, $1::int - 1) AS g`, total, c.tenants, doc.TS, doc.Pad)
	if err != nil {
		return res, fmt.Errorf("fill: %w", err)
	}
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE outbox"); err != nil {
		return res, fmt.Errorf("vacuum: %w", err)
	}

	s := outbox.DefaultSettings()
	req := outboxdriver.AcquireRequest{Worker: "fairness-bench", BatchSize: s.BatchSize, Lease: s.Lease, MaxClaims: s.MaxClaims, Fairness: f}
	var calls []time.Duration
	for {
		start := time.Now()
		b, err := store.Acquire(ctx, req)
		took := time.Since(start)
		if err != nil {
			return res, fmt.Errorf("acquire: %w", err)
		}
		if b.Len() == 0 {
			break
		}
		if len(b.Records) != b.Len() {
			return res, fmt.Errorf("a claim moved %d rows to dead", b.Len()-len(b.Records))
		}
		calls = append(calls, took)
		res.took += took
		res.rows += b.Len()
		req.TenantCursor = b.TenantCursor
		leases := make([]outboxdriver.Lease, len(b.Records))
		for i := range b.Records {
			leases[i] = b.Records[i].Lease()
		}
		if _, err := store.Complete(ctx, leases); err != nil {
			return res, fmt.Errorf("complete: %w", err)
		}
	}
	if res.rows != total {
		return res, fmt.Errorf("the claims returned %d rows, want %d", res.rows, total)
	}
	res.claims = len(calls)
	slices.Sort(calls)
	res.p50 = harness.Percentile(calls, 50)
	return res, nil
}
