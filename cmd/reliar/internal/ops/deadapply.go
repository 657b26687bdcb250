package ops

import (
	"context"
	"fmt"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// Action is what reliar dead retry and dead purge do to dead rows.
type Action int

// The actions.
const (
	// Retry makes dead rows due again (DeadLetters.RetryDead).
	Retry Action = iota
	// Delete deletes dead rows (DeadLetters.PurgeDead).
	Delete
)

// String returns "retry" or "purge", the command's name.
func (a Action) String() string {
	if a == Retry {
		return "retry"
	}
	return "purge"
}

// Past returns the verb in the past tense: "retried" or "purged".
func (a Action) Past() string {
	if a == Retry {
		return "retried"
	}
	return "purged"
}

func (a Action) apply(ctx context.Context, dl outbox.DeadLetters, ids []reliar.MessageID) (int64, error) {
	if a == Retry {
		return dl.RetryDead(ctx, ids)
	}
	return dl.PurgeDead(ctx, ids)
}

// IDBatch caps the ids of one RetryDead or PurgeDead call, as ListDead caps a
// page.
const IDBatch = 1000

// Tally counts what a run of an action did.
type Tally struct {
	// Asked is the number of distinct ids named, or of dead rows listed.
	Asked int64
	// Done is the number of rows retried or purged.
	Done int64
	// Batches is the number of store calls made.
	Batches int
}

// ApplyIDs applies act to ids in batches of at most IDBatch. A row that is
// not dead (unknown, pending, leased or published) is left alone and not
// counted in Done. On error the tally says what was done before it.
func ApplyIDs(ctx context.Context, dl outbox.DeadLetters, act Action, ids []reliar.MessageID) (Tally, error) {
	t := Tally{Asked: int64(len(ids))}
	for start := 0; start < len(ids); start += IDBatch {
		batch := ids[start:min(start+IDBatch, len(ids))]
		n, err := act.apply(ctx, dl, batch)
		if err != nil {
			return t, fmt.Errorf("%s dead rows after %d %s: %w", act, t.Done, act.Past(), err)
		}
		t.Done += n
		t.Batches++
	}
	return t, nil
}

// ApplyMatching applies act to every dead row that q's filters match, one
// page of ListDead at a time (q.Limit rows, at most 1000), following the
// page cursor from q.AfterSequence. Rows that go dead while it runs are
// included when their sequence is beyond the cursor. After each page,
// progress (if not nil) receives the tally so far. On error the tally says
// what was done before it.
func ApplyMatching(ctx context.Context, dl outbox.DeadLetters, act Action, q outbox.DeadQuery, progress func(Tally)) (Tally, error) {
	var t Tally
	for {
		page, err := dl.ListDead(ctx, q)
		if err != nil {
			return t, fmt.Errorf("list dead rows after %d %s: %w", t.Done, act.Past(), err)
		}
		ids := make([]reliar.MessageID, 0, len(page.Records)+len(page.Poisoned))
		for _, r := range page.Records {
			ids = append(ids, r.Envelope.ID)
		}
		for _, p := range page.Poisoned {
			ids = append(ids, p.ID)
		}
		if len(ids) > 0 {
			n, err := act.apply(ctx, dl, ids)
			if err != nil {
				return t, fmt.Errorf("%s dead rows after %d %s: %w", act, t.Done, act.Past(), err)
			}
			t.Asked += int64(len(ids))
			t.Done += n
			t.Batches++
		}
		if progress != nil {
			progress(t)
		}
		next := page.NextAfterSequence
		if next == nil {
			return t, nil
		}
		if *next <= q.AfterSequence {
			return t, fmt.Errorf("list dead rows: the store's cursor went from %d back to %d", q.AfterSequence, *next)
		}
		q.AfterSequence = *next
	}
}
