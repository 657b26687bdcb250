// Package harness runs the benchmark scenarios against every system under
// test, each run on a fresh schema, the systems interleaved repetition by
// repetition so that a noisy neighbour on the machine hurts them alike.
package harness

import (
	"context"

	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/sink"
)

// Target is one system set up on one run's schema.
type Target interface {
	// Enqueue writes docs in one transaction of the system's own producer
	// API and commits it.
	Enqueue(ctx context.Context, docs []payload.Doc) error
	// Start begins dispatching every message to s. The returned stop ends
	// the dispatching and returns only after every goroutine it started
	// has returned.
	Start(ctx context.Context, s *sink.Sink) (stop func(context.Context) error, err error)
	// Pending counts the messages the system has not yet marked done in
	// the database.
	Pending(ctx context.Context) (int64, error)
	// Close releases what the target holds (pools, streams). The schema
	// is the harness's.
	Close(ctx context.Context) error
}

// System names a system under test and sets it up on a fresh schema.
type System struct {
	// Name identifies the system and its settings in results ("river
	// tuned").
	Name string
	// Open sets the system up in env's schema (migrations included), or
	// in env's directory when OnFile is set.
	Open func(ctx context.Context, env pgenv.Env) (Target, error)
	// OnFile marks a system on a database file (SQLite): every run gets a
	// fresh directory (Env.Dir) instead of a PostgreSQL schema.
	OnFile bool
}
