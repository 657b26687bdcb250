package memstore

import (
	"context"
	"sync"
)

// Wakeups returns a channel that receives a value after each Enqueue or
// InsertRow. Signals are coalesced: the channel holds at most one, standing
// for every enqueue since it was last drained. The channel is closed when ctx
// is done.
func (s *Store) Wakeups(ctx context.Context) (<-chan struct{}, error) {
	if err := checkContext(ctx, "wakeups"); err != nil {
		return nil, err
	}
	ch := make(chan struct{}, 1)
	s.mu.Lock()
	s.subscribers[ch] = struct{}{}
	s.mu.Unlock()
	context.AfterFunc(ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		delete(s.subscribers, ch)
		close(ch)
	})
	return ch, nil
}

// notify signals every listener without blocking; s.mu must be held.
func (s *Store) notify() {
	for ch := range s.subscribers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// TryLockMaintenance takes the store's maintenance lock without waiting; ok
// is false while another holder has it. unlock releases it and may be called
// more than once.
func (s *Store) TryLockMaintenance(ctx context.Context) (unlock func(), ok bool, err error) {
	if err := checkContext(ctx, "lock maintenance"); err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.maintenance {
		return nil, false, nil
	}
	s.maintenance = true
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.maintenance = false
			s.mu.Unlock()
		})
	}, true, nil
}
