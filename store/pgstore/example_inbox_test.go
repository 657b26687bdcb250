package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/store/pgstore"
)

// delivery stands for a message as a JetStream consumer receives it: the
// publisher set Nats-Msg-Id to the message id, and the broker may deliver
// the same message more than once.
type delivery struct {
	Headers map[string]string
	Data    []byte
}

// A consumer applies each message once, however often the broker delivers
// it: the inbox record and the business effect commit in one pgx
// transaction, and a redelivery finds the record and is skipped.
func ExampleStore_Inbox() {
	ctx := context.Background()
	pool, schema, cleanup := exampleDB(ctx)
	defer cleanup()
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(schema)); err != nil {
		log.Fatal(err)
	}
	invoices := pgx.Identifier{schema, "invoices"}.Sanitize()
	if _, err := pool.Exec(ctx, `CREATE TABLE `+invoices+` (order_id text PRIMARY KEY)`); err != nil {
		log.Fatal(err)
	}
	store, err := pgstore.New(ctx, pool, pgstore.WithSchema(schema))
	if err != nil {
		log.Fatal(err)
	}
	marker := store.Inbox()

	// handle processes one delivery; on nil the consumer acknowledges it,
	// on an error it lets the broker redeliver.
	handle := func(d delivery) error {
		id, err := inbox.MessageIDFromHeaders(d.Headers)
		if err != nil {
			return err
		}
		var duplicate bool
		err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			err := inbox.Process(ctx, marker, tx, "billing", id, func(ctx context.Context) error {
				_, err := tx.Exec(ctx, `INSERT INTO `+invoices+` (order_id) VALUES ($1)`, string(d.Data))
				return err
			})
			if errors.Is(err, inbox.ErrAlreadyProcessed) {
				duplicate = true
				return nil
			}
			return err // an error rolls back the effect and the record together
		})
		switch {
		case err != nil:
			return err
		case duplicate:
			fmt.Println("duplicate skipped")
		default:
			fmt.Println("invoiced", string(d.Data))
		}
		return nil
	}

	msg := delivery{Headers: map[string]string{"Nats-Msg-Id": reliar.NewMessageID().String()}, Data: []byte("order-42")}
	for range 2 { // the ack of the first delivery was lost: JetStream redelivers
		if err := handle(msg); err != nil {
			log.Fatal(err)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+invoices).Scan(&n); err != nil {
		log.Fatal(err)
	}
	fmt.Println("invoices:", n)

	// The maintainer's side: forget records older than the retention,
	// which must exceed the stream's redelivery horizon.
	purged, err := marker.PurgeProcessed(ctx, inbox.DefaultRetention, 1000)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("purged:", purged)
	// Output:
	// invoiced order-42
	// duplicate skipped
	// invoices: 1
	// purged: 0
}
