package outbox

import "sync"

// resultQueue carries results from the goroutines the loop starts back to
// the loop. A put never blocks, and the loop takes every waiting result at
// once: it is woken once per burst of results instead of once per result,
// which for a plain Publisher, whose every row is a call of its own, saves
// a pass of the loop's select per row.
type resultQueue[T any] struct {
	mu    sync.Mutex
	items []T
	// spare is the slice the loop handed back at its last take; only the
	// loop touches it.
	spare []T
	// ready holds a token while results wait; capacity 1.
	ready chan struct{}
}

func newResultQueue[T any]() *resultQueue[T] {
	return &resultQueue[T]{ready: make(chan struct{}, 1)}
}

// put adds v. The put that makes the queue non-empty leaves a token in
// ready; every result put before the loop's next take is taken with it.
// Results put after the loop has stopped are never read.
func (q *resultQueue[T]) put(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	first := len(q.items) == 1
	q.mu.Unlock()
	if first {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
}

// take returns every waiting result in the order they were put. The slice
// is the loop's until its next take.
func (q *resultQueue[T]) take() []T {
	clear(q.spare)
	q.mu.Lock()
	items := q.items
	q.items = q.spare[:0]
	q.mu.Unlock()
	q.spare = items
	return items
}
