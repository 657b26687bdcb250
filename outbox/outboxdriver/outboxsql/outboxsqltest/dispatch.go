package outboxsqltest

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/internal/countpub"
)

type e2eMessage struct {
	N int `json:"n"`
}

func (e2eMessage) MessageType() string { return "e2e.created" }

// RunDispatchersExactlyOnce enqueues messages from four producers in
// transactions of 100, rolling every 10th transaction back, runs
// dispatchers concurrently on one store until everything committed is
// published, and checks that each committed message was published exactly
// once (no fault is injected, so a duplicate is a bug), no rolled-back one
// ever was, and no row is left leased.
func RunDispatchersExactlyOnce[T any](t *testing.T, tg Target[T], dispatchers, messages int) {
	t.Helper()
	s := tg.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	pub := &countpub.Publisher{}
	settings := outbox.DefaultSettings()
	settings.WorkerID = "e2e"
	settings.BatchSize, settings.MaxInFlight = 100, 200
	settings.PollInterval, settings.IdlePollInterval = 10*time.Millisecond, 50*time.Millisecond
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	errs := make([]error, dispatchers)
	for i := range dispatchers {
		st := settings
		if i > 0 {
			st.StatsInterval = outbox.Off
		}
		d, err := outbox.New(s, pub, st, outbox.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { errs[i] = d.Run(runCtx) })
	}
	stopped := false
	stopAll := func() {
		if !stopped {
			stopped = true
			stop()
			wg.Wait()
		}
	}
	defer stopAll()

	var mu sync.Mutex
	committed := map[reliar.MessageID]bool{}
	rolledBack := map[reliar.MessageID]bool{}
	const producers, perTx = 4, 100
	var txs atomic.Int64 // every 10th transaction, over all producers, rolls back
	var pwg sync.WaitGroup
	perProducer := messages / producers
	for p := range producers {
		pwg.Go(func() {
			for tx := 0; tx*perTx < perProducer; tx++ {
				msgs := make([]reliar.Outgoing, 0, perTx)
				for i := 0; i < perTx && tx*perTx+i < perProducer; i++ {
					msgs = append(msgs, reliar.NewMsg(e2eMessage{N: p*perProducer + tx*perTx + i}))
				}
				rollback := txs.Add(1)%10 == 0
				if err := enqueueMaybeRollback(ctx, s, rollback, msgs); err != nil {
					t.Errorf("producer %d: %v", p, err)
					return
				}
				mu.Lock()
				for _, m := range msgs {
					if rollback {
						rolledBack[m.ID] = true
					} else {
						committed[m.ID] = true
					}
				}
				mu.Unlock()
			}
		})
	}
	pwg.Wait()
	if t.Failed() {
		return
	}
	for {
		if len(pub.Counts()) >= len(committed) {
			st, err := s.Stats(ctx)
			if err == nil && st.Pending == 0 {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("timed out: %d of %d committed messages published", len(pub.Counts()), len(committed))
		}
		time.Sleep(20 * time.Millisecond)
	}
	stopAll()
	for i, err := range errs {
		if err != nil {
			t.Errorf("dispatcher %d: Run = %v", i, err)
		}
	}
	counts := pub.Counts()
	for id := range committed {
		if n := counts[id]; n != 1 {
			t.Errorf("committed message %s published %d times, want exactly once", id, n)
		}
	}
	for id := range rolledBack {
		if counts[id] != 0 {
			t.Errorf("rolled-back message %s was published", id)
		}
	}
	st, err := s.Stats(context.WithoutCancel(ctx))
	if err != nil || st.Leased != 0 || st.Pending != 0 {
		t.Errorf("after the run: %+v, %v; want nothing pending or leased", st, err)
	}
	if len(committed) == 0 || len(rolledBack) == 0 {
		t.Fatalf("the run committed %d and rolled back %d messages; want both", len(committed), len(rolledBack))
	}
}

func enqueueMaybeRollback(ctx context.Context, s Store, rollback bool, msgs []reliar.Outgoing) error {
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := s.Enqueue(ctx, tx, msgs...); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	if rollback {
		return tx.Rollback()
	}
	return tx.Commit()
}
