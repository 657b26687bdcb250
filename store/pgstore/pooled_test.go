package pgstore

import (
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar/outbox/storetest"
)

// poolerDSN is PgBouncer in transaction mode in front of the test database
// (scripts/services.sh starts it on :6432). Its tests never skip: without
// the pooler they fail, naming it.
const poolerDSN = "postgres://postgres@127.0.0.1:6432/test?sslmode=disable"

// queryModes are the query modes pgx offers besides its default,
// QueryExecModeCacheStatement, which TestStoreConformance runs.
var queryModes = map[string]pgx.QueryExecMode{
	"cache_describe":  pgx.QueryExecModeCacheDescribe,
	"describe_exec":   pgx.QueryExecModeDescribeExec,
	"exec":            pgx.QueryExecModeExec,
	"simple_protocol": pgx.QueryExecModeSimpleProtocol,
}

// modePool returns a pool of the test's own on dsn whose queries run in
// mode, closed in t.Cleanup.
func modePool(t testing.TB, dsn string, mode pgx.QueryExecMode) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 8
	cfg.ConnConfig.DefaultQueryExecMode = mode
	cfg.ConnConfig.RuntimeParams["search_path"] = ""
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err == nil {
		err = pool.Ping(t.Context())
	}
	if err != nil {
		t.Fatalf("connect to %s (PgBouncer runs on :6432 when the target is the pooler; scripts/services.sh starts it): %v", dsn, err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// storeThrough migrates a fresh schema over the direct shared pool (a
// migration needs a direct connection) and returns a store over pool.
func storeThrough(t testing.TB, pool *pgxpool.Pool, opts ...Option) *Store {
	t.Helper()
	schema := newSchemaName(t)
	if err := Migrate(t.Context(), sharedPool, WithSchema(schema)); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	opts = append([]Option{WithSchema(schema), WithLogger(quietLogger())}, opts...)
	s, err := New(t.Context(), pool, opts...)
	if err != nil {
		t.Fatalf("new store: %v", err)
	}
	return s
}

// Every query mode pgx offers runs the store's conformance suite on a
// direct connection.
func TestStoreConformanceQueryModes(t *testing.T) {
	t.Parallel()
	for name, mode := range queryModes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) storetest.Harness {
				return harnessOf(storeThrough(t, modePool(t, testDSN, mode)))
			})
		})
	}
}

// pooledModes are the query modes that need no statement to outlive one
// round trip; New refuses the others through a transaction pooler.
var pooledModes = []string{"cache_describe", "exec", "simple_protocol"}

// The store works through PgBouncer in transaction mode in every query
// mode that sends no named prepared statement and binds nothing to a
// statement parsed in an earlier round trip.
func TestStoreConformanceThroughPgBouncer(t *testing.T) {
	t.Parallel()
	for _, name := range pooledModes {
		mode := queryModes[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) storetest.Harness {
				return harnessOf(storeThrough(t, modePool(t, poolerDSN, mode)))
			})
		})
	}
}

// Through a transaction pooler, pgx's default mode (named prepared
// statements) is refused at New with a clear error, unless the pooler keeps
// prepared statements itself (WithPreparedStatementsThroughPooler).
func TestPooledStoreRefusesNamedPreparedStatements(t *testing.T) {
	t.Parallel()
	pool := modePool(t, poolerDSN, pgx.QueryExecModeCacheStatement)
	schema := newSchemaName(t)
	if err := Migrate(t.Context(), sharedPool, WithSchema(schema)); err != nil {
		t.Fatal(err)
	}
	if _, err := New(t.Context(), pool, WithSchema(schema), WithLogger(quietLogger())); !errors.Is(err, ErrPreparedStatementsPooled) {
		t.Fatalf("New through PgBouncer in cache_statement mode = %v; want ErrPreparedStatementsPooled", err)
	}
	s, err := New(t.Context(), pool, WithSchema(schema), WithLogger(quietLogger()), WithPreparedStatementsThroughPooler())
	if err != nil || !s.Pooled() {
		t.Fatalf("New with WithPreparedStatementsThroughPooler = %v (pooled %v); want a pooled store", err, s != nil && s.Pooled())
	}
	describeExec := modePool(t, poolerDSN, pgx.QueryExecModeDescribeExec)
	if _, err := New(t.Context(), describeExec, WithSchema(schema), WithLogger(quietLogger())); !errors.Is(err, ErrDescribeExecPooled) {
		t.Fatalf("New through PgBouncer in describe_exec mode = %v; want ErrDescribeExecPooled", err)
	}
}

// A pooled store neither listens nor hands off; a direct one does both.
func TestPooledStoreDoesNotListen(t *testing.T) {
	t.Parallel()
	s := storeThrough(t, modePool(t, poolerDSN, pgx.QueryExecModeCacheDescribe))
	if !s.Pooled() {
		t.Fatal("a store through PgBouncer reports Pooled() = false")
	}
	if c := s.Capabilities(); c.Notify || c.Handoff {
		t.Fatalf("pooled capabilities = %+v; want neither Notify nor Handoff", c)
	}
	if _, err := s.Wakeups(t.Context()); !errors.Is(err, ErrListenPooled) {
		t.Fatalf("Wakeups through PgBouncer = %v; want ErrListenPooled", err)
	}
	direct := storeThrough(t, modePool(t, testDSN, pgx.QueryExecModeCacheDescribe))
	if c := direct.Capabilities(); direct.Pooled() || !c.Notify || !c.Handoff {
		t.Fatalf("direct store: pooled %v, capabilities %+v; want not pooled, Notify and Handoff", direct.Pooled(), c)
	}
}

// Migrate refuses a pooled connection: its session advisory lock would
// stay held on a server connection the pooler lends to others.
func TestMigrateNeedsDirectConnection(t *testing.T) {
	t.Parallel()
	pool := modePool(t, poolerDSN, pgx.QueryExecModeCacheDescribe)
	schema := newSchemaName(t)
	if err := Migrate(t.Context(), pool, WithSchema(schema)); !errors.Is(err, ErrNeedsDirectConnection) {
		t.Fatalf("Migrate through PgBouncer = %v; want ErrNeedsDirectConnection", err)
	}
}

// The maintenance lease through PgBouncer: one holder at a time, whatever
// server connection each statement lands on, and once given back its row is
// gone (it holds nothing on a server connection).
func TestMaintenanceLeaseThroughPgBouncer(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	a := storeThrough(t, modePool(t, poolerDSN, pgx.QueryExecModeCacheDescribe))
	b, err := New(ctx, modePool(t, poolerDSN, pgx.QueryExecModeExec), WithSchema(a.Schema()), WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	unlock, ok, err := a.TryLockMaintenance(ctx)
	if err != nil || !ok {
		t.Fatalf("lock = %v, %v", ok, err)
	}
	for range 5 { // across whatever server connections PgBouncer lends
		if _, ok, err := b.TryLockMaintenance(ctx); err != nil || ok {
			t.Fatalf("second lock through PgBouncer = %v, %v; want refused", ok, err)
		}
	}
	unlock()
	if n := leaseRows(t, a); n != 0 {
		t.Fatalf("%d lease rows after unlock; want 0", n)
	}
	unlockB, ok, err := b.TryLockMaintenance(ctx)
	if err != nil || !ok {
		t.Fatalf("lock after unlock = %v, %v; want taken", ok, err)
	}
	unlockB()
}
