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
	idxExpiring         // ready rows with an expires_at, by expires_at
	numIndexes
)

// rowHeap is a binary heap of rows that keeps each row's position up to date,
// so that any row can be removed or re-ordered in O(log n). Each entry holds
// its sort key, taken when the row is added, so sifting compares entries
// without touching the rows themselves.
type rowHeap struct {
	entries []entry
	slot    int
	key     func(r *row) (int64, int64)
}

// entry is a row and its sort key: a time in Unix nanoseconds, then the
// row's sequence.
type entry struct {
	at, seq int64
	r       *row
}

func newRowHeap(slot int, key func(r *row) (int64, int64)) *rowHeap {
	return &rowHeap{slot: slot, key: key}
}

func (h *rowHeap) Len() int { return len(h.entries) }

func (h *rowHeap) Less(i, j int) bool {
	a, b := &h.entries[i], &h.entries[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (h *rowHeap) Swap(i, j int) {
	h.entries[i], h.entries[j] = h.entries[j], h.entries[i]
	h.entries[i].r.idx[h.slot] = i
	h.entries[j].r.idx[h.slot] = j
}

// Push and Pop implement heap.Interface; use add and remove instead.
func (h *rowHeap) Push(x any) {
	r := x.(*row)
	at, seq := h.key(r)
	r.idx[h.slot] = len(h.entries)
	h.entries = append(h.entries, entry{at: at, seq: seq, r: r})
}

func (h *rowHeap) Pop() any {
	n := len(h.entries) - 1
	r := h.entries[n].r
	h.entries[n] = entry{}
	h.entries = h.entries[:n]
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

// peek returns the smallest row, or nil when the heap is empty.
func (h *rowHeap) peek() *row {
	if len(h.entries) == 0 {
		return nil
	}
	return h.entries[0].r
}

// all returns the rows of the heap, in no particular order.
func (h *rowHeap) all() []*row {
	out := make([]*row, len(h.entries))
	for i := range h.entries {
		out[i] = h.entries[i].r
	}
	return out
}

func byAvailable(r *row) (int64, int64)   { return r.availableAt.UnixNano(), r.seq }
func byLockedUntil(r *row) (int64, int64) { return r.lockedUntil.UnixNano(), r.seq }
func bySequence(r *row) (int64, int64)    { return r.seq, 0 }
func byPublishedAt(r *row) (int64, int64) { return r.publishedAt.UnixNano(), r.seq }
func byDeadAt(r *row) (int64, int64)      { return r.deadAt.UnixNano(), r.seq }
func byExpiresAt(r *row) (int64, int64)   { return r.expiresAt.UnixNano(), r.seq }
