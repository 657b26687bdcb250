package pgstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

func TestEnqueueManyMixedMessagesInOneCall(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	const n = 5000
	msgs := make([]reliar.Outgoing, n)
	for i := range msgs {
		switch i % 3 {
		case 0:
			msgs[i] = reliar.NewMsg(orderPlaced{OrderID: "o"})
		case 1:
			msgs[i] = reliar.Msg(reliar.Envelope[paymentTaken]{ID: reliar.NewMessageID(), Body: paymentTaken{Cents: int64(i)}, OrderingKey: "order-7"})
		default:
			msgs[i] = reliar.Msg(reliar.Envelope[blob]{ID: reliar.NewMessageID(), Body: blob{Data: []byte{1, 2}}, Headers: map[string]string{"h": "v"}})
		}
	}
	ids := enqueue(t, s, msgs...)
	if len(ids) != n {
		t.Fatalf("got %d ids, want %d", len(ids), n)
	}
	for i, id := range ids {
		if id != msgs[i].ID {
			t.Fatalf("id %d = %s, want the message's own %s", i, id, msgs[i].ID)
		}
	}
	// Rows are inserted in call order: sequence follows the ids.
	rows, err := sharedPool.Query(t.Context(), s.n.render(`SELECT id FROM {{table}} ORDER BY sequence`))
	if err != nil {
		t.Fatal(err)
	}
	stored, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stored, ids) {
		t.Fatal("rows are not in call order")
	}
	for _, c := range []struct {
		where string
		want  int
	}{
		{"message_type = 'orders.placed' AND message_version = 1 AND ordering_key IS NULL", 1667},
		{"message_type = 'payments.taken' AND message_version = 3 AND ordering_key = 'order-7'", 1667},
		{"message_type = 'blobs.stored' AND headers = '{\"h\": \"v\"}'::jsonb", 1666},
		{"headers IS NULL", 3334},
		{"content_type = 'application/json' AND metadata_version = 1 AND available_at = created_at", n},
	} {
		if got := countRows(t, s, c.where); got != c.want {
			t.Errorf("rows where %s = %d, want %d", c.where, got, c.want)
		}
	}
}

func TestEnqueueRolledBackWritesNothing(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	tx, err := sharedPool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(ctx, tx, reliar.NewMsg(orderPlaced{"o-1"}), reliar.NewMsg(orderPlaced{"o-2"})); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, s, "true"); n != 0 {
		t.Fatalf("%d rows after rollback, want 0", n)
	}
}

func TestEnqueueDuplicateID(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	first := reliar.NewMsg(orderPlaced{"o-1"})
	enqueue(t, s, first)
	tests := []struct {
		name string
		msgs []reliar.Outgoing
	}{
		{"reused in a later transaction", []reliar.Outgoing{reliar.NewMsg(orderPlaced{"o-2"}), first}},
		{"twice in one call", func() []reliar.Outgoing { m := reliar.NewMsg(orderPlaced{"o-3"}); return []reliar.Outgoing{m, m} }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := pgx.BeginFunc(ctx, sharedPool, func(tx pgx.Tx) error {
				_, err := s.Enqueue(ctx, tx, tt.msgs...)
				return err
			})
			var dup *outboxdriver.DuplicateIDError
			if !errors.As(err, &dup) || !errors.Is(err, outboxdriver.ErrDuplicateID) {
				t.Fatalf("Enqueue = %v, want a *outboxdriver.DuplicateIDError", err)
			}
			if dup.ID != tt.msgs[len(tt.msgs)-1].ID {
				t.Errorf("DuplicateIDError.ID = %s, want %s", dup.ID, tt.msgs[len(tt.msgs)-1].ID)
			}
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "23505" || !reliar.IsPermanent(err) {
				t.Errorf("want a permanent error wrapping the 23505 PgError, got %v", err)
			}
		})
	}
	if n := countRows(t, s, "true"); n != 1 {
		t.Fatalf("%d rows, want only the first message", n)
	}
}

func TestEnqueueRefusesOversizedPayloadBeforeWriting(t *testing.T) {
	t.Parallel()
	s := newStore(t, WithMaxPayloadBytes(100))
	ctx := t.Context()
	big := reliar.NewMsg(blob{Data: make([]byte, 200)})
	tx, err := sharedPool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	_, err = s.Enqueue(ctx, tx, reliar.NewMsg(orderPlaced{"small"}), big)
	var tooLarge *outboxdriver.PayloadTooLargeError
	if !errors.As(err, &tooLarge) || !errors.Is(err, outboxdriver.ErrPayloadTooLarge) || tooLarge.ID != big.ID || tooLarge.Max != 100 {
		t.Fatalf("Enqueue = %v, want a *outboxdriver.PayloadTooLargeError for %s", err, big.ID)
	}
	// Nothing was sent: the transaction is still usable and commits empty.
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit after refused enqueue: %v", err)
	}
	if n := countRows(t, s, "true"); n != 0 {
		t.Fatalf("%d rows written, want 0", n)
	}
}

func TestEnqueueEdgeCases(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	if _, err := s.Enqueue(ctx, nil, reliar.NewMsg(orderPlaced{})); err == nil {
		t.Error("Enqueue with a nil transaction succeeded")
	}
	if _, err := s.EnqueueSQL(ctx, nil, reliar.NewMsg(orderPlaced{})); err == nil {
		t.Error("EnqueueSQL with a nil transaction succeeded")
	}
	err := pgx.BeginFunc(ctx, sharedPool, func(tx pgx.Tx) error {
		if ids, err := s.Enqueue(ctx, tx); err != nil || len(ids) != 0 {
			t.Errorf("Enqueue of nothing = %v, %v", ids, err)
		}
		if _, err := s.Enqueue(ctx, tx, reliar.Outgoing{}); err == nil {
			t.Error("Enqueue of a message without a body succeeded")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestEnqueueDelayedAndWithMetadata(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	causation, request := uuid.New(), uuid.New()
	expires := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	later := time.Now().Add(10 * time.Minute)
	full := reliar.Msg(reliar.Envelope[orderPlaced]{
		ID:   reliar.NewMessageID(),
		Body: orderPlaced{"o-9"},
		Metadata: reliar.Metadata{
			Correlation: reliar.Correlation{CorrelationID: "corr", CausationID: &causation, RequestID: &request},
			Trace:       reliar.Trace{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
			Routing:     reliar.Routing{Source: "shop", Destination: "billing", ReplyTo: "shop.replies"},
			Delivery:    reliar.Delivery{ExpiresAt: &expires, DeduplicationID: "dedup"},
			TenantID:    "tenant-1",
		},
		Headers:     map[string]string{"x-a": "1"},
		OrderingKey: "order-9",
	})
	delayed := reliar.Msg(reliar.Envelope[orderPlaced]{Body: orderPlaced{"o-10"}, AvailableAt: later})
	enqueue(t, s, full, delayed)

	b, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 10, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Records) != 1 {
		t.Fatalf("claimed %d rows, want only the one not delayed", len(b.Records))
	}
	e := b.Records[0].Envelope
	m := e.Metadata
	switch {
	case e.ID != full.ID, e.OrderingKey != "order-9", e.Headers["x-a"] != "1", e.ContentType != "application/json":
		t.Errorf("envelope = %+v", e)
	case m.Correlation.CorrelationID != "corr", *m.Correlation.CausationID != causation, *m.Correlation.RequestID != request,
		m.Correlation.ConversationID != full.ID:
		t.Errorf("correlation = %+v", m.Correlation)
	case m.TenantID != "tenant-1", !m.Delivery.ExpiresAt.Equal(expires), m.Delivery.DeduplicationID != "dedup",
		m.Routing.ReplyTo != "shop.replies", m.Trace.Traceparent == "":
		t.Errorf("metadata = %+v", m)
	case string(e.Payload) != `{"order_id":"o-9"}`:
		t.Errorf("payload = %s", e.Payload)
	}
	if n := countRows(t, s, "available_at > now() + interval '9 minutes'"); n != 1 {
		t.Errorf("delayed rows = %d, want 1", n)
	}
}

func TestEnqueueSQL(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	db := stdlib.OpenDBFromPool(sharedPool)
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := s.EnqueueSQL(ctx, tx, reliar.NewMsg(orderPlaced{"o-1"}), reliar.NewMsg(paymentTaken{Cents: 5}))
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if len(ids) != 2 || countRows(t, s, "true") != 2 {
		t.Fatalf("EnqueueSQL wrote %d rows for %d ids, want 2", countRows(t, s, "true"), len(ids))
	}

	// A duplicate through database/sql maps the same way.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.EnqueueSQL(ctx, tx, reliar.Outgoing{ID: ids[0], Body: orderPlaced{"again"}})
	_ = tx.Rollback()
	if !errors.Is(err, outboxdriver.ErrDuplicateID) {
		t.Fatalf("EnqueueSQL of a reused id = %v, want ErrDuplicateID", err)
	}
}

func TestEnqueueSQLRefusesOtherDrivers(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	db := sql.OpenDB(fakeConnector{})
	defer db.Close()
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	_, err = s.EnqueueSQL(t.Context(), tx, reliar.NewMsg(orderPlaced{"o-1"}))
	if !errors.Is(err, ErrNotPgxDriver) {
		t.Fatalf("EnqueueSQL on another driver = %v, want ErrNotPgxDriver", err)
	}
}

// fakeConnector is a database/sql driver that is not pgx: it converts
// arguments the standard way and would accept any statement.
type fakeConnector struct{}

func (fakeConnector) Connect(context.Context) (driver.Conn, error) { return fakeConn{}, nil }
func (fakeConnector) Driver() driver.Driver                        { return nil }

type fakeConn struct{}

func (fakeConn) Prepare(string) (driver.Stmt, error) { return nil, errors.New("fake: no statements") }
func (fakeConn) Close() error                        { return nil }
func (fakeConn) Begin() (driver.Tx, error)           { return fakeTx{}, nil }
func (fakeConn) ExecContext(context.Context, string, []driver.NamedValue) (driver.Result, error) {
	return driver.RowsAffected(1), nil
}

type fakeTx struct{}

func (fakeTx) Commit() error   { return nil }
func (fakeTx) Rollback() error { return nil }
