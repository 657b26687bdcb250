package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
)

// listeners counts the backends of app that LISTEN on the store's channel.
func listeners(t *testing.T, s *Store, app string) int {
	t.Helper()
	var n int
	if err := sharedPool.QueryRow(t.Context(), `SELECT count(*) FROM pg_catalog.pg_stat_activity
WHERE application_name = $1 AND query = $2`, app, "LISTEN "+pgx.Identifier{s.Channel()}.Sanitize()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitListeners waits until app has want listening backends.
func waitListeners(t *testing.T, s *Store, app string, want int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		n := listeners(t, s, app)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d listening connections, want %d", n, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestWakeupsShareOneListener: many dispatchers of one process subscribe to
// one store; it holds one LISTEN connection whatever their number, fans
// every commit out to each of them, and lets the connection go when the
// last one leaves.
func TestWakeupsShareOneListener(t *testing.T) {
	t.Parallel()
	pool, app := dedicatedPool(t, 4)
	s := newStoreOn(t, pool)
	const subscribers = 40
	var (
		chans   []<-chan struct{}
		cancels []context.CancelFunc
	)
	for range subscribers {
		ctx, cancel := context.WithCancel(context.Background())
		ch, err := s.Wakeups(ctx)
		if err != nil {
			cancel()
			t.Fatalf("Wakeups: %v", err)
		}
		chans, cancels = append(chans, ch), append(cancels, cancel)
	}
	defer func() {
		for _, c := range cancels {
			c()
		}
	}()
	waitListeners(t, s, app, 1)
	if st := pool.Stat(); st.TotalConns() > 4 {
		t.Fatalf("the pool holds %d connections", st.TotalConns())
	}

	enqueue(t, s, reliar.NewMsg(orderPlaced{"o-1"}))
	for i, ch := range chans {
		expectSignal(t, ch, 5*time.Second, "subscriber "+itoa(i))
	}

	// Half leave: their channels close, the others still hear commits.
	for i := range subscribers / 2 {
		cancels[i]()
		expectClosed(t, chans[i])
	}
	enqueue(t, s, reliar.NewMsg(orderPlaced{"o-2"}))
	for _, ch := range chans[subscribers/2:] {
		expectSignal(t, ch, 5*time.Second, "a remaining subscriber")
	}
	waitListeners(t, s, app, 1)

	// The last one leaving ends the listener; a new subscriber starts one.
	for i := subscribers / 2; i < subscribers; i++ {
		cancels[i]()
		expectClosed(t, chans[i])
	}
	waitListeners(t, s, app, 0)
	ch := wakeups(t, s)
	waitListeners(t, s, app, 1)
	enqueue(t, s, reliar.NewMsg(orderPlaced{"o-3"}))
	expectSignal(t, ch, 5*time.Second, "a new subscriber")
}

// TestWakeupsFanOutAfterReconnect: when the shared connection is killed,
// the listener reconnects once and wakes every subscriber.
func TestWakeupsFanOutAfterReconnect(t *testing.T) {
	t.Parallel()
	pool, app := dedicatedPool(t, 4)
	s := newStoreOn(t, pool)
	a, b := wakeups(t, s), wakeups(t, s)
	waitListeners(t, s, app, 1)
	listen := "LISTEN " + pgx.Identifier{s.Channel()}.Sanitize()
	first := listenerPID(t, listen, 0)
	if _, err := sharedPool.Exec(t.Context(), "SELECT pg_terminate_backend($1, 5000)", first); err != nil {
		t.Fatal(err)
	}
	expectSignal(t, a, 15*time.Second, "first subscriber after the reconnect")
	expectSignal(t, b, 15*time.Second, "second subscriber after the reconnect")
	waitListeners(t, s, app, 1)
	enqueue(t, s, reliar.NewMsg(orderPlaced{"after"}))
	expectSignal(t, a, 5*time.Second, "first subscriber")
	expectSignal(t, b, 5*time.Second, "second subscriber")
}

// expectClosed waits for ch to be closed, draining a pending signal.
func expectClosed(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the channel was not closed after its context ended")
		}
	}
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
