package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Complete marks leased rows published. Each row is matched by id and lease
// token only: a row reclaimed since is left alone and not counted.
func (s *Store) Complete(ctx context.Context, leases []outboxdriver.Lease) (int64, error) {
	if len(leases) == 0 {
		return 0, nil
	}
	ids, tokens := leaseArgs(leases)
	affected, err := s.exec(ctx, dispatchTx, "complete", s.sql.complete, ids, tokens)
	if err == nil {
		s.logShortfall(ctx, "complete", len(leases), affected)
	}
	return affected, err
}

// Fail records failed attempts in one statement: rows without a DeadReason
// become due again after their RetryAfter, the others go dead.
func (s *Store) Fail(ctx context.Context, failures []outboxdriver.FailedOutcome) (int64, error) {
	if len(failures) == 0 {
		return 0, nil
	}
	leases := make([]outboxdriver.Lease, len(failures))
	errs := make([]string, len(failures))
	delays := make([]int64, len(failures))
	reasons := make([]pgtype.Text, len(failures))
	for i, f := range failures {
		leases[i] = f.Lease
		errs[i] = outboxdriver.SanitizeError(f.Error)
		if f.DeadReason == "" {
			delays[i] = micros(max(f.RetryAfter, 0))
			continue
		}
		if !validReason(f.DeadReason) {
			return 0, reliar.Permanent(fmt.Errorf("pgstore: fail: unknown dead reason %q for %s", f.DeadReason, f.ID))
		}
		reasons[i] = pgtype.Text{String: string(f.DeadReason), Valid: true}
	}
	ids, tokens := leaseArgs(leases)
	affected, err := s.exec(ctx, dispatchTx, "fail", s.sql.fail, ids, tokens, errs, delays, reasons)
	if err == nil {
		s.logShortfall(ctx, "fail", len(failures), affected)
	}
	return affected, err
}

// Release clears leases without recording an attempt or a lapse.
func (s *Store) Release(ctx context.Context, leases []outboxdriver.Lease) (int64, error) {
	if len(leases) == 0 {
		return 0, nil
	}
	ids, tokens := leaseArgs(leases)
	affected, err := s.exec(ctx, dispatchTx, "release", s.sql.release, ids, tokens)
	if err == nil {
		s.logShortfall(ctx, "release", len(leases), affected)
	}
	return affected, err
}

// ExtendLease moves the lease expiry of rows still held to now + d.
func (s *Store) ExtendLease(ctx context.Context, leases []outboxdriver.Lease, d time.Duration) (int64, error) {
	if len(leases) == 0 {
		return 0, nil
	}
	if d <= 0 {
		return 0, reliar.Permanent(fmt.Errorf("pgstore: extend lease: duration must be positive, got %s", d))
	}
	ids, tokens := leaseArgs(leases)
	affected, err := s.exec(ctx, dispatchTx, "extend lease", s.sql.extend, ids, tokens, micros(d))
	if err == nil {
		s.logShortfall(ctx, "extend lease", len(leases), affected)
	}
	return affected, err
}

func validReason(r outboxdriver.DeadReason) bool {
	switch r {
	case outboxdriver.DeadPermanent, outboxdriver.DeadMaxAttempts, outboxdriver.DeadMaxClaims, outboxdriver.DeadExpired, outboxdriver.DeadUndecodable:
		return true
	}
	return false
}
