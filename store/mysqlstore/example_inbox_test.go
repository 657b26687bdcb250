package mysqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/store/mysqlstore"
)

// A consumer applies each message once, however often the broker delivers
// it: the inbox record and the business effect commit in one transaction.
func ExampleStore_Inbox() {
	ctx := context.Background()
	db, drop := exampleDB(ctx)
	defer drop()
	if err := mysqlstore.Migrate(ctx, db); err != nil {
		log.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE invoices (order_id VARCHAR(64) PRIMARY KEY)`); err != nil {
		log.Fatal(err)
	}
	store, err := mysqlstore.New(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	marker := store.Inbox()

	// handle processes one delivery of message id in its own transaction.
	handle := func(id reliar.MessageID, orderID string) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		err = inbox.Process(ctx, marker, tx, "billing", id, func(ctx context.Context) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO invoices (order_id) VALUES (?)`, orderID)
			return err
		})
		switch {
		case errors.Is(err, inbox.ErrAlreadyProcessed):
			fmt.Println("duplicate skipped")
		case err != nil:
			// Rolled back; the redelivery processes it. A deadlock
			// (errors.Is(err, mysqlstore.ErrDeadlock)) may be retried
			// at once.
			return err
		default:
			fmt.Println("invoiced", orderID)
		}
		return tx.Commit()
	}

	id := reliar.NewMessageID() // in a real consumer: inbox.MessageIDFromHeaders
	for range 2 {               // the broker delivers the message twice
		if err := handle(id, "order-42"); err != nil {
			log.Fatal(err)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM invoices`).Scan(&n); err != nil {
		log.Fatal(err)
	}
	fmt.Println("invoices:", n)

	// The maintainer's side: forget records older than the retention.
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
