package check

import (
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// Committed is one message the producer committed to the outbox.
type Committed struct {
	ID reliar.MessageID
	// Key is the message's ordering key; empty for unordered messages.
	Key string
	// Sequence is the row's sequence column: the order per-key delivery
	// must follow.
	Sequence int64
}

// Final is the outbox table once the run healed and every relay drained.
type Final struct {
	// Pending counts rows neither published nor dead.
	Pending int
	// Leased counts rows still carrying a lease (locked_by set).
	Leased int
	// Dead lists the dead rows.
	Dead []reliar.MessageID
}

// Input is everything a run produced.
type Input struct {
	Committed []Committed
	// Attempts lists the message id of every publish the sink saw, in
	// arrival order, duplicates included.
	Attempts []reliar.MessageID
	// Events are the events of every dispatcher of the run, in any order.
	Events []outbox.Event
	Final  Final
	// Ordered asks for the per-key order check (the relays ran with
	// per-key ordering).
	Ordered bool
}
