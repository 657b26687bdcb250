package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql"
)

// The zero-claim path (on unless WithoutHandoff): while a dispatcher of this
// process runs on the store, Enqueue leases each eligible row to it inside
// the producer's transaction, and the wake-up watcher hands the rows over
// once it can read them from its own connection — which proves the commit,
// since no other connection sees an uncommitted row. No claim transaction,
// and so no write lock nor commit waiting for the disk, stands between the
// producer's commit and the publish, and none competes with the producers.

// WithoutHandoff turns off the zero-claim path, on by default: while a
// dispatcher of this process runs on the store (it subscribes through
// [Store.Handoff] along with [Store.Wakeups]), Enqueue leases each eligible
// row to it in the producer's transaction, and the wake-up watcher hands the
// rows over once it reads them from its own connection, which proves the
// commit. The rules are pgstore's: no row with an ordering key, an
// AvailableAt, an ExpiresAt (or a tenant under a per-tenant cap) is leased
// at enqueue; leased rows count toward the dispatcher's MaxInFlight; a
// hand-off with less than the dispatcher's PublishTimeout of lease left is
// dropped; a row never handed over is claimed again once its lease lapses,
// as a lapsed claim.
func WithoutHandoff() Option {
	return func(o *options) error {
		o.noHandoff = true
		return nil
	}
}

// Handoff implements outboxdriver.Handoffer: it fails with WithoutHandoff,
// and with outboxdriver.ErrHandoffTaken while another subscription is
// active. The hand-off needs the wake-up watcher, which a Wakeups
// subscription runs: the dispatcher holds one.
func (s *Store) Handoff(ctx context.Context, req outboxdriver.HandoffRequest) (<-chan []outboxdriver.Record, error) {
	if s.noHandoff {
		return nil, errors.New("sqlitestore: hand-offs are off (WithoutHandoff)")
	}
	return s.ho.Subscribe(ctx, req)
}

// leaseAtEnqueue leases the rows just inserted in tx to the subscribed
// dispatcher, when there is one with room and every message qualifies.
func (s *Store) leaseAtEnqueue(ctx context.Context, tx *sql.Tx, msgs []reliar.Outgoing, rows []outboxdriver.Row, now int64) error {
	sub := s.ho.Begin(msgs)
	if sub == nil {
		return nil
	}
	req := sub.Request()
	n := len(msgs)
	sent := time.Now()
	token := uuid.NewString()
	ids := make([]reliar.MessageID, n)
	for i := range rows {
		ids[i] = rows[i].ID
	}
	until := s.now().Add(req.Lease).UnixMicro()
	res, err := tx.QueryContext(ctx, `UPDATE outbox SET locked_by = ?, locked_until = ?, lease_token = ?,
	    claim_count = 1, last_claimed_at = ?
	WHERE id IN (SELECT value FROM json_each(?)) RETURNING id, sequence`,
		req.Worker, until, token, s.clock(), idArg(ids))
	if err != nil {
		req.Unreserve(n)
		return wrapErr("enqueue", err)
	}
	at := make(map[reliar.MessageID]int, n)
	for i, id := range ids {
		at[id] = i
	}
	recs := make([]outboxdriver.Record, 0, n)
	var first int64
	for res.Next() {
		var (
			text string
			seq  int64
		)
		if err := res.Scan(&text, &seq); err != nil {
			res.Close()
			req.Unreserve(n)
			return wrapErr("enqueue", err)
		}
		id, err := uuid.Parse(text)
		i, known := at[id]
		if err != nil || !known {
			continue
		}
		r := &rows[i]
		r.Sequence, r.CreatedAt = seq, fromMicros(now)
		env, err := r.Envelope()
		if err != nil {
			continue // left to its lease, then claimed (and killed as poison)
		}
		recs = append(recs, outboxdriver.Record{Envelope: env, Token: uuid.MustParse(token), ClaimCount: 1, AvailableAt: r.CreatedAt})
		first = seq
	}
	res.Close()
	if err := res.Err(); err != nil {
		req.Unreserve(n)
		return wrapErr("enqueue", err)
	}
	s.ho.Wait(sub, token, first, recs, n, sent)
	return nil
}

// proveCommits hands over the enqueues whose rows the watcher's connection
// can read with their lease token: committed.
func (s *Store) proveCommits(ctx context.Context, conn *sql.Conn) error {
	waiting := s.ho.Waiting()
	if len(waiting) == 0 {
		return nil
	}
	want := make(map[string]bool, len(waiting))
	seqs := make([]string, len(waiting))
	for i, w := range waiting {
		want[w.Proof] = true
		seqs[i] = strconv.FormatInt(w.Hint, 10)
	}
	rows, err := conn.QueryContext(ctx, `SELECT lease_token FROM outbox
	WHERE sequence IN (SELECT value FROM json_each(?)) AND lease_token IS NOT NULL`, outboxsql.JSONArg(seqs))
	if err != nil {
		return wrapErr("wakeups", err)
	}
	var proven []string
	for rows.Next() {
		var tok string
		if err := rows.Scan(&tok); err != nil {
			rows.Close()
			return wrapErr("wakeups", err)
		}
		if want[tok] {
			proven = append(proven, tok)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return wrapErr("wakeups", err)
	}
	for _, tok := range proven {
		s.ho.Take(tok)
	}
	return nil
}
