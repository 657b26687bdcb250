// Command withtx is the control of notx: the same call with a transaction
// compiles.
package main

import (
	"context"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/store/pgstore"
)

func main() {
	ctx := context.Background()
	var (
		s    *pgstore.Store
		pool *pgxpool.Pool
		msg  reliar.Outgoing
	)
	tx, err := pool.Begin(ctx)
	if err != nil {
		return
	}
	_, _ = s.Enqueue(ctx, tx, msg)
}
