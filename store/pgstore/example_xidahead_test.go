package pgstore_test

import (
	"context"
	"fmt"
	"log"

	"github.com/reliar/reliar/store/pgstore"
)

// After restoring a dump of another cluster, find the rows whose
// transaction id this cluster has not reached, and repair them so that
// per-key claims take them again.
func ExampleStore_RepairXIDs() {
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
	// A restored row: its xid came with it from a cluster further along.
	if _, err := pool.Exec(ctx, `INSERT INTO "`+schema+`".outbox (id, message_type, payload, ordering_key, xid)
VALUES (gen_random_uuid(), 'orders.placed', '{}', 'customer-7', (pg_current_xact_id()::text::int8 + 1000)::text::xid8)`); err != nil {
		log.Fatal(err)
	}

	ahead, err := store.XIDAhead(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("rows ahead:", ahead.Rows, "keys blocked:", ahead.Sample)
	repaired, err := store.RepairXIDs(ctx, 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("repaired:", repaired)
	// Output:
	// rows ahead: 1 keys blocked: [customer-7]
	// repaired: 1
}

// Check at start-up that row-level security hides no outbox row from the
// dispatchers' role before running them with per-key ordering.
func ExampleStore_RowSecurity() {
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
	rs, err := store.RowSecurity(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if rs.MayHideRows() {
		log.Fatalf("row-level security may hide outbox rows from role %s (policies %v)", rs.Role, rs.AppliedPolicies())
	}
	fmt.Println("row-level security enabled:", rs.Enabled)
	// Output:
	// row-level security enabled: false
}
