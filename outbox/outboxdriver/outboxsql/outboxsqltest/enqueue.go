package outboxsqltest

import (
	"errors"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// EnqueueNamesTheDuplicateID checks that a reused id fails with a
// *outboxdriver.DuplicateIDError naming it.
func (tg Target[T]) EnqueueNamesTheDuplicateID(t *testing.T) {
	ctx := t.Context()
	s := tg.New(t)
	dup := NewMsgs(1)[0]
	if err := Enqueue(ctx, s, dup); err != nil {
		t.Fatal(err)
	}
	err := Enqueue(ctx, s, append(NewMsgs(2), dup)...)
	var de *outboxdriver.DuplicateIDError
	if !errors.As(err, &de) || de.ID != dup.ID {
		t.Fatalf("Enqueue: %v, want a DuplicateIDError naming %s", err, dup.ID)
	}
}

// EnqueueReturnsIDs checks that Enqueue returns the ids in order, assigning
// one to a message without.
func (tg Target[T]) EnqueueReturnsIDs(t *testing.T) {
	ctx := t.Context()
	s := tg.New(t)
	msgs := NewMsgs(2)
	msgs[1].ID = reliar.MessageID{} // the store assigns one
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	ids, err := s.Enqueue(ctx, tx, msgs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 || ids[0] != msgs[0].ID || ids[1] == (reliar.MessageID{}) {
		t.Fatalf("ids %v", ids)
	}
}

// EnqueueRollbackWritesNothing checks that the messages of a rolled back
// transaction are neither stored nor claimed.
func (tg Target[T]) EnqueueRollbackWritesNothing(t *testing.T) {
	ctx := t.Context()
	s := tg.New(t)
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(ctx, tx, NewMsgs(5)...); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if got := CountRows(t, s); got != 0 {
		t.Fatalf("%d rows after rollback, want 0", got)
	}
	b, err := s.Acquire(ctx, AcquireRequest(10))
	if err != nil || b.Len() != 0 {
		t.Fatalf("claim after rollback: %d rows, %v", b.Len(), err)
	}
}

// EnqueueRefusesBadInput checks that Enqueue refuses a nil transaction with
// the store's ErrNilTx and a message without a body, writing nothing.
func (tg Target[T]) EnqueueRefusesBadInput(t *testing.T) {
	s := tg.New(t)
	if _, err := s.Enqueue(t.Context(), nil, NewMsgs(1)...); !errors.Is(err, tg.ErrNilTx) {
		t.Fatalf("Enqueue(nil tx): %v", err)
	}
	if err := Enqueue(t.Context(), s, reliar.Outgoing{}); err == nil {
		t.Fatal("Enqueue of a message without a body succeeded")
	}
	if got := CountRows(t, s); got != 0 {
		t.Fatalf("%d rows stored", got)
	}
}

// PlainInsert checks that a row a program in another language enqueued with
// a plain INSERT of the three required columns is claimed and decoded.
func (tg Target[T]) PlainInsert(t *testing.T) {
	ctx := t.Context()
	s := tg.New(t)
	id := reliar.NewMessageID()
	_, err := s.DB().ExecContext(ctx,
		`INSERT INTO outbox (id, message_type, payload) VALUES (?, 'plain.sql', ?)`,
		id.String(), []byte(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Acquire(ctx, AcquireRequest(10))
	if err != nil || len(b.Records) != 1 {
		t.Fatalf("Acquire: %+v, %v", b, err)
	}
	e := b.Records[0].Envelope
	if e.ID != id || e.MessageType != "plain.sql" || e.MessageVersion != 1 ||
		e.ContentType != "application/json" || e.Metadata.Correlation.ConversationID != id {
		t.Fatalf("envelope %+v", e)
	}
}

// EnqueueCase is one Enqueue call on a fresh store.
type EnqueueCase struct {
	Name string
	// New returns the store; nil means the New of EnqueueCases.
	New func(t testing.TB) Store
	// Before is committed first.
	Before []reliar.Outgoing
	// Msgs returns the messages of the call.
	Msgs func() []reliar.Outgoing
	// WantRows is the number of rows in the table afterwards.
	WantRows int
	// WantErr is matched by the call's error, which is then permanent.
	WantErr error
}

// EnqueueCases runs cases in parallel, each on a fresh store from its own
// New or else from newStore.
func EnqueueCases(t *testing.T, newStore func(t testing.TB) Store, cases []EnqueueCase) {
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			s := newStore
			if tt.New != nil {
				s = tt.New
			}
			st := s(t)
			if len(tt.Before) > 0 {
				if err := Enqueue(ctx, st, tt.Before...); err != nil {
					t.Fatal(err)
				}
			}
			err := Enqueue(ctx, st, tt.Msgs()...)
			if !errors.Is(err, tt.WantErr) {
				t.Fatalf("Enqueue: %v, want %v", err, tt.WantErr)
			}
			if tt.WantErr != nil && !reliar.IsPermanent(err) {
				t.Errorf("Enqueue error %v is not permanent", err)
			}
			if got := CountRows(t, st); got != tt.WantRows {
				t.Errorf("%d rows stored, want %d", got, tt.WantRows)
			}
		})
	}
}
