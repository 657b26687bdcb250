package memstore

import "container/heap"

// The indexes a row can sit in. Each row remembers its position in every
// index (-1 when absent), so removals and re-orderings cost O(log n).
const (
	idxReady     = iota // pending rows without a live lease, by (available_at, sequence)
	idxHeads            // the subset of idxReady that per-key claims may take
	idxLeased           // rows with a lease, by locked_until
	idxKey              // the pending rows of one ordering key, by sequence
	idxPublished        // published rows, by published_at
	idxDead             // dead rows, by dead_at
	numIndexes
)

// rowHeap is a binary heap of rows that keeps each row's position up to date,
// so that any row can be removed or re-ordered in O(log n).
type rowHeap struct {
	rows []*row
	slot int
	less func(a, b *row) bool
}

func newRowHeap(slot int, less func(a, b *row) bool) *rowHeap {
	return &rowHeap{slot: slot, less: less}
}

func (h *rowHeap) Len() int           { return len(h.rows) }
func (h *rowHeap) Less(i, j int) bool { return h.less(h.rows[i], h.rows[j]) }

func (h *rowHeap) Swap(i, j int) {
	h.rows[i], h.rows[j] = h.rows[j], h.rows[i]
	h.rows[i].idx[h.slot] = i
	h.rows[j].idx[h.slot] = j
}

// Push and Pop implement heap.Interface; use add and remove instead.
func (h *rowHeap) Push(x any) {
	r := x.(*row)
	r.idx[h.slot] = len(h.rows)
	h.rows = append(h.rows, r)
}

func (h *rowHeap) Pop() any {
	n := len(h.rows) - 1
	r := h.rows[n]
	h.rows[n] = nil
	h.rows = h.rows[:n]
	r.idx[h.slot] = -1
	return r
}

// add inserts r unless it is already in the heap.
func (h *rowHeap) add(r *row) {
	if r.idx[h.slot] < 0 {
		heap.Push(h, r)
	}
}

// remove takes r out of the heap if it is there.
func (h *rowHeap) remove(r *row) {
	if i := r.idx[h.slot]; i >= 0 {
		heap.Remove(h, i)
	}
}

// fix restores the heap order after r's sort key changed.
func (h *rowHeap) fix(r *row) {
	if i := r.idx[h.slot]; i >= 0 {
		heap.Fix(h, i)
	}
}

// peek returns the smallest row, or nil when the heap is empty.
func (h *rowHeap) peek() *row {
	if len(h.rows) == 0 {
		return nil
	}
	return h.rows[0]
}

func byAvailable(a, b *row) bool {
	if !a.availableAt.Equal(b.availableAt) {
		return a.availableAt.Before(b.availableAt)
	}
	return a.seq < b.seq
}

func byLockedUntil(a, b *row) bool {
	if !a.lockedUntil.Equal(b.lockedUntil) {
		return a.lockedUntil.Before(b.lockedUntil)
	}
	return a.seq < b.seq
}

func bySequence(a, b *row) bool { return a.seq < b.seq }

func byPublishedAt(a, b *row) bool {
	if !a.publishedAt.Equal(b.publishedAt) {
		return a.publishedAt.Before(b.publishedAt)
	}
	return a.seq < b.seq
}

func byDeadAt(a, b *row) bool {
	if !a.deadAt.Equal(b.deadAt) {
		return a.deadAt.Before(b.deadAt)
	}
	return a.seq < b.seq
}
