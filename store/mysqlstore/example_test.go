package mysqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/store/mysqlstore"
)

// userSignedUp is an example message body.
type userSignedUp struct {
	Email string `json:"email"`
}

func (userSignedUp) MessageType() string { return "user.signed_up" }

// exampleDB creates a scratch database for an example and returns a handle
// on it and a function that drops it.
func exampleDB(ctx context.Context) (*sql.DB, func()) {
	admin, err := sql.Open("mysql", "root@tcp(127.0.0.1:3306)/?parseTime=true")
	if err != nil {
		log.Fatal(err)
	}
	name := fmt.Sprintf("reliar_example_%d", time.Now().UnixNano())
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		log.Fatal(err)
	}
	db, err := sql.Open("mysql", "root@tcp(127.0.0.1:3306)/"+name+"?parseTime=true")
	if err != nil {
		log.Fatal(err)
	}
	return db, func() {
		db.Close()
		admin.ExecContext(context.Background(), "DROP DATABASE "+name)
		admin.Close()
	}
}

// The application writes the user and the message in one transaction; a
// dispatcher later claims the message, publishes it and completes it.
func ExampleStore_Enqueue() {
	ctx := context.Background()
	db, drop := exampleDB(ctx)
	defer drop()

	if err := mysqlstore.Migrate(ctx, db); err != nil {
		log.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE users (email VARCHAR(255) PRIMARY KEY)`); err != nil {
		log.Fatal(err)
	}
	store, err := mysqlstore.New(ctx, db)
	if err != nil {
		log.Fatal(err)
	}

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO users (email) VALUES (?)`, "ada@example.com"); err != nil {
		log.Fatal(err)
	}
	if _, err := store.Enqueue(ctx, tx, reliar.NewMsg(userSignedUp{Email: "ada@example.com"})); err != nil {
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
	// publish user.signed_up: {"email":"ada@example.com"}
	// completed 1
}
