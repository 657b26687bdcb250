package pgstore

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrPreparedStatementsPooled is returned by New for a pool that reaches
// PostgreSQL through a transaction pooler (PgBouncer in transaction mode,
// pgcat, Supavisor) while its queries run in pgx's default mode,
// QueryExecModeCacheStatement: that mode keeps named prepared statements on
// the server connection, which a transaction pooler hands to another
// client after each transaction. Set default_query_exec_mode to
// cache_describe (or exec, simple_protocol) on the pool, or connect
// directly. PgBouncer 1.21 and later track prepared statements themselves
// when max_prepared_statements is set: there,
// WithPreparedStatementsThroughPooler keeps the default mode.
var ErrPreparedStatementsPooled = errors.New("pgstore: the pool reaches PostgreSQL through a transaction pooler but its queries use named prepared statements (pgx's default query mode cache_statement); set default_query_exec_mode=cache_describe on the pool, connect directly, or with PgBouncer 1.21+ and max_prepared_statements use WithPreparedStatementsThroughPooler")

// ErrDescribeExecPooled is returned by New for a pool that reaches
// PostgreSQL through a transaction pooler while its queries run in pgx's
// describe_exec mode: that mode describes a statement in one round trip
// and binds its arguments to the server's unnamed statement in the next,
// which a transaction pooler may send to another server connection, where
// the unnamed statement is someone else's. Use cache_describe, exec or
// simple_protocol.
var ErrDescribeExecPooled = errors.New("pgstore: the pool reaches PostgreSQL through a transaction pooler but its queries use pgx's describe_exec mode, whose describe and execute may land on different server connections; set default_query_exec_mode=cache_describe (or exec, simple_protocol)")

// ErrNeedsDirectConnection is returned by Migrate over a pool that reaches
// PostgreSQL through a transaction pooler: a migration serialises itself
// with a session-level advisory lock, which a transaction pooler would
// leave held on a server connection after the migration returned.
var ErrNeedsDirectConnection = errors.New("pgstore: migrations need a direct connection to PostgreSQL, not one through a transaction pooler")

// ErrListenPooled is returned by Wakeups on a store whose pool reaches
// PostgreSQL through a transaction pooler (Pooled): a LISTEN there lasts
// one transaction. Dispatchers then poll.
var ErrListenPooled = errors.New("pgstore: no notifications through a transaction pooler: LISTEN needs a direct connection")

// BehindPooler reports whether pool reaches PostgreSQL through a pooler
// (PgBouncer, pgcat, Supavisor). A pooler answers the client's start-up
// with a cancel key of its own, so the process id pgx was given is not the
// server process that runs the query; on a direct connection the two are
// the same. New and Migrate ask it.
func BehindPooler(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	return behindPooler(ctx, pool)
}

func behindPooler(ctx context.Context, pool *pgxpool.Pool) (bool, error) {
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer pc.Release()
	var backend uint32
	if err := pc.QueryRow(ctx, "SELECT pg_catalog.pg_backend_pid()::int8", pgx.QueryExecModeSimpleProtocol).Scan(&backend); err != nil {
		return false, err
	}
	return pc.Conn().PgConn().PID() != backend, nil
}

// checkQueryMode refuses, through a pooler, the query modes that need a
// statement to stay on one server connection across round trips. Every
// mode works on a direct connection.
func checkQueryMode(pool *pgxpool.Pool, pooled bool, cfg config) error {
	if !pooled {
		return nil
	}
	switch pool.Config().ConnConfig.DefaultQueryExecMode {
	case pgx.QueryExecModeCacheStatement:
		if !cfg.preparedThroughPooler {
			return ErrPreparedStatementsPooled
		}
	case pgx.QueryExecModeDescribeExec:
		return ErrDescribeExecPooled
	}
	return nil
}

// Pooled reports whether the store's pool reaches PostgreSQL through a
// transaction pooler, as New found it. A pooled store listens for no
// notifications (Capabilities reports neither Notify nor Handoff): a
// LISTEN lasts only as long as the pooler lends the server connection.
func (s *Store) Pooled() bool { return s.pooled }
