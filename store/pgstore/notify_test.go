package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// wakeups starts a listener that stops when the test ends, and checks that
// its channel is then closed.
func wakeups(t *testing.T, s *Store) <-chan struct{} {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := s.Wakeups(ctx)
	if err != nil {
		cancel()
		t.Fatalf("Wakeups: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case _, ok := <-ch:
				if !ok {
					return
				}
			case <-deadline:
				t.Error("the wake-up channel was not closed after its context ended")
				return
			}
		}
	})
	return ch
}

func expectSignal(t *testing.T, ch <-chan struct{}, within time.Duration, why string) {
	t.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			t.Fatalf("%s: channel closed", why)
		}
	case <-time.After(within):
		t.Fatalf("%s: no wake-up within %s", why, within)
	}
}

func expectNoSignal(t *testing.T, ch <-chan struct{}, within time.Duration, why string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("%s: unexpected wake-up", why)
	case <-time.After(within):
	}
}

func TestWakeupsAfterCommitOnly(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	ch := wakeups(t, s)

	tx, err := sharedPool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(ctx, tx, reliar.NewMsg(orderPlaced{"o-1"})); err != nil {
		t.Fatal(err)
	}
	expectNoSignal(t, ch, 300*time.Millisecond, "before commit")
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	expectSignal(t, ch, 5*time.Second, "after commit")

	tx, err = sharedPool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(ctx, tx, reliar.NewMsg(orderPlaced{"o-2"})); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	expectNoSignal(t, ch, 500*time.Millisecond, "after rollback")
}

func TestWakeupsAreCoalesced(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ch := wakeups(t, s)
	for range 5 {
		enqueue(t, s, reliar.NewMsg(orderPlaced{"o"}))
	}
	expectSignal(t, ch, 5*time.Second, "after five commits")
	time.Sleep(200 * time.Millisecond)
	if n := len(ch); n > 1 {
		t.Fatalf("%d wake-ups buffered, want at most 1", n)
	}
}

func TestWithoutNotifyDoesNotSignal(t *testing.T) {
	t.Parallel()
	s := newStore(t, WithoutNotify())
	if s.Capabilities().Notify {
		t.Fatal("Capabilities().Notify is true with WithoutNotify")
	}
	ch := wakeups(t, s)
	enqueue(t, s, reliar.NewMsg(orderPlaced{"o"}))
	expectNoSignal(t, ch, 500*time.Millisecond, "enqueue without notify")
}

// Producers in other languages insert with plain SQL; the opt-in trigger
// wakes the dispatchers for them.
func TestNotifyTriggerForPlainInserts(t *testing.T) {
	t.Parallel()
	s := newStore(t, WithoutNotify())
	ctx := t.Context()
	ch := wakeups(t, s)
	insert := s.n.render(`INSERT INTO {{table}} (id, message_type, payload) VALUES (gen_random_uuid(), 'plain.sql', '\x7b7d')`)

	if _, err := sharedPool.Exec(ctx, insert); err != nil {
		t.Fatalf("plain insert of the three required columns: %v", err)
	}
	expectNoSignal(t, ch, 300*time.Millisecond, "trigger not enabled")

	if err := EnableNotifyTrigger(ctx, sharedPool, WithSchema(s.Schema())); err != nil {
		t.Fatal(err)
	}
	if err := EnableNotifyTrigger(ctx, sharedPool, WithSchema(s.Schema())); err != nil {
		t.Fatalf("EnableNotifyTrigger is not idempotent: %v", err)
	}
	if _, err := sharedPool.Exec(ctx, insert); err != nil {
		t.Fatal(err)
	}
	expectSignal(t, ch, 5*time.Second, "plain insert with the trigger")

	if err := DisableNotifyTrigger(ctx, sharedPool, WithSchema(s.Schema())); err != nil {
		t.Fatal(err)
	}
	if _, err := sharedPool.Exec(ctx, insert); err != nil {
		t.Fatal(err)
	}
	expectNoSignal(t, ch, 300*time.Millisecond, "trigger disabled")

	// Rows inserted with only the required columns decode like any other.
	b, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 10, Lease: time.Minute})
	if err != nil || len(b.Records) != 3 || len(b.Poisoned) != 0 {
		t.Fatalf("claim of plain rows = %+v, %v; want 3 records", b, err)
	}
	for _, r := range b.Records {
		e := r.Envelope
		if e.MessageType != "plain.sql" || e.Metadata.Correlation.ConversationID != e.ID || e.ContentType != "application/json" || string(e.Payload) != "{}" {
			t.Errorf("plain row decoded as %+v", e)
		}
	}
}

func TestWakeupsSurviveTerminatedConnection(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	ch := wakeups(t, s)
	listen := "LISTEN " + pgx.Identifier{s.Channel()}.Sanitize()

	first := listenerPID(t, listen, 0)
	if _, err := sharedPool.Exec(ctx, "SELECT pg_terminate_backend($1, 5000)", first); err != nil {
		t.Fatal(err)
	}
	// The listener reconnects on a new backend and signals, since
	// notifications may have been lost meanwhile.
	expectSignal(t, ch, 15*time.Second, "reconnect")
	listenerPID(t, listen, first)

	enqueue(t, s, reliar.NewMsg(orderPlaced{"after reconnect"}))
	expectSignal(t, ch, 5*time.Second, "commit after reconnect")
}

// listenerPID waits for the backend that runs listen, other than not.
func listenerPID(t *testing.T, listen string, not int32) int32 {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		var pid int32
		err := sharedPool.QueryRow(t.Context(), `SELECT pid FROM pg_catalog.pg_stat_activity
WHERE query = $1 AND pid <> $2 LIMIT 1`, listen, not).Scan(&pid)
		if err == nil {
			return pid
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no backend runs %q", listen)
	return 0
}
