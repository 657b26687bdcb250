package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/store/pgstore"
)

// OrderPlaced is an example message.
type OrderPlaced struct {
	OrderID string `json:"order_id"`
}

// MessageType names the message's schema.
func (OrderPlaced) MessageType() string { return "orders.placed" }

// exampleDB connects to the examples' database and makes a fresh schema; the
// returned function drops it and closes the pool.
func exampleDB(ctx context.Context) (*pgxpool.Pool, string, func()) {
	pool, err := pgxpool.New(ctx, "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	if err != nil {
		log.Fatal(err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "reliar_example_" + hex.EncodeToString(b)
	return pool, schema, func() {
		_, _ = pool.Exec(context.WithoutCancel(ctx), `DROP SCHEMA IF EXISTS "`+schema+`" CASCADE`)
		pool.Close()
	}
}

// Migrate at start-up, then open the store.
func Example() {
	ctx := context.Background()
	pool, schema, cleanup := exampleDB(ctx)
	defer cleanup()

	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(schema)); err != nil {
		log.Fatal(err)
	}
	store, err := pgstore.New(ctx, pool, pgstore.WithSchema(schema))
	if err != nil {
		log.Fatal(err)
	}
	st, err := store.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("schema version:", pgstore.SchemaVersion)
	fmt.Println("pending messages:", st.Pending)
	// Output:
	// schema version: 6
	// pending messages: 0
}

// Write the business change and its message in one pgx transaction.
func ExampleStore_Enqueue() {
	ctx := context.Background()
	pool, schema, cleanup := exampleDB(ctx)
	defer cleanup()
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(schema)); err != nil {
		log.Fatal(err)
	}
	store, err := pgstore.New(ctx, pool, pgstore.WithSchema(schema))
	if err != nil {
		log.Fatal(err)
	}

	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// ... the business change, for example:
		// tx.Exec(ctx, "INSERT INTO orders ...")
		_, err := store.Enqueue(ctx, tx,
			reliar.NewMsg(OrderPlaced{OrderID: "o-1"}),
			reliar.Msg(reliar.Envelope[OrderPlaced]{Body: OrderPlaced{OrderID: "o-2"}, OrderingKey: "customer-7"}),
		)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	st, err := store.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("due messages:", st.Due)
	// Output: due messages: 2
}

// With database/sql, the transaction must come from pgx's stdlib driver.
func ExampleStore_EnqueueSQL() {
	ctx := context.Background()
	pool, schema, cleanup := exampleDB(ctx)
	defer cleanup()
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(schema)); err != nil {
		log.Fatal(err)
	}
	store, err := pgstore.New(ctx, pool, pgstore.WithSchema(schema))
	if err != nil {
		log.Fatal(err)
	}

	db := stdlib.OpenDBFromPool(pool) // or sql.Open("pgx", dsn)
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	ids, err := store.EnqueueSQL(ctx, tx, reliar.NewMsg(OrderPlaced{OrderID: "o-3"}))
	if err != nil {
		_ = tx.Rollback()
		log.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		log.Fatal(err)
	}
	st, err := store.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("enqueued:", len(ids), "due:", st.Due)
	// Output: enqueued: 1 due: 1
}
