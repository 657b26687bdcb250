package sqlitestoretest_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/outboxtest"
	"github.com/reliar/reliar/store/sqlitestore"
	"github.com/reliar/reliar/store/sqlitestore/sqlitestoretest"
)

// The store is the Enqueuer a handler depends on.
var _ outbox.Enqueuer[*sql.Tx] = (*sqlitestore.Store)(nil)

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

// recordTB is an outboxtest.TB that records failures instead of stopping.
type recordTB struct {
	errors  []string
	failNow int
}

func (r *recordTB) Helper() {}

func (r *recordTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordTB) FailNow() { r.failNow++ }

// failed returns the one failure message, failing t when there is not
// exactly one followed by FailNow.
func (r *recordTB) failed(t *testing.T) string {
	t.Helper()
	if len(r.errors) != 1 || r.failNow != 1 {
		t.Fatalf("want 1 failure and 1 FailNow, got %q and %d FailNow", r.errors, r.failNow)
	}
	return r.errors[0]
}

func mustContain(t *testing.T, msg string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("failure message lacks %q:\n%s", p, msg)
		}
	}
}

func TestRequireEnqueuedTxSeesTheUncommittedMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, store := newStore(t)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	ids, err := store.Enqueue(ctx, tx,
		placed("o-1", 100, "c-1", "acme"),
		placed("o-2", 200, "c-2", "acme"),
		reliar.NewMsg(orderCancelled{OrderID: "o-1"}),
	)
	if err != nil {
		t.Fatal(err)
	}

	got := sqlitestoretest.RequireEnqueuedTx[orderPlaced](ctx, t, store, tx, &outboxtest.RequireOpts{
		TenantID: "acme",
		Payload:  outboxtest.JSONBody(func(o orderPlaced) bool { return o.Total > 150 }),
	})
	if got.Envelope.ID != ids[1] || got.Body.OrderID != "o-2" || got.Envelope.OrderingKey != "c-2" ||
		got.Envelope.Headers["x-origin"] != "checkout" || got.Envelope.ContentType != "application/json" {
		t.Fatalf("found %+v", got)
	}
	sqlitestoretest.RequireNotEnqueuedTx[orderPlaced](ctx, t, store, tx, &outboxtest.RequireOpts{TenantID: "globex"})
	sqlitestoretest.RequireManyEnqueuedTx(ctx, t, store, tx, []outboxtest.Expected{
		{Type: "orders.placed", Opts: &outboxtest.RequireOpts{OrderingKey: "c-1"}},
		{Type: "orders.placed", Opts: &outboxtest.RequireOpts{OrderingKey: "c-2"}},
		{Type: "orders.cancelled"},
	})

	var rt recordTB
	sqlitestoretest.RequireNotEnqueuedTx[orderCancelled](ctx, &rt, store, tx, nil)
	mustContain(t, rt.failed(t), `expected no message of type "orders.cancelled", found 1 (#3)`,
		"#1 orders.placed id="+ids[0].String()+` key="c-1" tenant="acme" payload={"order_id":"o-1","total":100}`)
}

// A transaction that rolls back enqueues nothing: afterwards no
// transaction sees its messages, and the rolled-back one cannot be read.
func TestRolledBackTransactionEnqueuesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, store := newStore(t)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Enqueue(ctx, tx, placed("o-1", 100, "c-1", "acme")); err != nil {
		t.Fatal(err)
	}
	sqlitestoretest.RequireEnqueuedTx[orderPlaced](ctx, t, store, tx, nil)
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	var closed recordTB
	sqlitestoretest.RequireNotEnqueuedTx[orderPlaced](ctx, &closed, store, tx, nil)
	mustContain(t, closed.failed(t), "sqlitestoretest: read the outbox:", sql.ErrTxDone.Error())

	after, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer after.Rollback()
	sqlitestoretest.RequireNotEnqueuedTx[orderPlaced](ctx, t, store, after, nil)
	var rt recordTB
	sqlitestoretest.RequireEnqueuedTx[orderPlaced](ctx, &rt, store, after, nil)
	mustContain(t, rt.failed(t), `expected 1 message of type "orders.placed", found none`, "enqueued: nothing")
}

// A row another program inserted with plain SQL, only the required columns
// set, is read the way a claim reads it.
func TestPlainSQLRowIsRead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, store := newStore(t)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	id := reliar.NewMessageID()
	if _, err := tx.ExecContext(ctx, `INSERT INTO outbox (id, message_type, payload) VALUES (?, 'orders.placed', ?)`,
		id.String(), []byte(`{"order_id":"o-9","total":9}`)); err != nil {
		t.Fatal(err)
	}
	got := sqlitestoretest.RequireEnqueuedTx[orderPlaced](ctx, t, store, tx, nil)
	if got.Envelope.ID != id || got.Body != (orderPlaced{OrderID: "o-9", Total: 9}) || got.Envelope.Metadata.Correlation.ConversationID != id {
		t.Fatalf("found %+v", got)
	}
}

// What the kit reads from the transaction is what the dispatcher
// publishes once it commits, and Drain returns once nothing is due or
// leased: a permanent failure went dead.
func TestReadEnvelopeIsThePublishedEnvelope(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, store := newStore(t)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := placed("o-1", 100, "c-1", "acme")
	m.Metadata.Correlation.CorrelationID = "req-42"
	m.Metadata.Routing.Destination = "billing"
	msgs := []reliar.Outgoing{m, reliar.NewMsg(orderCancelled{OrderID: "o-1"})}
	for i := range 60 {
		msgs = append(msgs, placed(fmt.Sprint("bulk-", i), int64(i), "", ""))
	}
	if _, err := store.Enqueue(ctx, tx, msgs...); err != nil {
		t.Fatal(err)
	}
	read, err := sqlitestoretest.EnqueuedTx(ctx, store, tx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}

	var pub outboxtest.RecordingPublisher
	pub.FailType("orders.cancelled", reliar.FailurePermanent, -1)
	st := outboxtest.Drain(ctx, t, store, &pub, outbox.Settings{BatchSize: 25})
	if st.Due != 0 || st.Leased != 0 || st.Scheduled != 0 || st.Dead != 1 {
		t.Fatalf("stats after Drain: %+v", st)
	}
	published := map[reliar.MessageID]reliar.SerializedEnvelope{}
	for _, e := range pub.Published() {
		published[e.ID] = e
	}
	if len(read) != 62 || len(published) != 61 {
		t.Fatalf("read %d, published %d", len(read), len(published))
	}
	for _, r := range read {
		p, ok := published[r.ID]
		if r.MessageType == "orders.cancelled" {
			if ok {
				t.Errorf("the failed message %s was published", r.ID)
			}
			continue
		}
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

// A row no claim could decode fails the assertion, naming the row, rather
// than being skipped.
func TestUndecodableRowFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, store := newStore(t)
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO outbox (id, message_type, payload, metadata) VALUES (?, 'orders.placed', X'7B7D', '{not json')`,
		reliar.NewMessageID().String()); err != nil {
		t.Fatal(err)
	}
	var rt recordTB
	sqlitestoretest.RequireNotEnqueuedTx[orderPlaced](ctx, &rt, store, tx, nil)
	mustContain(t, rt.failed(t), "sqlitestoretest: read the outbox: row of sequence 1:", "metadata")
}
