package pgstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// insertEdge inserts, with plain SQL as another language would, a row whose
// column holds value (an SQL literal), and reports whether the table
// refused it with a check violation. Any other error fails the test.
func insertEdge(t *testing.T, s *Store, column, value string) (id reliar.MessageID, refused bool) {
	t.Helper()
	id = reliar.NewMessageID()
	_, err := sharedPool.Exec(t.Context(), s.n.render(fmt.Sprintf(
		`INSERT INTO {{table}} (id, message_type, payload, %s) VALUES ($1, 'edge', '{}', %s)`, column, value)), id.String())
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "23514" {
		return id, true
	}
	if err != nil {
		t.Fatalf("insert %s = %s: %v", column, value, err)
	}
	return id, false
}

// claimAround claims everything due and checks that the good rows come back
// as records and the edge row, when stored, either as a record that decodes
// as stored or as poison; then completes the records.
func claimAround(t *testing.T, s *Store, edge reliar.MessageID, good []reliar.MessageID) outboxdriver.AcquiredBatch {
	t.Helper()
	ctx := t.Context()
	b, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 100, Lease: time.Minute, MaxClaims: 5})
	if err != nil {
		t.Fatalf("Acquire failed for the whole batch: %v", err)
	}
	got := map[reliar.MessageID]bool{}
	var leases []outboxdriver.Lease
	for _, r := range b.Records {
		got[r.Envelope.ID] = true
		leases = append(leases, r.Lease())
	}
	for _, id := range good {
		if !got[id] {
			t.Errorf("good row %s was not claimed (records %d, poisoned %+v, dead %v)", id, len(b.Records), b.Poisoned, b.DeadMaxClaims)
		}
	}
	if n, err := s.Complete(ctx, leases); err != nil || n != int64(len(leases)) {
		t.Fatalf("Complete = %d, %v; want %d", n, err, len(leases))
	}
	if _, err := s.Stats(ctx); err != nil {
		t.Errorf("Stats: %v", err)
	}
	if _, err := s.ListDead(ctx, outboxdriver.DeadQuery{}); err != nil {
		t.Errorf("ListDead: %v", err)
	}
	return b
}

// A row with an infinite time, legal in a timestamptz column for a plain-SQL
// producer, used to fail every claim that met it (pgx cannot scan infinity
// into a time.Time), leasing and finally dead-lettering the healthy rows
// claimed with it. The table now refuses such values at insert.
func TestInfiniteTimesNeverFailAClaim(t *testing.T) {
	t.Parallel()
	for _, column := range []string{"available_at", "created_at", "expires_at"} {
		for _, value := range []string{"'-infinity'", "'infinity'"} {
			t.Run(column+"="+value, func(t *testing.T) {
				t.Parallel()
				s := newStore(t)
				good := enqueue(t, s, reliar.NewMsg(orderPlaced{"o-1"}), reliar.NewMsg(orderPlaced{"o-2"}))
				edge, refused := insertEdge(t, s, column, value)
				b := claimAround(t, s, edge, good)
				if !refused {
					for _, r := range b.Records {
						if r.Envelope.ID == edge && column == "expires_at" && r.Envelope.Metadata.Delivery.ExpiresAt != nil && r.Envelope.Metadata.Delivery.ExpiresAt.IsZero() {
							t.Errorf("expires_at %s decoded as the zero time", value)
						}
					}
				}
			})
		}
	}
}

// message_version outside 1–65535 was silently published as version 1; it
// must be refused at insert or be poison, never rewritten.
func TestMessageVersionOutOfRangeIsNeverRewritten(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"0", "-1", "65536", "2147483647"} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			good := enqueue(t, s, reliar.NewMsg(orderPlaced{"o-1"}))
			edge, refused := insertEdge(t, s, "message_version", v)
			b := claimAround(t, s, edge, good)
			for _, r := range b.Records {
				if r.Envelope.ID == edge {
					t.Errorf("message_version %s was handed out as version %d", v, r.Envelope.MessageVersion)
				}
			}
			if !refused && (len(b.Poisoned) != 1 || b.Poisoned[0].ID != edge) {
				t.Errorf("message_version %s stored but not poison: poisoned %+v", v, b.Poisoned)
			}
		})
	}
}

// Counters a plain-SQL producer set at the edge of integer must neither
// break the claim nor the outcome write that increments them, nor go
// negative.
func TestCountersAtTheirEdgesNeverFailAWrite(t *testing.T) {
	t.Parallel()
	for _, column := range []string{"attempts", "claim_count", "lapsed_claims"} {
		for _, v := range []string{"2147483647", "-1"} {
			t.Run(column+"="+v, func(t *testing.T) {
				t.Parallel()
				s := newStore(t)
				good := enqueue(t, s, reliar.NewMsg(orderPlaced{"o-1"}))
				edge, refused := insertEdge(t, s, column, v)
				want := append(good, edge)
				if refused {
					want = good
				}
				claimAround(t, s, edge, want)
			})
		}
	}
}
