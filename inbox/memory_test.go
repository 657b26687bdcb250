package inbox_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/inbox/inboxtest"
)

// memEffects is a business table for the in-memory harness: effects are
// staged per transaction and applied at commit.
type memEffects struct {
	mu     sync.Mutex
	staged map[*inbox.MemoryTx][]string
	rows   []string
}

func TestMemoryConformance(t *testing.T) {
	inboxtest.Run(t, func(t *testing.T) inboxtest.Harness[*inbox.MemoryTx] {
		m := inbox.NewMemory()
		fx := &memEffects{staged: map[*inbox.MemoryTx][]string{}}
		return inboxtest.Harness[*inbox.MemoryTx]{
			Marker: m,
			Begin:  func(context.Context) (*inbox.MemoryTx, error) { return m.Begin(), nil },
			Commit: func(tx *inbox.MemoryTx) error {
				fx.mu.Lock()
				fx.rows = append(fx.rows, fx.staged[tx]...)
				delete(fx.staged, tx)
				fx.mu.Unlock()
				return tx.Commit()
			},
			Rollback: func(tx *inbox.MemoryTx) error {
				fx.mu.Lock()
				delete(fx.staged, tx)
				fx.mu.Unlock()
				return tx.Rollback()
			},
			Effect: func(_ context.Context, tx *inbox.MemoryTx, v string) error {
				fx.mu.Lock()
				defer fx.mu.Unlock()
				fx.staged[tx] = append(fx.staged[tx], v)
				return nil
			},
			Effects: func(context.Context) ([]string, error) {
				fx.mu.Lock()
				defer fx.mu.Unlock()
				return append([]string(nil), fx.rows...), nil
			},
			Advance: func(_ context.Context, d time.Duration) error { m.Advance(d); return nil },
		}
	})
}

func TestMemoryTxEndsOnce(t *testing.T) {
	m := inbox.NewMemory()
	tx := m.Begin()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != inbox.ErrTxDone {
		t.Fatalf("second end = %v, want ErrTxDone", err)
	}
	if _, err := m.MarkProcessed(context.Background(), tx, "c", [16]byte{1}); err != inbox.ErrTxDone {
		t.Fatalf("mark after commit = %v", err)
	}
	if _, err := inbox.NewMemory().MarkProcessed(context.Background(), m.Begin(), "c", [16]byte{1}); err == nil {
		t.Fatal("a transaction of another inbox was accepted")
	}
}

func TestMemoryWaitHonoursContext(t *testing.T) {
	m := inbox.NewMemory()
	holder := m.Begin()
	if first, err := m.MarkProcessed(context.Background(), holder, "c", [16]byte{2}); !first || err != nil {
		t.Fatal(first, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := m.MarkProcessed(ctx, m.Begin(), "c", [16]byte{2}); err != context.DeadlineExceeded {
		t.Fatalf("waiting mark = %v, want the context's deadline", err)
	}
	if again, _ := m.MarkProcessed(context.Background(), holder, "c", [16]byte{2}); again {
		t.Fatal("re-marking in the same transaction reported new")
	}
	holder.Rollback()
}
