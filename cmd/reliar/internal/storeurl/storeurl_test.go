package storeurl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Real services the tests use; they fail when a service is missing.
const (
	postgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	mysqlURL    = "mysql://root@127.0.0.1:3306/test"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name       string
		raw        string
		wantDriver string
		wantErr    string // substring of the error; "" for success
	}{
		{"postgres", "postgres://u:pw@db:5432/app", "postgres", ""},
		{"postgresql", "postgresql://db/app?sslmode=disable", "postgres", ""},
		{"scheme in capitals", "POSTGRES://db/app", "postgres", ""},
		{"sqlite relative", "sqlite://data/app.db", "sqlite", ""},
		{"sqlite absolute", "sqlite:///var/lib/app.db", "sqlite", ""},
		{"sqlite opaque", "sqlite:app.db", "sqlite", ""},
		{"mysql", "mysql://root:pw@127.0.0.1:3306/test", "mysql", ""},
		{"mariadb without port", "mariadb://root@db/test", "mysql", ""},
		{"empty", "", "", "empty"},
		{"no scheme", "db.example.com/app", "", "no scheme"},
		{"host and port, no scheme", "localhost:5432/app", "", "no scheme: a database URL starts with one of postgres://"},
		{"user and password, no scheme", "u:pw@db:5432/app", "", "database URL u:xxxxx@db:5432/app: no scheme"},
		{"a file, no scheme", "orders.db", "", "no scheme"},
		{"an address, no scheme", "127.0.0.1:5432/app", "", "no scheme: a database URL starts with one of postgres://"},
		{"unknown scheme", "oracle://u:pw@db/app", "", `unknown scheme "oracle"`},
		{"malformed", "postgres://u:pw@db:port/app", "", "invalid port"},
		{"bad postgres option", "postgres://db/app?sslmode=sometimes", "", "sslmode"},
		{"sqlite without path", "sqlite://", "", "no file path"},
		{"sqlite in memory", "sqlite::memory:", "", "in-memory"},
		{"sqlite query", "sqlite://app.db?cache=shared", "", "query parameters"},
		{"sqlite user", "sqlite://u:pw@app.db", "", "no user"},
		{"mysql without host", "mysql:///test", "", "no host"},
		{"mysql bad parameter", "mysql://db/test?timeout=soon", "", "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := Parse(tt.raw)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Parse(%q) = %v", tt.raw, err)
				}
				if loc.Driver() != tt.wantDriver {
					t.Fatalf("driver %q, want %q", loc.Driver(), tt.wantDriver)
				}
				if strings.Contains(loc.String(), ":pw@") {
					t.Fatalf("String() leaks the password: %s", loc)
				}
				return
			}
			if !errors.Is(err, ErrBadURL) {
				t.Fatalf("Parse(%q) = %v, want ErrBadURL", tt.raw, err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %q lacks %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "pw") {
				t.Fatalf("error leaks the password: %q", err)
			}
		})
	}
}

func TestMigrationSQL(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		schema  string
		want    []string // substrings of the concatenated SQL
		wantErr error
	}{
		{"postgres public", "postgres://db/app", "", []string{`"public".outbox`}, nil},
		{"postgres schema", "postgres://db/app", "billing", []string{`CREATE SCHEMA IF NOT EXISTS "billing"`, `"billing".outbox`}, nil},
		{"postgres bad schema", "postgres://db/app", "x; drop", nil, ErrBadOption},
		{"sqlite", "sqlite://app.db", "", []string{"CREATE TABLE outbox"}, nil},
		{"sqlite schema", "sqlite://app.db", "x", nil, ErrBadOption},
		{"mysql", "mysql://db/app", "", []string{"CREATE TABLE"}, nil},
		{"mysql schema", "mysql://db/app", "x", nil, ErrBadOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := Parse(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			files, err := loc.MigrationSQL(Options{Schema: tt.schema})
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("MigrationSQL = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(files) == 0 {
				t.Fatalf("MigrationSQL = %d files, %v", len(files), err)
			}
			var all strings.Builder
			for _, f := range files {
				all.WriteString(f.SQL)
			}
			for _, w := range tt.want {
				if !strings.Contains(all.String(), w) {
					t.Fatalf("SQL lacks %q", w)
				}
			}
		})
	}
}

// placed is the message the backend tests enqueue.
type placed struct {
	OrderID string `json:"order_id"`
}

func (placed) MessageType() string { return "orders.placed" }

// backends returns one location per store on the real services.
func backends(t *testing.T) map[string]string {
	return map[string]string{
		"postgres": postgresURL,
		"sqlite":   "sqlite://" + filepath.Join(t.TempDir(), "app.db"),
		"mysql":    mysqlURL,
	}
}

// TestScratchBackends runs the whole path on a scratch backend of each
// store: migrate twice, a committed and a rolled-back transaction, a claim,
// and the cleanup.
func TestScratchBackends(t *testing.T) {
	for name, raw := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			loc, err := Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			b, err := loc.OpenScratch(ctx, Options{})
			if err != nil {
				t.Fatal(err)
			}
			closed := false
			defer func() {
				if !closed {
					_ = b.Close(ctx)
				}
			}()
			if !strings.HasPrefix(b.Describe(), name) {
				t.Fatalf("Describe() = %q", b.Describe())
			}
			if _, err := b.Store(ctx); err == nil {
				t.Fatal("Store before Migrate must fail")
			}
			m, err := b.Migrate(ctx)
			if err != nil || m.From != 0 || m.To < 1 {
				t.Fatalf("first Migrate = %+v, %v", m, err)
			}
			again, err := b.Migrate(ctx)
			if err != nil || again.From != m.To || again.To != m.To {
				t.Fatalf("second Migrate = %+v, %v; want a no-op at %d", again, err, m.To)
			}
			d := b.Dialect()
			table := d.Table("orders")
			exec := func(tx Tx, sql string, args ...any) {
				t.Helper()
				if err := tx.Exec(ctx, sql, args...); err != nil {
					t.Fatalf("%s: %v", sql, err)
				}
			}
			tx, err := b.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			exec(tx, "CREATE TABLE "+table+" (id VARCHAR(36) PRIMARY KEY)")
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			for i, commit := range []bool{true, false} {
				tx, err := b.Begin(ctx)
				if err != nil {
					t.Fatal(err)
				}
				id := reliar.NewMessageID()
				exec(tx, "INSERT INTO "+table+" (id) VALUES ("+d.Bind(1)+")", id.String())
				out := reliar.NewMsg(placed{OrderID: id.String()})
				out.ID = id
				if _, err := tx.Enqueue(ctx, out); err != nil {
					t.Fatalf("enqueue %d: %v", i, err)
				}
				if commit {
					err = tx.Commit(ctx)
				} else {
					err = tx.Rollback(ctx)
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := tx.Rollback(ctx); err != nil {
					t.Fatalf("Rollback after the end: %v", err)
				}
			}
			store, err := b.Store(ctx)
			if err != nil {
				t.Fatal(err)
			}
			batch, err := store.Acquire(ctx, outboxdriver.AcquireRequest{Worker: "t", BatchSize: 10, Lease: time.Minute, MaxClaims: 5})
			if err != nil {
				t.Fatal(err)
			}
			if len(batch.Records) != 1 || batch.Records[0].Envelope.MessageType != "orders.placed" {
				t.Fatalf("claimed %+v, want the one committed message", batch.Records)
			}
			before, after := time.Now().Add(-time.Minute), time.Now().Add(time.Minute)
			if n, err := b.CountPublished(ctx, before, after); err != nil || n != 0 {
				t.Fatalf("CountPublished before the publish = %d, %v; want 0", n, err)
			}
			if n, err := store.Complete(ctx, []outboxdriver.Lease{batch.Records[0].Lease()}); err != nil || n != 1 {
				t.Fatalf("Complete = %d, %v", n, err)
			}
			if n, err := b.CountPublished(ctx, before, after); err != nil || n != 1 {
				t.Fatalf("CountPublished over the last and next minute = %d, %v; want 1", n, err)
			}
			if n, err := b.CountPublished(ctx, after, after.Add(time.Minute)); err != nil || n != 0 {
				t.Fatalf("CountPublished from a minute ahead = %d, %v; want 0", n, err)
			}
			if n, err := b.CountPublished(ctx, before.Add(-time.Minute), before); err != nil || n != 0 {
				t.Fatalf("CountPublished up to a minute ago = %d, %v; want 0", n, err)
			}
			closed = true
			if err := b.Close(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestScratchSQLiteRemovesTheFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "scratch.db")
	loc, err := Parse("sqlite://" + path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := loc.OpenScratch(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("scratch file left behind: %v", err)
	}
	// An existing file is not scratch.
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loc.OpenScratch(ctx, Options{}); !errors.Is(err, ErrBadURL) {
		t.Fatalf("OpenScratch on an existing file = %v, want ErrBadURL", err)
	}
}

func TestScratchPostgresDropsTheSchema(t *testing.T) {
	ctx := context.Background()
	loc, err := Parse(postgresURL)
	if err != nil {
		t.Fatal(err)
	}
	b, err := loc.OpenScratch(ctx, Options{Schema: "ignored"})
	if err != nil {
		t.Fatal(err)
	}
	pb := b.(*pgBackend)
	if !strings.HasPrefix(pb.schema, "reliar_demo_") {
		t.Fatalf("scratch schema %q", pb.schema)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// A fresh backend checks that the schema is gone.
	other, err := loc.Open(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(ctx)
	var exists bool
	if err := other.(*pgBackend).pool.QueryRow(ctx,
		"SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", pb.schema).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Fatalf("schema %s left behind", pb.schema)
	}
}

func TestOpenErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tests := []struct {
		name    string
		raw     string
		opts    Options
		wantIs  error  // nil: a run-time error, not bad input
		wantMsg string // substring
	}{
		{"postgres unreachable", "postgres://u:s3cret@127.0.0.1:1/test?connect_timeout=2", Options{}, nil, "connect to postgres://u:xxxxx@127.0.0.1:1/test"},
		{"postgres bad schema", postgresURL, Options{Schema: "a-b"}, ErrBadOption, "invalid schema"},
		{"sqlite schema", "sqlite://" + filepath.Join(t.TempDir(), "x.db"), Options{Schema: "s"}, ErrBadOption, "no schemas"},
		{"sqlite missing directory", "sqlite:///nonexistent-dir-for-reliar/x.db", Options{}, nil, "sqlitestore"},
		{"mysql unreachable", "mysql://root:s3cret@127.0.0.1:1/test?timeout=2s", Options{}, nil, "connect to mysql://root:xxxxx@127.0.0.1:1/test"},
		{"mysql schema", mysqlURL, Options{Schema: "s"}, ErrBadOption, "drop --schema"},
		{"mysql async commit", mysqlURL, Options{AsyncCommit: true}, ErrBadOption, "drop --async-commit"},
		{"mysql without database", "mysql://root@127.0.0.1:3306", Options{}, ErrBadURL, "no database name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := Parse(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			b, err := loc.Open(ctx, tt.opts)
			if err == nil {
				_ = b.Close(ctx)
				t.Fatal("Open succeeded")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Fatalf("Open = %v, want %v", err, tt.wantIs)
			}
			if tt.wantIs == nil && (errors.Is(err, ErrBadURL) || errors.Is(err, ErrBadOption)) {
				t.Fatalf("Open = %v, want a run-time error", err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %q lacks %q", err, tt.wantMsg)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("error leaks the password: %q", err)
			}
		})
	}
}

func TestOpenMigrateExistingDatabases(t *testing.T) {
	ctx := context.Background()
	tests := map[string]struct {
		raw    string
		schema string
	}{
		"postgres schema": {postgresURL, "reliar_cli_test_" + randomHex(4)},
		"sqlite file":     {"sqlite://" + filepath.Join(t.TempDir(), "m.db"), ""},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			loc, err := Parse(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			b, err := loc.Open(ctx, Options{Schema: tt.schema})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close(ctx)
			if pb, ok := b.(*pgBackend); ok {
				t.Cleanup(func() {
					_, _ = pb.pool.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pb.quote()+" CASCADE")
				})
			}
			for want := range []int{0, 1} {
				m, err := b.Migrate(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if (want == 0 && m.From != 0) || (want == 1 && m.From != m.To) {
					t.Fatalf("Migrate #%d = %+v", want+1, m)
				}
			}
			if _, err := b.Store(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestMaxConns(t *testing.T) {
	ctx := context.Background()
	tests := map[string]struct {
		raw  string
		cap  func(Backend) int
		want int
	}{
		"sqlite":   {"sqlite://" + filepath.Join(t.TempDir(), "c.db"), func(b Backend) int { return b.(*sqliteBackend).db.Stats().MaxOpenConnections }, 2},
		"postgres": {postgresURL, func(b Backend) int { return int(b.(*pgBackend).pool.Config().MaxConns) }, 2},
		"mysql":    {mysqlURL, func(b Backend) int { return b.(*mysqlBackend).db.Stats().MaxOpenConnections }, 2},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			loc, err := Parse(tt.raw)
			if err != nil {
				t.Fatal(err)
			}
			b, err := loc.Open(ctx, Options{MaxConns: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close(ctx)
			if got := tt.cap(b); got != tt.want {
				t.Fatalf("max connections %d, want %d", got, tt.want)
			}
		})
	}
}
