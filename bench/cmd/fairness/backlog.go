package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/reliarrun"
	"github.com/reliar/reliar/bench/internal/sink"
	"github.com/reliar/reliar/outbox"
)

// The tenants of the backlog scenario.
const (
	bigTenant   = "big"
	smallTenant = "small"
)

// donePoll is how often the end of a drain polls the database once every
// backlog row has arrived, as the harness does.
const donePoll = 2 * time.Millisecond

// variant is Reliar at outbox.DefaultSettings with only Fairness changed,
// enqueuing as the small tenant; pub, when set, replaces the sink
// publisher.
func variant(f outbox.Fairness, pub func(*sink.Sink) reliar.Publisher) reliarrun.Variant {
	return reliarrun.Variant{
		Name:      "reliar fairness " + f.String(),
		Tenant:    smallTenant,
		Tune:      func(s *outbox.Settings) { s.Fairness = f },
		Publisher: pub,
	}
}

// tenantPublisher hands each message to the publisher of its tenant.
type tenantPublisher map[string]reliarrun.Publisher

// Publish implements reliar.Publisher; a message of no known tenant is a
// permanent failure.
func (p tenantPublisher) Publish(ctx context.Context, env *reliar.SerializedEnvelope) error {
	pub, ok := p[env.Metadata.TenantID]
	if !ok {
		return reliar.Permanent(fmt.Errorf("fairness: message %s of unknown tenant %q", env.ID, env.Metadata.TenantID))
	}
	return pub.Publish(ctx, env)
}

// backlogResult is one run of the backlog scenario.
type backlogResult struct {
	// small is the small tenant's commit → publish latency over the
	// messages committed while the backlog drained (sorted); toClaim and
	// fromClaim split it at the start of the claim that took the message
	// (its last_claimed_at, the claim transaction's now()), each sorted.
	small, toClaim, fromClaim []time.Duration
	// drainSeconds runs from the dispatcher's start to the last backlog
	// row marked published; arrivedSeconds to its last arrival.
	drainSeconds, arrivedSeconds float64
	// duplicates counts repeated arrivals, both tenants.
	duplicates int64
}

// backlogRun fills a fresh schema with the big tenant's backlog, starts
// one dispatcher under f and commits the small tenant's stream until the
// backlog is drained.
func backlogRun(ctx context.Context, c config, f outbox.Fairness) (res backlogResult, err error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.runTimeout, fmt.Errorf("%w: backlog run under %s exceeded %s", harness.ErrTimeout, f, c.runTimeout))
	defer cancel()
	env, drop, err := pgenv.Fresh(ctx, c.dsn, "fairness backlog "+f.String())
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, dropWithin(ctx, drop)) }()
	big := sink.New(c.backlog)
	// The stream runs at most until the run's bound.
	small := sink.New(int(c.runTimeout.Seconds()*float64(c.rate)) + 1)
	v := variant(f, func(s *sink.Sink) reliar.Publisher {
		return tenantPublisher{bigTenant: {Sink: big}, smallTenant: {Sink: s}}
	})
	tgt, err := v.System().Open(ctx, env)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, tgt.Close(context.WithoutCancel(ctx))) }()
	pool, err := env.Pool(ctx, 2)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	if err := fillBacklog(ctx, pool, c.backlog); err != nil {
		return res, err
	}

	t0 := time.Now()
	stop, err := tgt.Start(ctx, small)
	if err != nil {
		return res, fmt.Errorf("start: %w", err)
	}
	committed := make([]int64, small.Size())
	streamDone := make(chan struct{})
	sent := make(chan streamEnd, 1)
	go func() { sent <- stream(ctx, tgt, c.rate, committed, streamDone) }()

	drainErr := waitBacklog(ctx, pool, big)
	drained := time.Now()
	close(streamDone)
	end := <-sent
	if drainErr == nil && end.err != nil {
		drainErr = end.err
	}
	if drainErr == nil {
		drainErr = waitSmall(ctx, small, end.n)
	}
	var claimed map[int]int64
	if drainErr == nil {
		claimed, drainErr = claimStarts(ctx, pool)
	}
	res.duplicates = big.Duplicates() + small.Duplicates()
	if err := errors.Join(drainErr, stopWithin(ctx, stop)); err != nil {
		return res, err
	}
	lastBig, _ := lastArrival(big)
	res.drainSeconds = drained.Sub(t0).Seconds()
	res.arrivedSeconds = time.Duration(lastBig - t0.UnixNano()).Seconds()
	// Only the messages committed while the big tenant still had rows to
	// publish: the ones after saw an idle table.
	for seq := range end.n {
		if committed[seq] >= lastBig {
			continue
		}
		arrived, _, _ := small.Arrival(seq)
		res.small = append(res.small, time.Duration(max(0, arrived-committed[seq])))
		res.toClaim = append(res.toClaim, time.Duration(max(0, claimed[seq]-committed[seq])))
		res.fromClaim = append(res.fromClaim, time.Duration(max(0, arrived-claimed[seq])))
	}
	slices.Sort(res.small)
	slices.Sort(res.toClaim)
	slices.Sort(res.fromClaim)
	if len(res.small) == 0 {
		return res, fmt.Errorf("no small-tenant message was committed while the backlog drained (%.3f s)", res.arrivedSeconds)
	}
	return res, nil
}

// fillBacklog inserts n rows of the big tenant with one plain-SQL
// statement, every payload a payload.Doc numbered 0 to n-1, and vacuums and
// analyzes the table so that both claims start from the same state.
func fillBacklog(ctx context.Context, pool *pgxpool.Pool, n int) error {
	doc := payload.New(0, time.Now().UnixNano())
	_, err := pool.Exec(ctx, `INSERT INTO outbox (id, message_type, payload, tenant_id)
SELECT gen_random_uuid(), 'bench.message',
    convert_to('{"seq":"' || lpad(g::text, 12, '0') || '","ts":"' || $2::text || '","pad":"' || $3::text || '"}', 'UTF8'),
    $4::text
FROM generate_series(0, $1::int - 1) AS g`, n, doc.TS, doc.Pad, bigTenant)
	if err != nil {
		return fmt.Errorf("fill the backlog: %w", err)
	}
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE outbox"); err != nil {
		return fmt.Errorf("vacuum: %w", err)
	}
	return nil
}

// streamEnd is what the small tenant's stream did: n messages committed
// (numbered 0 to n-1), or the error that ended it.
type streamEnd struct {
	n   int
	err error
}

// stream commits one single-message transaction every 1/rate s, the first
// at once, recording when each Commit returned, until done is closed.
func stream(ctx context.Context, t harness.Target, rate int, committed []int64, done <-chan struct{}) streamEnd {
	interval := time.Second / time.Duration(rate)
	start := time.Now()
	for seq := range committed {
		if d := time.Until(start.Add(time.Duration(seq) * interval)); d > 0 {
			select {
			case <-time.After(d):
			case <-done:
				return streamEnd{n: seq}
			case <-ctx.Done():
				return streamEnd{n: seq, err: context.Cause(ctx)}
			}
		}
		select {
		case <-done:
			return streamEnd{n: seq}
		default:
		}
		if err := t.Enqueue(ctx, []payload.Doc{payload.New(seq, time.Now().UnixNano())}); err != nil {
			return streamEnd{n: seq, err: fmt.Errorf("enqueue small-tenant message %d: %w", seq, err)}
		}
		committed[seq] = time.Now().UnixNano()
	}
	return streamEnd{n: len(committed), err: errors.New("the small tenant's stream outran its sink")}
}

// waitBacklog waits until every backlog row has arrived at big, then until
// the database has marked them all published.
func waitBacklog(ctx context.Context, pool *pgxpool.Pool, big *sink.Sink) error {
	select {
	case <-big.Done():
	case <-ctx.Done():
		return fmt.Errorf("%w (%d of %d backlog rows arrived)", context.Cause(ctx), big.Received(), big.Size())
	}
	tick := time.NewTicker(donePoll)
	defer tick.Stop()
	for {
		var n int64
		// The condition of outbox_tenant_pending_idx, so that the count
		// reads the index, not the table.
		err := pool.QueryRow(ctx, `SELECT count(*) FROM outbox
WHERE (coalesce(tenant_id, '') COLLATE "C") = $1 AND published_at IS NULL AND dead_at IS NULL`, bigTenant).Scan(&n)
		if err != nil {
			return fmt.Errorf("count the backlog: %w", err)
		}
		if n == 0 {
			return nil
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("%w (every backlog row arrived, %d not marked published)", context.Cause(ctx), n)
		}
	}
}

// claimStarts reads, for every small-tenant message, when the claim that
// took it started (Unix nanoseconds, microsecond precision), by the
// sequence number of its payload.
func claimStarts(ctx context.Context, pool *pgxpool.Pool) (map[int]int64, error) {
	rows, err := pool.Query(ctx, `SELECT payload, (extract(epoch FROM last_claimed_at) * 1000000)::int8 FROM outbox
WHERE (coalesce(tenant_id, '') COLLATE "C") = $1 AND last_claimed_at IS NOT NULL`, smallTenant)
	if err != nil {
		return nil, fmt.Errorf("read the claim times: %w", err)
	}
	defer rows.Close()
	out := map[int]int64{}
	for rows.Next() {
		var b []byte
		var us int64
		if err := rows.Scan(&b, &us); err != nil {
			return nil, fmt.Errorf("read the claim times: %w", err)
		}
		seq, _, err := payload.Decode(b)
		if err != nil {
			return nil, fmt.Errorf("read the claim times: %w", err)
		}
		out[seq] = us * 1000
	}
	return out, rows.Err()
}

// waitSmall waits until messages 0 to n-1 have arrived at s.
func waitSmall(ctx context.Context, s *sink.Sink, n int) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for seq := 0; seq < n; {
		if s.Has(seq) {
			seq++
			continue
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return fmt.Errorf("%w (%d of %d small-tenant messages arrived)", context.Cause(ctx), s.Received(), n)
		}
	}
	return nil
}

// lastArrival is the latest arrival at s, Unix nanoseconds.
func lastArrival(s *sink.Sink) (last int64, ok bool) {
	for seq := range s.Size() {
		if a, _, has := s.Arrival(seq); has && a > last {
			last, ok = a, true
		}
	}
	return last, ok
}

// stopWithin and dropWithin tear down with a bounded context of their own.
func stopWithin(ctx context.Context, stop func(context.Context) error) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), harness.TeardownTimeout)
	defer cancel()
	if err := stop(sctx); err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	return nil
}

func dropWithin(ctx context.Context, drop func(context.Context) error) error {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), harness.TeardownTimeout)
	defer cancel()
	return drop(dctx)
}

// modeName is how the report names a claim.
func modeName(f outbox.Fairness) string {
	if f == outbox.FairnessTenant {
		return "tenant"
	}
	return "unfair (" + strings.ToLower(f.String()) + ")"
}
