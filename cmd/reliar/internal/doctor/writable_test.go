package doctor

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/reliar/reliar/store/pgstore"
)

// A database whose transactions are read-only by default is red.
func TestGatherReadOnlyDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, postgresURL)
	if err != nil {
		t.Fatal(err)
	}
	_, suffix := testSchema(t)
	name := "reliar_doctor_ro_" + suffix[len("reliar_doctor_"):]
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
		admin.Close()
	})
	url := "postgres://postgres@127.0.0.1:5432/" + name + "?sslmode=disable"
	setup, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	err = pgstore.Migrate(ctx, setup)
	setup.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(ctx, "ALTER DATABASE "+name+" SET default_transaction_read_only = on"); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	f, err := Gather(ctx, pool, pgstore.DefaultSchema, time.Minute, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Writable.ReadOnly || f.Writable.InRecovery {
		t.Fatalf("Writable = %+v; want read-only, not in recovery", f.Writable)
	}
	rep := NewReport("test", Evaluate(f, Thresholds{}))
	if c, _ := rep.Find(CheckWritable); c.Verdict != Red || rep.Healthy() {
		t.Fatalf("writable check = %+v (healthy %v); want red", c, rep.Healthy())
	}
}

// A role that may read the outbox but not update or delete from it is red.
func TestGatherMissingPrivileges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, schema := testSchema(t)
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(schema)); err != nil {
		t.Fatal(err)
	}
	role := schema + "_reader"
	q := pgx.Identifier{schema}.Sanitize()
	for _, sql := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"GRANT USAGE ON SCHEMA " + q + " TO " + role,
		"GRANT SELECT ON ALL TABLES IN SCHEMA " + q + " TO " + role,
	} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	t.Cleanup(func() {
		for _, sql := range []string{"DROP OWNED BY " + role, "DROP ROLE IF EXISTS " + role} {
			if _, err := pool.Exec(context.Background(), sql); err != nil {
				t.Errorf("%s: %v", sql, err)
			}
		}
	})
	reader, err := pgxpool.New(ctx, "postgres://"+role+"@127.0.0.1:5432/test?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	f, err := Gather(ctx, reader, schema, time.Minute, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if f.Writable.Role != role || !slices.Equal(f.Writable.Missing, []string{"UPDATE", "DELETE"}) {
		t.Fatalf("Writable = %+v; want %s missing UPDATE, DELETE", f.Writable, role)
	}
	rep := NewReport("test", Evaluate(f, Thresholds{}))
	if c, _ := rep.Find(CheckWritable); c.Verdict != Red {
		t.Fatalf("writable check = %+v; want red", c)
	}
}
