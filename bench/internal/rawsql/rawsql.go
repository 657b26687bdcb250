// Package rawsql is the benchmark's ceiling: the smallest correct dispatch
// loops, with pinned SQL, over two tables. On pgstore's own outbox table
// (created by pgstore.Migrate) they show the database's share of Reliar's
// work on Reliar's rows; on a minimal table (uuid primary key, bigserial
// sequence, message type, payload, a lease and a published mark, one
// partial pending index) they are what a hand-written outbox costs.
//
// A plain loop runs workers, each on its own connection, that claim 500 rows
// with a SKIP LOCKED CTE feeding an UPDATE … RETURNING, hand them to the
// sink, and mark them published with one UPDATE by id = ANY($1). The
// pipelined loop has one claimer and one completer on two connections, so
// that the claim of batch k+1 overlaps the completion of batch k. No
// retries, no leases renewed, no fencing, no metrics: what is left is the
// database's work.
package rawsql

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/sink"
	"github.com/reliar/reliar/store/pgstore"
)

// The loops' pinned parameters.
const (
	// ClaimSize is the number of rows one claim takes.
	ClaimSize = 500
	// IdleWait is a worker's pause after an empty claim.
	IdleWait = 10 * time.Millisecond
)

// Table is the table a loop works on.
type Table int

const (
	// PgstoreTable is pgstore's outbox table, created by pgstore.Migrate.
	// The producer inserts three columns (id, message_type, payload) with
	// one INSERT … SELECT FROM unnest of three arrays.
	PgstoreTable Table = iota
	// MinimalTable is the minimal outbox table of minimalTableSQL. The
	// producer inserts three columns (id, message_type, payload) with one
	// multi-row INSERT … VALUES.
	MinimalTable
)

// Loop is the shape of one raw loop.
type Loop struct {
	// Name identifies the loop in results.
	Name string
	// Table is the table the loop works on.
	Table Table
	// Workers is the number of claim → deliver → complete loops of a plain
	// loop, one connection each. Ignored when Pipelined.
	Workers int
	// Pipelined runs one claimer and one completer on two connections
	// instead: the claimer hands each delivered batch to the completer and
	// claims the next one at once.
	Pipelined bool
	// Envelope makes the claim also return the columns a broker message's
	// headers are made of (Claimed.Type and the fields after it). Only on
	// PgstoreTable.
	Envelope bool
}

// Pinned is the loop the peer comparison has always had: pgstore's table,
// two workers on two connections.
func Pinned() Loop { return Loop{Name: "raw sql pgstore table", Table: PgstoreTable, Workers: 2} }

// FourConns is the plain loop on pgstore's table with four workers on four
// connections.
func FourConns() Loop {
	return Loop{Name: "raw sql pgstore table 4 conns", Table: PgstoreTable, Workers: 4}
}

// PipelinedLoop is the pipelined loop on pgstore's table.
func PipelinedLoop() Loop {
	return Loop{Name: "raw sql pgstore table pipelined", Table: PgstoreTable, Pipelined: true}
}

// Minimal is the minimal table with the plain loop on four connections: the
// raw row of the outside harness (a 3-column multi-row INSERT; claim and
// complete on four connections).
func Minimal() Loop { return Loop{Name: "raw sql minimal table", Table: MinimalTable, Workers: 4} }

// Claimed is one claimed row.
type Claimed struct {
	ID      uuid.UUID
	Payload []byte
	// Type, Sequence, CreatedAt, ContentType, Version and ConversationID
	// (nil when the column is NULL) are set only by a loop with Envelope.
	Type           string
	Sequence       int64
	CreatedAt      time.Time
	ContentType    string
	Version        int32
	ConversationID *uuid.UUID
}

// DeliverFunc delivers one claimed batch; the batch is marked published
// when it returns nil. The loop ends with its error.
type DeliverFunc func(ctx context.Context, s *sink.Sink, batch []Claimed) error

// ToSink is the DeliverFunc of the no-op sink.
func ToSink(_ context.Context, s *sink.Sink, batch []Claimed) error {
	for _, c := range batch {
		if err := s.DeliverPayload(c.Payload); err != nil {
			return err
		}
	}
	return nil
}

// System is l, delivering to the sink, as a harness system.
func (l Loop) System() harness.System {
	return harness.System{Name: l.Name, Open: func(ctx context.Context, env pgenv.Env) (harness.Target, error) {
		return l.Open(ctx, env, ToSink)
	}}
}

// conns is the number of connections the loop uses.
func (l Loop) conns() int {
	if l.Pipelined {
		return 2
	}
	return max(l.Workers, 1)
}

// Open sets l up on env's schema with deliver as its destination.
func (l Loop) Open(ctx context.Context, env pgenv.Env, deliver DeliverFunc) (harness.Target, error) {
	if l.Envelope && l.Table != PgstoreTable {
		return nil, fmt.Errorf("rawsql: %s: Envelope needs pgstore's table", l.Name)
	}
	pool, err := env.Pool(ctx, l.conns())
	if err != nil {
		return nil, err
	}
	q := statementsFor(l)
	switch l.Table {
	case PgstoreTable:
		err = pgstore.Migrate(ctx, pool, pgstore.WithSchema(env.Schema))
	case MinimalTable:
		_, err = pool.Exec(ctx, minimalTableSQL)
	}
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("rawsql: create the table: %w", err)
	}
	return &target{loop: l, q: q, pool: pool, deliver: deliver}, nil
}

// target is a loop on one run's schema.
type target struct {
	loop    Loop
	q       statements
	pool    *pgxpool.Pool
	deliver DeliverFunc
}

func (t *target) Pending(ctx context.Context) (int64, error) {
	var n int64
	err := t.pool.QueryRow(ctx, t.q.pending).Scan(&n)
	return n, err
}

func (t *target) Close(context.Context) error {
	t.pool.Close()
	return nil
}
