package pgstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// recorder is a publisher that counts deliveries per message id.
type recorder struct {
	mu     sync.Mutex
	counts map[reliar.MessageID]int
	order  map[string][]int64 // ordering key → sequences in publish order
	total  atomic.Int64
}

func newRecorder() *recorder {
	return &recorder{counts: map[reliar.MessageID]int{}, order: map[string][]int64{}}
}

func (r *recorder) Publish(_ context.Context, env *reliar.SerializedEnvelope) error {
	r.mu.Lock()
	r.counts[env.ID]++
	if env.OrderingKey != "" {
		r.order[env.OrderingKey] = append(r.order[env.OrderingKey], env.Sequence)
	}
	r.mu.Unlock()
	r.total.Add(1)
	return nil
}

// e2eRun runs dispatchers on s until want messages were published and the
// table has nothing pending, then stops them and checks that Run returned
// nil.
func e2eRun(t *testing.T, s *Store, pub *recorder, dispatchers int, ordering outboxdriver.Ordering, produce func(context.Context) error, want int64) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	settings := outbox.DefaultSettings()
	settings.WorkerID = "e2e"
	settings.BatchSize = 100
	settings.MaxInFlight = 200
	settings.PollInterval = 20 * time.Millisecond
	settings.IdlePollInterval = 200 * time.Millisecond
	settings.Ordering = ordering
	var wg sync.WaitGroup
	runErrs := make([]error, dispatchers)
	for i := range dispatchers {
		st := settings
		if i > 0 {
			st.StatsInterval = outbox.Off
		}
		d, err := outbox.New(s, pub, st, outbox.WithLogger(quietLogger()))
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { runErrs[i] = d.Run(ctx) })
	}
	defer func() {
		cancel()
		wg.Wait()
		for i, err := range runErrs {
			if err != nil {
				t.Errorf("dispatcher %d: Run = %v", i, err)
			}
		}
	}()
	if err := produce(ctx); err != nil {
		t.Fatalf("produce: %v", err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		st, err := s.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if pub.total.Load() >= want && st.Pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("published %d of %d; stats %+v", pub.total.Load(), want, st)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// produceMixed enqueues committed batches of orderPlaced messages and
// rolled-back batches in between, from several producers at once, and
// returns the ids of each kind. With keys, each producer writes its own
// share of them (key index ≡ producer mod producers): the writes of a key
// are then serialised, the case in which the package documentation
// promises sequence order. Two producers' overlapping transactions on one
// key may be published in commit order instead, which a test of sequence
// order cannot tell from a violation.
func produceMixed(pool *pgxpool.Pool, s *Store, committed, perTx, producers int, keys []string) (func(context.Context) error, *sync.Map, *sync.Map) {
	var good, rolledBack sync.Map
	produce := func(ctx context.Context) error {
		var wg sync.WaitGroup
		errs := make(chan error, producers)
		txs := committed / perTx
		for p := range producers {
			wg.Go(func() {
				for i := p; i < txs; i += producers {
					msgs := make([]reliar.Outgoing, perTx)
					for j := range msgs {
						m := reliar.NewMsg(orderPlaced{OrderID: fmt.Sprint(i, "-", j)})
						if own := len(keys) / producers; own > 0 {
							m.OrderingKey = keys[((i*perTx+j)%own)*producers+p]
						}
						msgs[j] = m
					}
					commit := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
						_, err := s.Enqueue(ctx, tx, msgs...)
						return err
					})
					if commit != nil {
						errs <- commit
						return
					}
					for _, m := range msgs {
						good.Store(m.ID, true)
					}
					// Every tenth transaction enqueues, then rolls back.
					if i%10 == 0 {
						tx, err := pool.Begin(ctx)
						if err != nil {
							errs <- err
							return
						}
						lost := []reliar.Outgoing{reliar.NewMsg(orderPlaced{OrderID: "lost"}), reliar.NewMsg(orderPlaced{OrderID: "lost"})}
						if _, err := s.Enqueue(ctx, tx, lost...); err != nil {
							errs <- err
						}
						if err := tx.Rollback(ctx); err != nil {
							errs <- err
						}
						for _, m := range lost {
							rolledBack.Store(m.ID, true)
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		return errors.Join(drain(errs)...)
	}
	return produce, &good, &rolledBack
}

func drain(errs <-chan error) []error {
	var out []error
	for err := range errs {
		out = append(out, err)
	}
	return out
}

// checkExactlyOnce verifies that every committed message was published
// exactly once and no rolled-back one ever was.
func checkExactlyOnce(t *testing.T, s *Store, pub *recorder, good, rolledBack *sync.Map, want int) {
	t.Helper()
	pub.mu.Lock()
	defer pub.mu.Unlock()
	n := 0
	good.Range(func(k, _ any) bool {
		n++
		if c := pub.counts[k.(reliar.MessageID)]; c != 1 {
			t.Errorf("committed message %s published %d times", k, c)
		}
		return true
	})
	if n != want {
		t.Fatalf("%d committed messages, want %d", n, want)
	}
	rolledBack.Range(func(k, _ any) bool {
		if c := pub.counts[k.(reliar.MessageID)]; c != 0 {
			t.Errorf("rolled-back message %s published %d times", k, c)
		}
		return true
	})
	if len(pub.counts) != want {
		t.Errorf("%d distinct messages published, want %d", len(pub.counts), want)
	}
	if got := countRows(t, s, "published_at IS NOT NULL AND attempts = 1 AND lease_token IS NULL"); got != want {
		t.Errorf("%d rows published once with their lease cleared, want %d", got, want)
	}
}

func TestEndToEndFourDispatchersExactlyOnce(t *testing.T) {
	t.Parallel()
	pool, _ := dedicatedPool(t, 10)
	s := newStoreOn(t, pool)
	const n = 20000
	pub := newRecorder()
	produce, good, rolledBack := produceMixed(pool, s, n, 100, 4, nil)
	e2eRun(t, s, pub, 4, outboxdriver.Unordered, produce, n)
	checkExactlyOnce(t, s, pub, good, rolledBack, n)
}

func TestEndToEndPerKeyOrder(t *testing.T) {
	t.Parallel()
	pool, _ := dedicatedPool(t, 10)
	s := newStoreOn(t, pool)
	const n = 3000
	keys := make([]string, 40)
	for i := range keys {
		keys[i] = fmt.Sprint("customer-", i)
	}
	pub := newRecorder()
	produce, good, rolledBack := produceMixed(pool, s, n, 50, 3, keys)
	e2eRun(t, s, pub, 4, outboxdriver.PerKey, produce, n)
	checkExactlyOnce(t, s, pub, good, rolledBack, n)
	pub.mu.Lock()
	defer pub.mu.Unlock()
	for key, seqs := range pub.order {
		for i := 1; i < len(seqs); i++ {
			if seqs[i] <= seqs[i-1] {
				t.Fatalf("key %s published sequence %d after %d", key, seqs[i], seqs[i-1])
			}
		}
	}
}
