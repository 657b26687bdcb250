package memstore

import (
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// state says which index holds a row; every row is in exactly one state.
type state int

const (
	// ready: pending and not held by a live lease (it may still carry a
	// lapsed one); in the ready index, and in the heads index when per-key
	// claims may take it.
	ready state = iota
	// leased: pending with a lease, in the leased index. The lease may have
	// lapsed without anyone noticing yet; the next claim moves it to ready.
	leased
	// parked: pending but past expires_at, out of the claim indexes until
	// the expiry sweep (or a lease extension) moves it.
	parked
	published
	dead
)

// row is one outbox row: its encoded columns and its bookkeeping.
type row struct {
	enc outboxdriver.Row // encoded columns, as written at enqueue

	seq         int64
	key         string
	tenant      string // tenant_id, or "" for none: the key of fair claims
	availableAt time.Time
	createdAt   time.Time
	expiresAt   *time.Time

	attempts      int
	claimCount    int
	lapsedClaims  int
	lastClaimedAt *time.Time

	// holder, lockedUntil and token are the lease; hasLease says whether
	// there is one (lapsed or not).
	hasLease    bool
	holder      string
	lockedUntil time.Time
	token       uuid.UUID

	publishedAt time.Time
	deadAt      time.Time
	deadReason  outboxdriver.DeadReason
	lastError   *string

	state state
	idx   [numIndexes]int

	// env and decodeErr cache the result of decoding enc, done once when
	// the row is made, outside the store's lock.
	env       reliar.SerializedEnvelope
	decodeErr error
}

// newRow makes a row of enc and decodes it; the store files it later with
// place, under its lock.
func newRow(enc outboxdriver.Row) *row {
	// Times are kept to the microsecond, as the SQL stores keep them, so
	// that rows whose times differ by less tie, and are ordered by
	// sequence, here as there.
	enc.ExpiresAt = truncate(enc.ExpiresAt)
	enc.AvailableAt = truncate(enc.AvailableAt)
	enc.CreatedAt = enc.CreatedAt.Truncate(time.Microsecond)
	r := &row{enc: enc}
	r.env, r.decodeErr = r.enc.Envelope()
	if enc.OrderingKey != nil {
		r.key = *enc.OrderingKey
	}
	if enc.TenantID != nil {
		r.tenant = *enc.TenantID
	}
	if enc.ExpiresAt != nil {
		t := *enc.ExpiresAt
		r.expiresAt = &t
	}
	for i := range r.idx {
		r.idx[i] = -1
	}
	return r
}

// truncate returns t to the microsecond; nil for nil.
func truncate(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	v := t.Truncate(time.Microsecond)
	return &v
}

// place gives a new row its sequence and its store-clock defaults.
func (r *row) place(seq int64, now time.Time) {
	r.seq = seq
	r.enc.Sequence = seq
	r.availableAt = now
	if r.enc.AvailableAt != nil {
		r.availableAt = *r.enc.AvailableAt
	}
	r.createdAt = r.enc.CreatedAt
	if r.createdAt.IsZero() {
		r.createdAt = now
	}
	r.enc.CreatedAt = r.createdAt
}

func (r *row) pending() bool { return r.state == ready || r.state == leased || r.state == parked }

// blocksKey reports whether the row holds back the later rows of its key: it
// is pending and not parked (an expired row without a live lease is never
// published, so it blocks nothing).
func (r *row) blocksKey() bool { return r.state == ready || r.state == leased }

// expired reports whether the row is past its expires_at.
func (r *row) expired(now time.Time) bool {
	return r.expiresAt != nil && !r.expiresAt.After(now)
}

// liveLease reports whether the row is held by a lease that has not lapsed.
func (r *row) liveLease(now time.Time) bool { return r.hasLease && r.lockedUntil.After(now) }

// holds reports whether l names the row's current lease.
func (r *row) holds(l outboxdriver.Lease) bool {
	return r.hasLease && r.token == l.Token && r.pending()
}

func (r *row) clearLease() {
	r.hasLease = false
	r.holder = ""
	r.lockedUntil = time.Time{}
	r.token = uuid.Nil
}

// envelope returns a copy of the decoded envelope with the row's sequence,
// creation time and current attempt number.
func (r *row) envelope() (reliar.SerializedEnvelope, error) {
	if r.decodeErr != nil {
		return reliar.SerializedEnvelope{}, r.decodeErr
	}
	e := r.env
	e.Headers = maps.Clone(e.Headers)
	e.Sequence = r.seq
	e.CreatedAt = r.createdAt
	e.Attempt = r.attempts + 1
	return e, nil
}
