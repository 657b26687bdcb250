package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// limitedPool creates a role of the test's own with setting = value on the
// role (ALTER ROLE ... SET, as teams set limits on their application's
// role) and returns a pool that logs in as it. The role is dropped when the
// test ends.
func limitedPool(t *testing.T, setting, value string) *pgxpool.Pool {
	t.Helper()
	ctx := t.Context()
	role := "reliar_lim_" + randomSuffix()
	for _, sql := range []string{
		"CREATE ROLE " + role + " LOGIN SUPERUSER",
		"ALTER ROLE " + role + " SET " + setting + " = '" + value + "'",
	} {
		if _, err := sharedPool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	cfg, err := pgxpool.ParseConfig("postgres://" + role + "@127.0.0.1:5432/test?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 4
	cfg.ConnConfig.RuntimeParams["search_path"] = ""
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		pool.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := sharedPool.Exec(ctx, "DROP ROLE IF EXISTS "+role); err != nil {
			t.Errorf("drop role %s: %v", role, err)
		}
	})
	var got string
	if err := pool.QueryRow(ctx, "SELECT current_setting($1)", setting).Scan(&got); err != nil || got != value {
		t.Fatalf("%s on the role's connection = %q, %v; want %q", setting, got, err, value)
	}
	return pool
}

// Limits a team sets on its application's role leave migrations, claims,
// outcome writes and purges working. The migration runs while another
// transaction is open, so that its CREATE INDEX CONCURRENTLY waits longer
// than the statement timeout.
func TestRoleLimits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ setting, value string }{
		{"statement_timeout", "50ms"},
		{"idle_in_transaction_session_timeout", "50ms"},
		{"lock_timeout", "5ms"},
	} {
		t.Run(tt.setting, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			pool := limitedPool(t, tt.setting, tt.value)
			schema := newSchemaName(t)

			older, err := sharedPool.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := older.Exec(ctx, "SELECT pg_catalog.txid_current()"); err != nil {
				t.Fatal(err)
			}
			rolledBack := make(chan struct{})
			go func() {
				defer close(rolledBack)
				time.Sleep(300 * time.Millisecond)
				_ = older.Rollback(context.Background())
			}()
			err = Migrate(ctx, pool, WithSchema(schema))
			<-rolledBack
			if err != nil {
				t.Fatalf("Migrate under %s = %s: %v", tt.setting, tt.value, err)
			}

			s, err := New(ctx, pool, WithSchema(schema), WithLogger(quietLogger()))
			if err != nil {
				t.Fatal(err)
			}
			msgs := make([]reliar.Outgoing, 40)
			for i := range msgs {
				msgs[i] = reliar.NewMsg(orderPlaced{OrderID: "o"})
			}
			if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
				_, err := s.Enqueue(ctx, tx, msgs...)
				return err
			}); err != nil {
				t.Fatalf("Enqueue: %v", err)
			}
			batch, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "w", BatchSize: 40, Lease: time.Minute})
			if err != nil || len(batch.Records) != 40 {
				t.Fatalf("Acquire = %d records, %v; want 40", len(batch.Records), err)
			}
			leases := make([]outboxdriver.Lease, len(batch.Records))
			for i, r := range batch.Records {
				leases[i] = r.Lease()
			}
			if n, err := s.ExtendLease(ctx, leases, time.Minute); err != nil || n != 40 {
				t.Fatalf("ExtendLease = %d, %v", n, err)
			}
			if n, err := s.Complete(ctx, leases[:30]); err != nil || n != 30 {
				t.Fatalf("Complete = %d, %v", n, err)
			}
			fails := make([]outboxdriver.FailedOutcome, 0, 10)
			for _, l := range leases[30:] {
				fails = append(fails, outboxdriver.FailedOutcome{Lease: l, Error: "broker refused", DeadReason: outboxdriver.DeadPermanent})
			}
			if n, err := s.Fail(ctx, fails); err != nil || n != 10 {
				t.Fatalf("Fail = %d, %v", n, err)
			}
			zero := time.Duration(0)
			r, err := s.Purge(ctx, outboxdriver.PurgeRequest{PublishedRetention: &zero, DeadRetention: &zero})
			if err != nil || r.PublishedDeleted != 30 || r.DeadDeleted != 10 {
				t.Fatalf("Purge = %+v, %v; want 30 published and 10 dead deleted", r, err)
			}
			unlock, ok, err := s.TryLockMaintenance(ctx)
			if err != nil || !ok {
				t.Fatalf("TryLockMaintenance = %v, %v", ok, err)
			}
			unlock()
		})
	}
}
