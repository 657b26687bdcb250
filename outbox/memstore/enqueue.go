package memstore

import (
	"context"
	"fmt"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Enqueue stores msgs, all or nothing: when one message fails to encode, is
// larger than the payload limit (an error matching outboxdriver.ErrPayloadTooLarge)
// or reuses an id (outboxdriver.ErrDuplicateID), nothing of the call is written. It
// returns the ids in the order of msgs and wakes the store's listeners.
func (s *Store) Enqueue(ctx context.Context, msgs ...reliar.Outgoing) ([]reliar.MessageID, error) {
	if err := checkContext(ctx, "enqueue"); err != nil {
		return nil, err
	}
	encoded := make([]outboxdriver.Row, len(msgs))
	for i, m := range msgs {
		r, err := outboxdriver.NewRow(ctx, m, s.serializer, s.maxPayload)
		if err != nil {
			return nil, fmt.Errorf("memstore: enqueue: %w", err)
		}
		encoded[i] = r
	}
	if err := s.insertRows(encoded); err != nil {
		return nil, err
	}
	ids := make([]reliar.MessageID, len(encoded))
	for i, r := range encoded {
		ids[i] = r.ID
	}
	return ids, nil
}

// InsertRow stores a row as it is, bypassing encoding, so that tests can
// plant rows that no Enqueue would write (bad metadata JSON, an unknown
// metadata version, headers that are not a string map). The store assigns
// the sequence; a nil AvailableAt means now, a zero CreatedAt means now and a
// zero MessageVersion means 1, as the SQL stores' column defaults do for an
// INSERT that leaves them out.
func (s *Store) InsertRow(r outboxdriver.Row) error {
	if r.MessageVersion == 0 {
		r.MessageVersion = 1
	}
	return s.insertRows([]outboxdriver.Row{r})
}

// insertRows stores encoded rows, all or none, and wakes the listeners. The
// rows are decoded before the lock is taken, so claims only copy.
func (s *Store) insertRows(encoded []outboxdriver.Row) error {
	rows := make([]*row, len(encoded))
	for i, enc := range encoded {
		rows[i] = newRow(enc)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[reliar.MessageID]struct{}, len(encoded))
	for _, r := range encoded {
		_, stored := s.rows[r.ID]
		_, twice := seen[r.ID]
		if stored || twice {
			return fmt.Errorf("memstore: enqueue: %w", &outboxdriver.DuplicateIDError{ID: r.ID})
		}
		seen[r.ID] = struct{}{}
	}
	now := s.now()
	for _, r := range rows {
		r.place(s.nextSeq, now)
		s.nextSeq++
		s.insert(r)
	}
	if len(encoded) > 0 {
		s.notify()
	}
	return nil
}
