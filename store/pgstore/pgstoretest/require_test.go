package pgstoretest_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxtest"
	"github.com/reliar/reliar/store/pgstore"
	"github.com/reliar/reliar/store/pgstore/pgstoretest"
)

// The store is the Enqueuer a handler depends on, for pgx and for
// database/sql.
var (
	_ outbox.Enqueuer[pgx.Tx]  = (*pgstore.Store)(nil)
	_ outbox.Enqueuer[*sql.Tx] = pgstore.SQLEnqueuer{}
)

type orderPlaced struct {
	OrderID string `json:"order_id"`
	Total   int64  `json:"total"`
}

func (orderPlaced) MessageType() string { return "orders.placed" }

type orderCancelled struct {
	OrderID string `json:"order_id"`
}

func (orderCancelled) MessageType() string { return "orders.cancelled" }

func placed(id string, total int64, key, tenant string) reliar.Outgoing {
	return reliar.Msg(reliar.Envelope[orderPlaced]{
		Body:        orderPlaced{OrderID: id, Total: total},
		OrderingKey: key,
		Metadata:    reliar.Metadata{TenantID: tenant},
		Headers:     map[string]string{"x-origin": "checkout"},
	})
}

func TestRequireEnqueuedTxSeesTheUncommittedMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, store := newStore(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	ids, err := store.Enqueue(ctx, tx,
		placed("o-1", 100, "c-1", "acme"),
		placed("o-2", 200, "c-2", "acme"),
		reliar.NewMsg(orderCancelled{OrderID: "o-1"}),
	)
	if err != nil {
		t.Fatal(err)
	}

	got := pgstoretest.RequireEnqueuedTx[orderPlaced](ctx, t, store, tx, &outboxtest.RequireOpts{
		TenantID: "acme",
		Payload:  outboxtest.JSONBody(func(o orderPlaced) bool { return o.Total > 150 }),
	})
	if got.Envelope.ID != ids[1] || got.Body.OrderID != "o-2" || got.Envelope.OrderingKey != "c-2" ||
		got.Envelope.Headers["x-origin"] != "checkout" || got.Envelope.ContentType != "application/json" {
		t.Fatalf("found %+v", got)
	}
	pgstoretest.RequireNotEnqueuedTx[orderPlaced](ctx, t, store, tx, &outboxtest.RequireOpts{TenantID: "globex"})
	pgstoretest.RequireManyEnqueuedTx(ctx, t, store, tx, []outboxtest.Expected{
		{Type: "orders.placed", Opts: &outboxtest.RequireOpts{OrderingKey: "c-1"}},
		{Type: "orders.placed", Opts: &outboxtest.RequireOpts{OrderingKey: "c-2"}},
		{Type: "orders.cancelled"},
	})

	// Another transaction does not see them before the commit.
	other, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback(ctx)
	pgstoretest.RequireNotEnqueuedTx[orderPlaced](ctx, t, store, other, nil)
}

// A transaction that rolls back enqueues nothing: afterwards no
// transaction sees its messages, and the rolled-back one cannot be read.
func TestRolledBackTransactionEnqueuesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, store := newStore(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Enqueue(ctx, tx, placed("o-1", 100, "c-1", "acme")); err != nil {
		t.Fatal(err)
	}
	pgstoretest.RequireEnqueuedTx[orderPlaced](ctx, t, store, tx, nil)
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	var closed recordTB
	pgstoretest.RequireNotEnqueuedTx[orderPlaced](ctx, &closed, store, tx, nil)
	mustContain(t, closed.failed(t), "pgstoretest: read the outbox:", "tx is closed")

	after, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Rollback(ctx)
	pgstoretest.RequireNotEnqueuedTx[orderPlaced](ctx, t, store, after, nil)
	var rt recordTB
	pgstoretest.RequireEnqueuedTx[orderPlaced](ctx, &rt, store, after, nil)
	mustContain(t, rt.failed(t), `expected 1 message of type "orders.placed", found none`, "enqueued: nothing")
}

func TestSQLTxAssertions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, store := newStore(t)
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out outbox.Enqueuer[*sql.Tx] = store.SQL()
	ids, err := out.Enqueue(ctx, tx, placed("o-1", 100, "c-1", "acme"), reliar.NewMsg(orderCancelled{OrderID: "o-1"}))
	if err != nil {
		t.Fatal(err)
	}
	got := pgstoretest.RequireEnqueuedSQLTx[orderPlaced](ctx, t, store, tx, &outboxtest.RequireOpts{OrderingKey: "c-1", TenantID: "acme"})
	if got.Envelope.ID != ids[0] || got.Body.Total != 100 {
		t.Fatalf("found %+v", got)
	}
	pgstoretest.RequireManyEnqueuedSQLTx(ctx, t, store, tx, []outboxtest.Expected{{Type: "orders.placed"}, {Type: "orders.cancelled"}})
	var rt recordTB
	pgstoretest.RequireNotEnqueuedSQLTx[orderCancelled](ctx, &rt, store, tx, nil)
	mustContain(t, rt.failed(t), `expected no message of type "orders.cancelled", found 1 (#2)`, "#1 orders.placed id="+ids[0].String()+` key="c-1" tenant="acme"`)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	after, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Rollback()
	pgstoretest.RequireNotEnqueuedSQLTx[orderPlaced](ctx, t, store, after, nil)
	pgstoretest.RequireManyEnqueuedSQLTx(ctx, t, store, after, nil)
}

// A row another program inserted with plain SQL, only the required columns
// set, is read the way a claim reads it.
func TestPlainSQLRowIsRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, store := newStore(t)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	id := reliar.NewMessageID()
	if _, err := tx.Exec(ctx, `INSERT INTO `+pgx.Identifier{store.Schema(), "outbox"}.Sanitize()+
		` (id, message_type, payload) VALUES ($1, 'orders.placed', convert_to('{"order_id":"o-9","total":9}', 'UTF8'))`, id); err != nil {
		t.Fatal(err)
	}
	got := pgstoretest.RequireEnqueuedTx[orderPlaced](ctx, t, store, tx, nil)
	if got.Envelope.ID != id || got.Body != (orderPlaced{OrderID: "o-9", Total: 9}) || got.Envelope.Metadata.Correlation.ConversationID != id {
		t.Fatalf("found %+v", got)
	}
}

// What the kit reads from the transaction is what the dispatcher
// publishes once it commits.
func TestReadEnvelopeIsThePublishedEnvelope(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, store := newStore(t)
	var read []reliar.SerializedEnvelope
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		m := placed("o-1", 100, "c-1", "acme")
		m.Metadata.Correlation.CorrelationID = "req-42"
		m.Metadata.Routing.Destination = "billing"
		if _, err := store.Enqueue(ctx, tx, m, reliar.NewMsg(orderCancelled{OrderID: "o-1"})); err != nil {
			return err
		}
		var err error
		read, err = pgstoretest.EnqueuedTx(ctx, store, tx)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var pub outboxtest.RecordingPublisher
	st := outboxtest.Drain(ctx, t, store, &pub, outbox.Settings{})
	if st.Pending != 0 {
		t.Fatalf("stats after Drain: %+v", st)
	}
	published := map[reliar.MessageID]reliar.SerializedEnvelope{}
	for _, e := range pub.Published() {
		published[e.ID] = e
	}
	if len(read) != 2 || len(published) != 2 {
		t.Fatalf("read %d, published %d", len(read), len(published))
	}
	for _, r := range read {
		p, ok := published[r.ID]
		if !ok {
			t.Fatalf("%s read but not published", r.ID)
		}
		if string(p.Payload) != string(r.Payload) || p.MessageType != r.MessageType || p.OrderingKey != r.OrderingKey ||
			p.Sequence != r.Sequence || p.Metadata.TenantID != r.Metadata.TenantID ||
			p.Metadata.Correlation != r.Metadata.Correlation || p.Metadata.Routing != r.Metadata.Routing ||
			len(p.Headers) != len(r.Headers) || p.Headers["x-origin"] != r.Headers["x-origin"] {
			t.Errorf("read %+v\npublished %+v", r, p)
		}
	}
}

// Drain on PostgreSQL: every committed message is published, a permanent
// failure goes dead, and Drain returns once nothing is due or leased.
func TestDrainOnPostgres(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool, store := newStore(t)
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		var msgs []reliar.Outgoing
		for i := range 120 {
			msgs = append(msgs, placed("o", int64(i), "", ""))
		}
		msgs = append(msgs, reliar.NewMsg(orderCancelled{OrderID: "poison"}))
		_, err := store.Enqueue(ctx, tx, msgs...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var pub outboxtest.RecordingPublisher
	pub.FailType("orders.cancelled", reliar.FailurePermanent, -1)
	st := outboxtest.Drain(ctx, t, store, &pub, outbox.Settings{BatchSize: 50})
	if st.Due != 0 || st.Leased != 0 || st.Scheduled != 0 || st.Dead != 1 {
		t.Fatalf("stats after Drain: %+v", st)
	}
	if n := len(pub.Published()); n != 120 {
		t.Fatalf("published %d, want 120", n)
	}
}
