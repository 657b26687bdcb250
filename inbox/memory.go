package inbox

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/reliar/reliar"
)

// Memory is an in-memory Marker with real transaction semantics, for unit
// tests: marks made in a MemoryTx become visible at Commit and vanish at
// Rollback, and a second transaction marking the same message waits for
// the first to end, as a database's unique index makes it.
type Memory struct {
	mu      sync.Mutex
	done    map[key]time.Time // committed records and when
	pending map[key]*MemoryTx // uncommitted records and their owner
	now     func() time.Time
}

type key struct {
	consumer string
	id       reliar.MessageID
}

// NewMemory returns an empty in-memory inbox.
func NewMemory() *Memory {
	return &Memory{done: map[key]time.Time{}, pending: map[key]*MemoryTx{}, now: time.Now}
}

// MemoryTx is a transaction of a Memory inbox.
type MemoryTx struct {
	m     *Memory
	keys  []key
	ended chan struct{}
	once  sync.Once
}

// ErrTxDone is returned for a MemoryTx used after Commit or Rollback.
var ErrTxDone = errors.New("inbox: transaction already ended")

// Begin starts a transaction.
func (m *Memory) Begin() *MemoryTx {
	return &MemoryTx{m: m, ended: make(chan struct{})}
}

// Commit makes the transaction's records visible.
func (tx *MemoryTx) Commit() error { return tx.end(true) }

// Rollback discards the transaction's records.
func (tx *MemoryTx) Rollback() error { return tx.end(false) }

func (tx *MemoryTx) end(commit bool) error {
	err := ErrTxDone
	tx.once.Do(func() {
		err = nil
		m := tx.m
		m.mu.Lock()
		now := m.now()
		for _, k := range tx.keys {
			delete(m.pending, k)
			if commit {
				m.done[k] = now
			}
		}
		m.mu.Unlock()
		close(tx.ended)
	})
	return err
}

// MarkProcessed implements Marker.
func (m *Memory) MarkProcessed(ctx context.Context, tx *MemoryTx, consumer string, id reliar.MessageID) (bool, error) {
	if tx == nil || tx.m != m {
		return false, errors.New("inbox: transaction of another inbox")
	}
	k := key{consumer, id}
	for {
		select {
		case <-tx.ended:
			return false, ErrTxDone
		default:
		}
		m.mu.Lock()
		if _, ok := m.done[k]; ok {
			m.mu.Unlock()
			return false, nil
		}
		owner, busy := m.pending[k]
		if !busy {
			m.pending[k] = tx
			tx.keys = append(tx.keys, k)
			m.mu.Unlock()
			return true, nil
		}
		m.mu.Unlock()
		if owner == tx {
			return false, nil // marked earlier in this same transaction
		}
		select {
		case <-owner.ended: // look again: committed, or rolled back
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// PurgeProcessed implements Marker.
func (m *Memory) PurgeProcessed(ctx context.Context, retention time.Duration, limit int) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cut := m.now().Add(-retention)
	var n int64
	for k, at := range m.done {
		if n >= int64(limit) {
			break
		}
		if at.Before(cut) {
			delete(m.done, k)
			n++
		}
	}
	return n, ctx.Err()
}

// Advance makes the records look d older, for retention tests.
func (m *Memory) Advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, at := range m.done {
		m.done[k] = at.Add(-d)
	}
}
