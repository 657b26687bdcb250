package memstore

import (
	"cmp"
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

type modelMsg struct{ N int }

func (modelMsg) MessageType() string { return "memstore.model" }

// TestIndexesMatchScan drives a store through random operations and checks,
// after each, that the indexes agree with the rows' states and that every
// claim takes exactly the rows a full scan says are next.
func TestIndexesMatchScan(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
		s, err := New(WithClock(func() time.Time { return base }))
		if err != nil {
			t.Fatal(err)
		}
		m := &model{t: t, s: s, rng: rng, ctx: context.Background()}
		for step := range 400 {
			m.step()
			if t.Failed() {
				t.Fatalf("seed %d: failed at step %d", seed, step)
			}
			m.checkIndexes()
		}
	}
}

type model struct {
	t      *testing.T
	s      *Store
	rng    *rand.Rand
	ctx    context.Context
	leases []outboxdriver.Lease // every lease ever handed out, stale ones included
}

func (m *model) step() {
	s, rng := m.s, m.rng
	switch op := rng.IntN(12); {
	case op < 3:
		m.enqueue()
	case op < 6:
		m.acquire()
	case op < 9 && len(m.leases) > 0:
		m.outcome(m.leases[rng.IntN(len(m.leases))])
	case op == 9:
		s.Advance(time.Duration(rng.IntN(120)) * time.Second)
	case op == 10:
		_, _ = s.Purge(m.ctx, outboxdriver.PurgeRequest{BatchSize: 1 + rng.IntN(3), DeadRetention: ptr(10 * time.Minute), PublishedRetention: ptr(5 * time.Minute)})
	default:
		if ids := m.deadIDs(); len(ids) > 0 {
			id := ids[rng.IntN(len(ids))]
			if rng.IntN(2) == 0 {
				_, _ = s.RetryDead(m.ctx, []reliar.MessageID{id})
			} else {
				_, _ = s.PurgeDead(m.ctx, []reliar.MessageID{id})
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

func (m *model) enqueue() {
	msg := reliar.NewMsg(modelMsg{N: m.rng.IntN(100)})
	msg.OrderingKey = []string{"", "", "k1", "k2", "k3"}[m.rng.IntN(5)]
	m.s.mu.Lock()
	now := m.s.now()
	m.s.mu.Unlock()
	if m.rng.IntN(3) == 0 {
		msg.AvailableAt = now.Add(time.Duration(m.rng.IntN(600)-300) * time.Second)
	}
	if m.rng.IntN(4) == 0 {
		exp := now.Add(time.Duration(m.rng.IntN(1200)-300) * time.Second)
		msg.Metadata.Delivery.ExpiresAt = &exp
	}
	if _, err := m.s.Enqueue(m.ctx, msg); err != nil {
		m.t.Fatalf("Enqueue: %v", err)
	}
}

func (m *model) acquire() {
	req := outboxdriver.AcquireRequest{
		Worker:    "w",
		BatchSize: 1 + m.rng.IntN(5),
		Lease:     time.Duration(30+m.rng.IntN(150)) * time.Second,
	}
	if m.rng.IntN(2) == 0 {
		req.Ordering = outboxdriver.PerKey
	} else {
		req.MaxClaims = m.rng.IntN(3)
	}
	want := m.expectedClaim(req)
	b, err := m.s.Acquire(m.ctx, req)
	if err != nil {
		m.t.Fatalf("Acquire: %v", err)
	}
	got := append(recordIDs(b.Records), b.DeadMaxClaims...)
	slices.SortFunc(got, func(a, b reliar.MessageID) int { return cmp.Compare(m.s.rows[a].seq, m.s.rows[b].seq) })
	slices.SortFunc(want, func(a, b reliar.MessageID) int { return cmp.Compare(m.s.rows[a].seq, m.s.rows[b].seq) })
	if !slices.Equal(got, want) {
		m.t.Fatalf("Acquire(%+v) consumed %v, a scan says %v", req, got, want)
	}
	for _, r := range b.Records {
		m.leases = append(m.leases, r.Lease())
	}
}

// expectedClaim scans every pending row for the ones req should consume.
func (m *model) expectedClaim(req outboxdriver.AcquireRequest) []reliar.MessageID {
	s := m.s
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	heads := map[string]*row{}
	for _, r := range s.pending {
		if r.expired(now) && !r.liveLease(now) {
			continue // never published, so it blocks nothing
		}
		if h := heads[r.key]; r.key != "" && (h == nil || r.seq < h.seq) {
			heads[r.key] = r
		}
	}
	var due []*row
	for _, r := range s.pending {
		if r.availableAt.After(now) || r.liveLease(now) || r.expired(now) {
			continue
		}
		if req.Ordering == outboxdriver.PerKey && r.key != "" && heads[r.key] != r {
			continue
		}
		due = append(due, r)
	}
	slices.SortFunc(due, func(a, b *row) int {
		if c := a.availableAt.Compare(b.availableAt); c != 0 {
			return c
		}
		return cmp.Compare(a.seq, b.seq)
	})
	var ids []reliar.MessageID
	for _, r := range due[:min(len(due), req.BatchSize)] {
		ids = append(ids, r.enc.ID)
	}
	return ids
}

func (m *model) outcome(l outboxdriver.Lease) {
	var err error
	switch m.rng.IntN(5) {
	case 0:
		_, err = m.s.Complete(m.ctx, []outboxdriver.Lease{l})
	case 1:
		_, err = m.s.Fail(m.ctx, []outboxdriver.FailedOutcome{{Lease: l, Error: "retry", RetryAfter: time.Duration(m.rng.IntN(120)) * time.Second}})
	case 2:
		_, err = m.s.Fail(m.ctx, []outboxdriver.FailedOutcome{{Lease: l, Error: "dead", DeadReason: outboxdriver.DeadPermanent}})
	case 3:
		_, err = m.s.Release(m.ctx, []outboxdriver.Lease{l})
	default:
		_, err = m.s.ExtendLease(m.ctx, []outboxdriver.Lease{l}, time.Duration(m.rng.IntN(120))*time.Second)
	}
	if err != nil {
		m.t.Fatalf("outcome: %v", err)
	}
}

func (m *model) deadIDs() []reliar.MessageID {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	var ids []reliar.MessageID
	for _, r := range m.s.dead.all() {
		ids = append(ids, r.enc.ID)
	}
	slices.SortFunc(ids, func(a, b reliar.MessageID) int { return cmp.Compare(m.s.rows[a].seq, m.s.rows[b].seq) })
	return ids
}

func recordIDs(recs []outboxdriver.Record) []reliar.MessageID {
	ids := make([]reliar.MessageID, len(recs))
	for i := range recs {
		ids[i] = recs[i].Envelope.ID
	}
	return ids
}

// checkIndexes verifies that every row sits in exactly the indexes its state
// calls for, and that every heap is ordered.
func (m *model) checkIndexes() {
	s, t := m.s, m.t
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for id, r := range s.rows {
		in := func(slot int) bool { return r.idx[slot] >= 0 }
		_, isPending := s.pending[id]
		isHead := r.state == ready && (r.key == "" || s.keys[r.key].peek() == r)
		blocks := r.state == ready || r.state == leased
		switch {
		case isPending != r.pending():
			t.Errorf("row %d: in pending map %v, state %d", r.seq, isPending, r.state)
		case in(idxReady) != (r.state == ready), in(idxLeased) != (r.state == leased),
			in(idxPublished) != (r.state == published), in(idxDead) != (r.state == dead):
			t.Errorf("row %d: state %d but index slots %v", r.seq, r.state, r.idx)
		case in(idxKey) != (blocks && r.key != ""):
			t.Errorf("row %d: key index membership %v, state %d key %q", r.seq, in(idxKey), r.state, r.key)
		case in(idxExpiring) != (r.state == ready && r.expiresAt != nil):
			t.Errorf("row %d: expiring index membership %v, state %d expires %v", r.seq, in(idxExpiring), r.state, r.expiresAt)
		case in(idxHeads) != isHead:
			t.Errorf("row %d: heads membership %v, want %v", r.seq, in(idxHeads), isHead)
		case r.state == leased && !r.hasLease, r.state == parked && r.liveLease(now):
			t.Errorf("row %d: state %d with lease %v until %v", r.seq, r.state, r.hasLease, r.lockedUntil)
		case !r.pending() && r.hasLease:
			t.Errorf("row %d: terminal row keeps a lease", r.seq)
		}
	}
	for key, h := range s.headOf {
		if h.key != key || h.idx[idxHeads] < 0 {
			t.Errorf("headOf[%q] is row %d (key %q) outside the heads index", key, h.seq, h.key)
		}
	}
	heaps := []*rowHeap{s.ready, s.heads, s.leased, s.published, s.dead, s.expiring}
	for _, h := range s.keys {
		heaps = append(heaps, h)
	}
	for _, h := range heaps {
		for i, e := range h.entries {
			if i > 0 && h.Less(i, (i-1)/2) {
				t.Errorf("heap %d out of order at %d", h.slot, i)
			}
			if e.r.idx[h.slot] != i {
				t.Errorf("heap %d: row at %d thinks it is at %d", h.slot, i, e.r.idx[h.slot])
			}
			if at, seq := h.key(e.r); at != e.at || seq != e.seq {
				t.Errorf("heap %d: row %d filed under a stale key", h.slot, e.r.seq)
			}
		}
	}
}
