package outboxdriver

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
)

// Store is the dispatcher's view of an outbox table. Every implementation
// passes the conformance suite in package storetest. All times come from the
// store's own clock (the database's), never the caller's.
//
// Every outcome write (Complete, Fail, Release, ExtendLease) is fenced by the
// row's id and its current lease token: a row reclaimed since contributes
// nothing, and the returned count says how many rows were affected. Outcome
// writes are idempotent, so retrying them is safe.
type Store interface {
	// Acquire claims up to BatchSize due rows ordered by (available_at,
	// sequence), giving each a fresh lease token. It holds no lock after it
	// returns. Undecodable rows are moved to dead and reported in Poisoned;
	// rows whose lapsed claims reached MaxClaims are moved to dead and
	// reported in DeadMaxClaims.
	Acquire(ctx context.Context, req AcquireRequest) (AcquiredBatch, error)
	// Complete marks rows published.
	Complete(ctx context.Context, leases []Lease) (int64, error)
	// Fail records failed attempts: a retry after a delay, or a move to dead.
	Fail(ctx context.Context, failures []FailedOutcome) (int64, error)
	// Release clears leases without recording anything else.
	Release(ctx context.Context, leases []Lease) (int64, error)
	// ExtendLease moves the lease expiry of held rows to now + d.
	ExtendLease(ctx context.Context, leases []Lease, d time.Duration) (int64, error)
	// Purge runs one bounded pass of retention and expiry.
	Purge(ctx context.Context, req PurgeRequest) (PurgeReport, error)
	// Stats counts the rows by state.
	Stats(ctx context.Context) (Stats, error)
	// Capabilities says which optional features the store supports.
	Capabilities() Capabilities

	DeadLetters
}

// DeadLetters lets operators inspect, retry and delete dead rows.
//
// Listings never read payloads, and read at most ListedDocumentBytes of
// metadata and of headers and ListedLastErrorBytes of last_error, capped in
// their SQL (rows written by plain SQL can hold any size): a listing's memory
// is bounded whatever the rows hold. DeadPayload reads one payload, capped.
type DeadLetters interface {
	// ListDead returns one page of dead rows ordered by sequence, without
	// their payloads.
	ListDead(ctx context.Context, q DeadQuery) (DeadLetterPage, error)
	// DeadPayload reads at most max bytes of one dead row's payload (max <=
	// 0 means DefaultDeadPayloadBytes; above MaxDeadPayloadBytes it is
	// capped there). A row that does not exist or is not dead fails with an
	// error matching ErrNotDead.
	DeadPayload(ctx context.Context, id reliar.MessageID, max int) (DeadPayload, error)
	// RetryDead makes dead rows due again, resetting attempts and lapsed
	// claims. It touches only dead rows.
	RetryDead(ctx context.Context, ids []reliar.MessageID) (int64, error)
	// PurgeDead deletes dead rows. It touches only dead rows.
	PurgeDead(ctx context.Context, ids []reliar.MessageID) (int64, error)
}

// Notifier is implemented by stores that can signal committed enqueues, so
// that the dispatcher claims at once instead of waiting for its next poll.
type Notifier interface {
	// Wakeups returns a channel that receives a value after enqueues commit.
	// Signals are coalesced: one value may stand for many enqueues. The
	// channel is closed when ctx is done.
	Wakeups(ctx context.Context) (<-chan struct{}, error)
}

// MaintenanceLocker is implemented by stores that can make sure one
// maintainer at a time works on a table.
type MaintenanceLocker interface {
	// TryLockMaintenance takes the table's maintenance lock without waiting.
	// When ok, unlock releases it.
	TryLockMaintenance(ctx context.Context) (unlock func(), ok bool, err error)
}

// Capabilities lists a store's optional features.
type Capabilities struct {
	// PerKeyOrdering: Acquire honours Ordering PerKey.
	PerKeyOrdering bool
	// Notify: the store implements Notifier.
	Notify bool
	// MaintenanceLock: the store implements MaintenanceLocker.
	MaintenanceLock bool
	// TenantFairness: Acquire honours Fairness FairnessTenant and the
	// per-tenant caps of AcquireRequest.
	TenantFairness bool
	// Handoff: the store implements Handoffer and was configured to use it.
	Handoff bool
	// ClaimAfter: Acquire honours AcquireRequest.After for FairnessUnordered
	// claims, with either Ordering, and its records carry the AvailableAt
	// and Envelope.Sequence that After names (Record.Position).
	ClaimAfter bool
}

// Ordering is the order in which the dispatcher publishes rows.
type Ordering int

const (
	// Unordered publishes rows concurrently and guarantees no order of any
	// kind: not global, not per key, not approximate.
	Unordered Ordering = iota
	// PerKey publishes the rows of one ordering key one at a time in sequence
	// order; rows of different keys, and rows without a key, proceed in
	// parallel.
	PerKey
)

// String returns "unordered" or "per-key".
func (o Ordering) String() string {
	switch o {
	case Unordered:
		return "unordered"
	case PerKey:
		return "per-key"
	}
	return "Ordering(" + strconv.Itoa(int(o)) + ")"
}

// LeaseToken is the fencing token a claim gives a row. Every outcome write
// names it, so a holder whose lease lapsed cannot overwrite a newer claim.
type LeaseToken = uuid.UUID

// Lease names a claimed row and the token of the claim.
type Lease struct {
	ID    reliar.MessageID
	Token LeaseToken
}

// AcquireRequest asks for a claim of due rows.
type AcquireRequest struct {
	// Worker is written to locked_by; it identifies the claimer in the table.
	Worker string
	// BatchSize caps the number of rows claimed (and moved to dead).
	BatchSize int
	// Lease is how long the claim holds before another worker may reclaim.
	Lease time.Duration
	// Ordering selects unordered or per-key claims.
	Ordering Ordering
	// MaxClaims moves a row to dead with reason max_claims when its lapsed
	// claims already equal it, instead of returning it. Zero disables the
	// check.
	MaxClaims int

	// Fairness selects how the claim shares BatchSize among tenants; only a
	// store with the TenantFairness capability is asked for FairnessTenant.
	Fairness Fairness
	// TenantCursor is, under FairnessTenant, the tenant after which the
	// claim starts its round (wrapping around): the TenantCursor of the
	// claimer's previous AcquiredBatch, or "" for the first claim.
	TenantCursor string
	// TenantCap, under FairnessTenant, caps the rows of one tenant the
	// claimer holds: the claim takes at most TenantCap - TenantHeld[t] rows
	// of tenant t (none when that is not positive). Zero means no cap.
	TenantCap int
	// TenantHeld counts, per tenant, the rows the claimer holds already
	// (only tenants with rows held need an entry).
	TenantHeld map[string]int

	// After, when set, restricts the claim to rows after this position in
	// the claim order: rows at or before it are passed over even when due.
	// The dispatcher sets it only on a store with the ClaimAfter capability,
	// only for FairnessUnordered claims, and only right after a claim that
	// came back full, from that claim's last row: its scan then starts past
	// the rows it leased, which are still ahead of a scan from the head
	// until their outcome is written (BENCHMARKS.md, "Claiming after the
	// last full claim"). It goes back to the head at least every
	// PollInterval, and at once after a claim with After that came back
	// short.
	After *Position
}

// Position is a row's place in the claim order: (available_at, sequence).
type Position struct {
	AvailableAt time.Time
	Sequence    int64
}

// Before reports whether p comes before q in the claim order.
func (p Position) Before(q Position) bool {
	if c := p.AvailableAt.Compare(q.AvailableAt); c != 0 {
		return c < 0
	}
	return p.Sequence < q.Sequence
}

// Position returns the record's place in the claim order.
func (r *Record) Position() Position {
	return Position{AvailableAt: r.AvailableAt, Sequence: r.Envelope.Sequence}
}

// Record is one claimed row.
type Record struct {
	Envelope reliar.SerializedEnvelope
	// Token is the claim's lease token; every outcome write names it.
	Token LeaseToken
	// Attempts counts the outcomes recorded before this claim.
	Attempts int
	// ClaimCount counts every claim of the row, this one included.
	ClaimCount int
	// LapsedClaims counts the claims that found the previous lease lapsed.
	LapsedClaims int
	// Reclaimed is true when this claim found the row still carrying a lapsed
	// lease: its previous holder crashed, hung or lost its renewals.
	Reclaimed bool
	// PrevClaimedAt is when the row was claimed before, if ever.
	PrevClaimedAt *time.Time
	// AvailableAt is when the row became due.
	AvailableAt time.Time
}

// Lease returns the record's id and token.
func (r *Record) Lease() Lease { return Lease{ID: r.Envelope.ID, Token: r.Token} }

// PoisonedRecord is a row that could not be decoded.
type PoisonedRecord struct {
	ID       reliar.MessageID
	Sequence int64
	// Error is the decode error; for a claimed row it is also written to
	// last_error.
	Error string
}

// AcquiredBatch is the result of one claim.
type AcquiredBatch struct {
	// Records are the claimed, decoded rows.
	Records []Record
	// Poisoned are claimed rows that could not be decoded; the store moved
	// them to dead with reason undecodable.
	Poisoned []PoisonedRecord
	// DeadMaxClaims are rows the store moved to dead with reason max_claims
	// instead of returning them.
	DeadMaxClaims []reliar.MessageID
	// TenantCursor is, under FairnessTenant, the last tenant the claim
	// visited: the next claim's AcquireRequest.TenantCursor.
	TenantCursor string
	// More is set, under FairnessTenant, when a tenant's share of the claim
	// (TenantShare) left due rows of it behind that no cap holds back: a
	// claim that is not full may be followed by another at once.
	More bool
}

// Len is the number of rows the claim consumed: records, poisoned rows and
// max_claims deaths. A claim is full when Len equals the request's BatchSize.
func (b *AcquiredBatch) Len() int { return len(b.Records) + len(b.Poisoned) + len(b.DeadMaxClaims) }

// DeadReason says why a row went dead.
type DeadReason string

// The dead reasons.
const (
	DeadPermanent   DeadReason = "permanent"
	DeadMaxAttempts DeadReason = "max_attempts"
	DeadMaxClaims   DeadReason = "max_claims"
	DeadExpired     DeadReason = "expired"
	DeadUndecodable DeadReason = "undecodable"
)

// FailedOutcome records one failed attempt. When DeadReason is empty the row
// is retried after RetryAfter; otherwise it goes dead with that reason.
type FailedOutcome struct {
	Lease
	// Error is the failure's text, written to last_error (sanitized and
	// truncated to 2 KiB by the store; see SanitizeError).
	Error string
	// RetryAfter delays the next attempt; ignored when DeadReason is set.
	RetryAfter time.Duration
	// DeadReason, when set, moves the row to dead.
	DeadReason DeadReason
}

// PurgeRequest bounds one purge pass.
type PurgeRequest struct {
	// PublishedRetention deletes published rows older than it; nil skips.
	PublishedRetention *time.Duration
	// DeadRetention deletes dead rows older than it; nil skips.
	DeadRetention *time.Duration
	// BatchSize caps each of the pass's three statements; zero or negative
	// means the store's default (1000 in the stores of this module tree).
	BatchSize int
}

// PurgeReport counts what one purge pass did.
type PurgeReport struct {
	PublishedDeleted int64
	DeadDeleted      int64
	// Expired counts pending rows past expires_at moved to dead.
	Expired int64
	// ProcessedDeleted counts inbox records deleted by a Maintainer pass
	// (outbox.WithInbox); stores' Purge leaves it zero.
	ProcessedDeleted int64
}

// Stats partitions the non-terminal rows of a table.
type Stats struct {
	// Pending = Due + Leased + Scheduled + ExpiredPending.
	Pending int64
	// Due rows are claimable now.
	Due int64
	// Leased rows are held by a live lease.
	Leased int64
	// Scheduled rows become due later.
	Scheduled int64
	// ExpiredPending rows passed expires_at and await the expiry sweep.
	ExpiredPending int64
	// Dead rows await an operator.
	Dead int64
	// OldestDueAge is how long the oldest due row has been due; 0 when none.
	OldestDueAge time.Duration
	// AsOf is the store's clock when the counts were taken.
	AsOf time.Time
}

// DeadQuery selects a page of dead rows. Empty filters match everything.
type DeadQuery struct {
	MessageType string
	TenantID    string
	// DeadBefore keeps rows that went dead before it; zero keeps all.
	DeadBefore time.Time
	// AfterSequence is the keyset cursor: rows with a larger sequence.
	// Newest listings ignore it.
	AfterSequence int64
	// Newest lists the newest rows first: in descending sequence order,
	// from BeforeSequence. The page's cursor is then NextBeforeSequence.
	Newest bool
	// BeforeSequence is the keyset cursor of a Newest listing: rows with a
	// smaller sequence; 0 starts from the newest row.
	BeforeSequence int64
	// Limit defaults to 100 and is capped at 1000.
	Limit int
}

// SequenceBound returns the sequence a listing starts after (ascending)
// or before (Newest): AfterSequence, or BeforeSequence with the largest
// sequence for 0.
func (q DeadQuery) SequenceBound() int64 {
	switch {
	case !q.Newest:
		return q.AfterSequence
	case q.BeforeSequence <= 0:
		return math.MaxInt64
	}
	return q.BeforeSequence
}

// EffectiveLimit returns q.Limit with its default and cap applied.
func (q DeadQuery) EffectiveLimit() int {
	switch {
	case q.Limit <= 0:
		return 100
	case q.Limit > 1000:
		return 1000
	}
	return q.Limit
}

// What a dead-letter listing reads of each row, at most. A store caps the
// reads in its SQL (left, substr) and cuts last_error to a UTF-8 boundary.
const (
	// ListedDocumentBytes caps the metadata and the headers documents.
	ListedDocumentBytes = 8 << 10
	// ListedLastErrorBytes caps last_error.
	ListedLastErrorBytes = 2 << 10
)

// Caps of DeadPayload.
const (
	DefaultDeadPayloadBytes = 64 << 10
	MaxDeadPayloadBytes     = 16 << 20
)

// EffectivePayloadCap returns max with DeadPayload's default and cap
// applied.
func EffectivePayloadCap(max int) int {
	switch {
	case max <= 0:
		return DefaultDeadPayloadBytes
	case max > MaxDeadPayloadBytes:
		return MaxDeadPayloadBytes
	}
	return max
}

// DeadRecord is one dead row of a listing.
type DeadRecord struct {
	// Envelope is the row without its payload (Payload is nil). When a
	// document was longer than ListedDocumentBytes it is not decoded, and
	// the envelope holds only what the row's columns hold (MetadataCut,
	// HeadersCut).
	Envelope   reliar.SerializedEnvelope
	DeadReason DeadReason
	DeadAt     time.Time
	Attempts   int
	// LastError is at most ListedLastErrorBytes of the row's last_error.
	LastError string
	// PayloadSize is the payload's length in bytes.
	PayloadSize int
	// MetadataCut, HeadersCut and LastErrorCut say which parts of the row
	// were longer than a listing reads.
	MetadataCut, HeadersCut, LastErrorCut bool
}

// DeadPayload is the payload of one dead row, as DeadLetters.DeadPayload
// read it.
type DeadPayload struct {
	ID          reliar.MessageID
	Sequence    int64
	MessageType string
	ContentType string
	// Payload is the first bytes of the payload, at most the cap asked for.
	Payload []byte
	// Size is the whole payload's length in bytes.
	Size int
	// Cut says that Payload is shorter than the payload.
	Cut bool
}

// DeadLetterPage is one page of dead rows.
type DeadLetterPage struct {
	Records []DeadRecord
	// Poisoned are dead rows that cannot be decoded.
	Poisoned []PoisonedRecord
	// NextAfterSequence is the cursor for the next page: the largest sequence
	// scanned, set only when the page was full; nil for a Newest listing.
	NextAfterSequence *int64
	// NextBeforeSequence is the cursor for the next page of a Newest
	// listing: the smallest sequence scanned, set only when the page was
	// full.
	NextBeforeSequence *int64
}

// Newest turns the page of a Newest listing read by code that tracks the
// last sequence scanned as NextAfterSequence (outboxsql.DeadPage) into its
// shape: that cursor becomes NextBeforeSequence.
func (p DeadLetterPage) Newest() DeadLetterPage {
	p.NextBeforeSequence, p.NextAfterSequence = p.NextAfterSequence, nil
	return p
}

// CutLastError cuts a listed last_error to at most ListedLastErrorBytes, on
// a UTF-8 boundary, and says whether it cut anything. Stores read at most a
// few bytes more than that in their SQL, then call it.
func CutLastError(s string) (string, bool) {
	if len(s) <= ListedLastErrorBytes {
		return s, false
	}
	return TruncateUTF8(s, ListedLastErrorBytes), true
}
