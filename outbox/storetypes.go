package outbox

import "github.com/reliar/reliar/outbox/outboxdriver"

// The store contract lives in package outboxdriver, for store authors. The
// names below are the parts of it that users of the dispatcher and of the
// operator calls touch; they are aliases, so values pass between the two
// packages unchanged.

// Store is an outbox table as the dispatcher and the maintainer see it:
// what pgstore.New, sqlitestore.New, mysqlstore.New and memstore.New
// return. Its methods are specified in package outboxdriver.
type Store = outboxdriver.Store

// DeadLetters lets operators inspect, retry and delete dead rows; every
// Store implements it.
type DeadLetters = outboxdriver.DeadLetters

// Capabilities lists a store's optional features.
type Capabilities = outboxdriver.Capabilities

// Ordering is the order in which the dispatcher publishes rows.
type Ordering = outboxdriver.Ordering

// The orderings.
const (
	// Unordered publishes rows concurrently and guarantees no order of any
	// kind: not global, not per key, not approximate.
	Unordered = outboxdriver.Unordered
	// PerKey publishes the rows of one ordering key one at a time; see the
	// package documentation for the exact guarantee.
	PerKey = outboxdriver.PerKey
)

// Fairness is how the dispatcher's claims share rows among tenants.
type Fairness = outboxdriver.Fairness

// The fairness modes.
const (
	// FairnessUnordered claims due rows in due order whatever their tenant
	// (the default).
	FairnessUnordered = outboxdriver.FairnessUnordered
	// FairnessTenant shares every claim among the tenants with due rows,
	// round-robin; see the package documentation.
	FairnessTenant = outboxdriver.FairnessTenant
)

// ParseFairness reads "unordered" (or "") and "tenant".
func ParseFairness(s string) (Fairness, bool) { return outboxdriver.ParseFairness(s) }

// Stats partitions the non-terminal rows of a table.
type Stats = outboxdriver.Stats

// DeadReason says why a row went dead.
type DeadReason = outboxdriver.DeadReason

// The dead reasons.
const (
	DeadPermanent   = outboxdriver.DeadPermanent
	DeadMaxAttempts = outboxdriver.DeadMaxAttempts
	DeadMaxClaims   = outboxdriver.DeadMaxClaims
	DeadExpired     = outboxdriver.DeadExpired
	DeadUndecodable = outboxdriver.DeadUndecodable
)

// DeadQuery selects a page of dead rows. Empty filters match everything.
type DeadQuery = outboxdriver.DeadQuery

// DeadRecord is one dead row.
type DeadRecord = outboxdriver.DeadRecord

// DeadLetterPage is one page of dead rows.
type DeadLetterPage = outboxdriver.DeadLetterPage

// PurgeReport counts what one purge pass did.
type PurgeReport = outboxdriver.PurgeReport

// Errors of an enqueue, matched with errors.Is and errors.As.
var (
	// ErrDuplicateID is matched by a *DuplicateIDError.
	ErrDuplicateID = outboxdriver.ErrDuplicateID
	// ErrPayloadTooLarge is matched by a *PayloadTooLargeError.
	ErrPayloadTooLarge = outboxdriver.ErrPayloadTooLarge
)

// DuplicateIDError reports an enqueue that reused a message id.
type DuplicateIDError = outboxdriver.DuplicateIDError

// PayloadTooLargeError reports a message whose serialized payload exceeds
// the store's limit; nothing of the enqueue call was written.
type PayloadTooLargeError = outboxdriver.PayloadTooLargeError
