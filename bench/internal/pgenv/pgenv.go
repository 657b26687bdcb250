// Package pgenv gives every benchmark run a fresh PostgreSQL schema and the
// pools that work in it.
package pgenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DefaultDSN is the local PostgreSQL the benchmarks run against.
const DefaultDSN = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Env is one run's fresh place: a PostgreSQL schema, or, for a system
// that runs on a database file (SQLite), a directory.
type Env struct {
	// DSN is the connection string of the database.
	DSN string
	// Schema is the run's own schema; it is dropped when the run ends.
	Schema string
	// Dir is, for a system on a database file, the run's own empty
	// directory; it is removed when the run ends. Empty otherwise.
	Dir string
}

// Fresh creates a schema with a unique name made from prefix and returns it
// with a function that drops it and everything in it.
func Fresh(ctx context.Context, dsn, prefix string) (Env, func(context.Context) error, error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return Env{}, nil, fmt.Errorf("pgenv: random schema suffix: %w", err)
	}
	schema := sanitize(prefix) + "_" + hex.EncodeToString(rnd[:])
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return Env{}, nil, fmt.Errorf("pgenv: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return Env{}, nil, fmt.Errorf("pgenv: create schema %s: %w", schema, err)
	}
	drop := func(ctx context.Context) error {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return fmt.Errorf("pgenv: connect to drop %s: %w", schema, err)
		}
		defer conn.Close(context.WithoutCancel(ctx))
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			return fmt.Errorf("pgenv: drop schema %s: %w", schema, err)
		}
		return nil
	}
	return Env{DSN: dsn, Schema: schema}, drop, nil
}

// Pool opens a pool whose connections have the run's schema as search_path
// and synchronous_commit on. maxConns <= 0 keeps pgxpool's default.
func (e Env) Pool(ctx context.Context, maxConns int) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(e.DSN)
	if err != nil {
		return nil, fmt.Errorf("pgenv: parse DSN: %w", err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = e.Schema
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	if maxConns > 0 {
		cfg.MaxConns = int32(maxConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("pgenv: open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("pgenv: ping %s: %w", cfg.ConnConfig.Host+":"+strconv.Itoa(int(cfg.ConnConfig.Port)), err)
	}
	return pool, nil
}

// sanitize turns a system name into the start of a schema name.
func sanitize(name string) string {
	var b strings.Builder
	b.WriteString("bench_")
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	return b.String()
}
