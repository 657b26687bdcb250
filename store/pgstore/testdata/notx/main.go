// Command notx must not compile: Enqueue takes a transaction, and neither a
// pool nor a connection is one. pgstore's tests build it and expect the type
// errors.
package main

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/store/pgstore"
)

func main() {
	ctx := context.Background()
	var (
		s    *pgstore.Store
		pool *pgxpool.Pool
		conn *pgx.Conn
		msg  reliar.Outgoing
	)
	_, _ = s.Enqueue(ctx, pool, msg) // want: *pgxpool.Pool does not implement pgx.Tx
	_, _ = s.Enqueue(ctx, conn, msg) // want: *pgx.Conn does not implement pgx.Tx
}
