package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// The zero-claim path (on unless WithoutHandoff). Enqueue inserts eligible rows already
// leased to the subscribed dispatcher and notifies the table's channel with a
// token naming the enqueue; the listener, on that notification (delivered
// only after the producer's commit), hands the rows over. An enqueue waits
// in pending until then; one never proven (rolled back, notification lost
// while the listener reconnected) is dropped after a lease, and its rows,
// if committed, are claimed again when their lease lapses.

// handoffOn reports whether the store leases rows at enqueue.
func (s *Store) handoffOn() bool { return !s.cfg.noHandoff && s.listens() }

// Handoff implements outboxdriver.Handoffer: it fails with WithoutHandoff or
// WithoutNotify, and with outboxdriver.ErrHandoffTaken while another
// subscription is active. The hand-off needs the notification listener,
// which a Wakeups subscription runs: the dispatcher holds one.
func (s *Store) Handoff(ctx context.Context, req outboxdriver.HandoffRequest) (<-chan outboxdriver.HandedOver, error) {
	if !s.handoffOn() {
		return nil, errors.New("pgstore: hand-offs are off (WithoutHandoff, WithoutNotify, or a pooled connection)")
	}
	return s.ho.Subscribe(ctx, req)
}

// enqueueLeased is Enqueue on the zero-claim path. ok is false when the
// messages do not qualify or the dispatcher has no room: the caller then
// enqueues them as usual.
func (s *Store) enqueueLeased(ctx context.Context, tx pgx.Tx, msgs []reliar.Outgoing) (ids []reliar.MessageID, ok bool, err error) {
	sub := s.ho.Begin(msgs)
	if sub == nil {
		return nil, false, nil
	}
	n := len(msgs)
	req := sub.Request()
	args, ids, rows, err := s.enqueueArgs(ctx, msgs, true)
	if err != nil {
		req.Unreserve(n)
		return nil, true, err
	}
	tokens := make([][16]byte, n)
	for i := range tokens {
		tokens[i] = uuid.New()
	}
	proof := uuid.NewString()
	args[0] = s.n.channel
	args = append(args, req.Worker, req.Lease.Microseconds(), uuidsArg(tokens), proof)
	sent := time.Now()
	recs, err := s.insertLeased(ctx, tx, args, ids, rows, tokens)
	if err != nil {
		req.Unreserve(n)
		return nil, true, err
	}
	s.ho.Wait(sub, proof, recs, n, sent)
	return ids, true, nil
}

// insertLeased runs the leased insert and returns the records to hand over.
func (s *Store) insertLeased(ctx context.Context, tx pgx.Tx, args []any, ids []reliar.MessageID, rows []outboxdriver.Row, tokens [][16]byte) ([]outboxdriver.Record, error) {
	res, err := tx.Query(ctx, s.sql.enqueueLeased, args...)
	if err != nil {
		return nil, enqueueErr(err)
	}
	defer res.Close()
	at := make(map[reliar.MessageID]int, len(ids))
	for i, id := range ids {
		at[id] = i
	}
	recs := make([]outboxdriver.Record, 0, len(ids))
	for res.Next() {
		var (
			id      reliar.MessageID
			seq     int64
			created time.Time
		)
		if err := res.Scan(&id, &seq, &created); err != nil {
			return nil, enqueueErr(err)
		}
		i, known := at[id]
		if !known {
			continue
		}
		r := &rows[i]
		r.Sequence, r.CreatedAt = seq, created
		env, err := r.Envelope()
		if err != nil {
			// NewRow's own rows always decode; should one not, it is left
			// to its lease and claimed (and killed as poison) then.
			continue
		}
		recs = append(recs, outboxdriver.Record{Envelope: env, Token: tokens[i], ClaimCount: 1, AvailableAt: created})
	}
	if err := res.Err(); err != nil {
		return nil, enqueueErr(err)
	}
	return recs, nil
}
