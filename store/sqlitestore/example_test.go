package sqlitestore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/store/sqlitestore"
)

// userSignedUp is an example message body.
type userSignedUp struct {
	Email string `json:"email"`
}

func (userSignedUp) MessageType() string { return "user.signed_up" }

// The application writes the user and the message in one transaction: both
// commit or neither does.
func ExampleStore_Enqueue() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "reliar-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := sqlitestore.Open(filepath.Join(dir, "app.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := sqlitestore.Migrate(ctx, db); err != nil {
		log.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE users (email TEXT PRIMARY KEY)`); err != nil {
		log.Fatal(err)
	}
	store, err := sqlitestore.New(ctx, db)
	if err != nil {
		log.Fatal(err)
	}

	tx, err := db.BeginTx(ctx, nil) // BEGIN IMMEDIATE, as Open sets it
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO users (email) VALUES (?)`, "ada@example.com"); err != nil {
		log.Fatal(err)
	}
	ids, err := store.Enqueue(ctx, tx, reliar.NewMsg(userSignedUp{Email: "ada@example.com"}))
	if err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("enqueued", len(ids), "message")

	st, err := store.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("due:", st.Due)
	// Output:
	// enqueued 1 message
	// due: 1
}

// A dispatcher claims due rows, publishes them and records the outcome; this
// is what it does with the store, by hand.
func ExampleStore_Acquire() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "reliar-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlitestore.Open(filepath.Join(dir, "app.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := sqlitestore.Migrate(ctx, db); err != nil {
		log.Fatal(err)
	}
	store, err := sqlitestore.New(ctx, db)
	if err != nil {
		log.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := store.Enqueue(ctx, tx, reliar.NewMsg(userSignedUp{Email: "grace@example.com"})); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}

	batch, err := store.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "example", BatchSize: 10, Lease: 30 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range batch.Records {
		fmt.Printf("publish %s: %s\n", r.Envelope.MessageType, r.Envelope.Payload)
	}
	n, err := store.Complete(ctx, []outboxdriver.Lease{batch.Records[0].Lease()})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("completed", n)
	// Output:
	// publish user.signed_up: {"email":"grace@example.com"}
	// completed 1
}

// Applications that open their own handle use DSN for the same settings.
func ExampleDSN() {
	fmt.Println(sqlitestore.DSN("app.db"))
	// Output:
	// file:app.db?_pragma=busy_timeout%2810000%29&_pragma=journal_mode%28WAL%29&_pragma=synchronous%28FULL%29&_pragma=foreign_keys%281%29&_txlock=immediate
}

// A process that embeds the dispatcher can let its claims and outcome
// writes commit without waiting for the disk, leaving every fsync to the
// producers' commits; a crash of the machine can then only republish.
func ExampleWithAsyncCommit() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "reliar-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlitestore.Open(filepath.Join(dir, "app.db")) // WAL mode, which the option needs
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := sqlitestore.Migrate(ctx, db); err != nil {
		log.Fatal(err)
	}
	store, err := sqlitestore.New(ctx, db, sqlitestore.WithAsyncCommit())
	if err != nil {
		log.Fatal(err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := store.Enqueue(ctx, tx, reliar.NewMsg(userSignedUp{Email: "alan@example.com"})); err != nil {
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil { // waits for the disk, as always
		log.Fatal(err)
	}
	batch, err := store.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "example", BatchSize: 10, Lease: 30 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	n, err := store.Complete(ctx, []outboxdriver.Lease{batch.Records[0].Lease()}) // does not wait
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("claimed", len(batch.Records), "completed", n)
	// Output:
	// claimed 1 completed 1
}
