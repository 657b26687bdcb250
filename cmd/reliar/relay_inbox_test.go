package main

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/store/pgstore"
)

// TestRelayToInboxConsumerAppliesEachEffectOnce is the whole path of an
// effectively-once consumer: rows inserted by plain SQL, the relay (a child
// process) publishing them to JetStream, duplicates injected twice over — a
// republication under a new Nats-Msg-Id, which JetStream cannot drop, and a
// lost acknowledgement after the effect committed, which JetStream
// redelivers — and a consumer that charges each order inside its own
// transaction through the PostgreSQL inbox. Every order is charged exactly
// once however often it arrives.
func TestRelayToInboxConsumerAppliesEachEffectOnce(t *testing.T) {
	t.Parallel()
	const orders = 60
	db, js := newPG(t), newJetStream(t)
	db.migrate(t)
	ctx := t.Context()
	charges := pgx.Identifier{db.schema, "charges"}.Sanitize()
	if _, err := db.pool.Exec(ctx, `CREATE TABLE `+charges+` (message_id uuid NOT NULL, payload text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	store, err := pgstore.New(ctx, db.pool, pgstore.WithSchema(db.schema))
	if err != nil {
		t.Fatal(err)
	}
	processed := store.Inbox()
	db.insert(t, "order_placed", orders)
	p := startRelay(t, relayArgs(db, js)...)
	waitFor(t, "every order in the stream", func() bool { return js.messages(t) == orders })

	// Inject republications the broker cannot recognise: the same message
	// (same ce-id) under a new Nats-Msg-Id, as after a lease lost outside
	// the stream's dedup window.
	jsc, err := jetstream.New(js.nc)
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= 10; seq++ {
		m, err := js.stream.GetMsg(ctx, seq)
		if err != nil {
			t.Fatal(err)
		}
		h := nats.Header{}
		for k, v := range m.Header {
			h[k] = v
		}
		h.Set("Nats-Msg-Id", "republished-"+h.Get("Nats-Msg-Id"))
		if _, err := jsc.PublishMsg(ctx, &nats.Msg{Subject: m.Subject, Header: h, Data: m.Data}); err != nil {
			t.Fatal(err)
		}
	}

	cons, err := js.stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{AckPolicy: jetstream.AckExplicitPolicy, AckWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var deliveries, duplicates, nakked int
	deadline := time.Now().Add(time.Minute)
	for {
		batch, err := cons.Fetch(50, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for msg := range batch.Messages() {
			got++
			deliveries++
			headers := map[string]string{}
			for k, v := range msg.Headers() {
				if len(v) > 0 {
					headers[k] = v[0]
				}
			}
			id, err := inbox.MessageIDFromHeaders(headers) // ce-id: the same for a republication
			if err != nil {
				t.Fatal(err)
			}
			err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
				return inbox.Process(ctx, processed, tx, "billing", id, func(ctx context.Context) error {
					_, err := tx.Exec(ctx, `INSERT INTO `+charges+` (message_id, payload) VALUES ($1, $2)`, id, string(msg.Data()))
					return err
				})
			})
			switch {
			case errors.Is(err, inbox.ErrAlreadyProcessed):
				duplicates++
			case err != nil:
				t.Fatalf("processing %s: %v", id, err)
			}
			// Lose the acknowledgement of every 7th first delivery: the
			// effect committed, JetStream redelivers after AckWait.
			if md, _ := msg.Metadata(); md != nil && md.NumDelivered == 1 && md.Sequence.Stream%7 == 0 {
				nakked++
				continue
			}
			if err := msg.Ack(); err != nil {
				t.Fatal(err)
			}
		}
		if batch.Error() != nil && !errors.Is(batch.Error(), nats.ErrTimeout) {
			t.Fatal(batch.Error())
		}
		if got == 0 && deliveries >= orders+10+nakked {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %d deliveries", deliveries)
		}
	}

	var rows, distinct int
	if err := db.pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT message_id) FROM `+charges).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != orders || distinct != orders {
		t.Fatalf("%d charges for %d distinct orders, want exactly one each of %d", rows, distinct, orders)
	}
	if duplicates != deliveries-orders || duplicates < 10+nakked || nakked == 0 {
		t.Fatalf("%d deliveries, %d duplicates skipped, %d acknowledgements lost: the duplicates were not all injected and skipped", deliveries, duplicates, nakked)
	}
	t.Logf("%d orders charged once from %d deliveries (%d duplicates skipped: 10 republished, %d redelivered)", orders, deliveries, duplicates, nakked)
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("relay exit %d\n%s", code, p.stderr.String())
	}
}
