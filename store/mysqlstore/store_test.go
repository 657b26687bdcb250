package mysqlstore_test

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql/outboxsqltest"
	"github.com/reliar/reliar/outbox/storetest"
	"github.com/reliar/reliar/store/mysqlstore"
)

// acquireReq claims up to n rows for a minute.
var acquireReq = outboxsqltest.AcquireRequest

func TestMigrateIsIdempotentAndConcurrent(t *testing.T) {
	cfg := newDatabase(t)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		db := openDB(t, cfg)
		wg.Go(func() { errs <- mysqlstore.Migrate(t.Context(), db) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Migrate: %v", err)
		}
	}
	db := openDB(t, cfg)
	if err := mysqlstore.Migrate(t.Context(), db); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM reliar_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != mysqlstore.SchemaVersion {
		t.Fatalf("%d migrations recorded, want %d", n, mysqlstore.SchemaVersion)
	}
	if _, err := mysqlstore.New(t.Context(), db); err != nil {
		t.Fatalf("New: %v", err)
	}
}

func TestNewRefuses(t *testing.T) {
	cfg := newDatabase(t)
	migrated, _ := newDB(t)
	tests := []struct {
		name    string
		db      func() *openHandle
		opts    []mysqlstore.Option
		wantErr error
	}{
		{name: "unmigrated database", db: func() *openHandle { return &openHandle{openDB(t, cfg)} }, wantErr: mysqlstore.ErrNotMigrated},
		{name: "parseTime off", wantErr: mysqlstore.ErrInvalidOption, db: func() *openHandle {
			c := cfg.Clone()
			c.ParseTime = false
			return &openHandle{openDB(t, c)}
		}},
		{name: "loc not UTC", wantErr: mysqlstore.ErrInvalidOption, db: func() *openHandle {
			c := cfg.Clone()
			c.Loc = time.Local
			return &openHandle{openDB(t, c)}
		}},
		{name: "nil serializer", db: func() *openHandle { return &openHandle{migrated} },
			opts: []mysqlstore.Option{mysqlstore.WithSerializer(nil)}, wantErr: mysqlstore.ErrInvalidOption},
		{name: "zero payload limit", db: func() *openHandle { return &openHandle{migrated} },
			opts: []mysqlstore.Option{mysqlstore.WithMaxPayloadBytes(0)}, wantErr: mysqlstore.ErrInvalidOption},
		{name: "nil logger", db: func() *openHandle { return &openHandle{migrated} },
			opts: []mysqlstore.Option{mysqlstore.WithLogger(nil)}, wantErr: mysqlstore.ErrInvalidOption},
		{name: "nil db", db: func() *openHandle { return &openHandle{} }, wantErr: mysqlstore.ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := mysqlstore.New(t.Context(), tt.db().DB, tt.opts...)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("New: %v, want %v", err, tt.wantErr)
			}
		})
	}
	_, err := mysqlstore.New(t.Context(), openDB(t, cfg))
	var nm *mysqlstore.NotMigratedError
	if !errors.As(err, &nm) || nm.Have != 0 || nm.Want != mysqlstore.SchemaVersion || !reliar.IsPermanent(err) || nm.Error() == "" {
		t.Fatalf("New on an empty database: %v", err)
	}
}

func TestMigrationsFS(t *testing.T) {
	fsys := mysqlstore.Migrations()
	ups, _ := fs.Glob(fsys, "*.up.sql")
	downs, _ := fs.Glob(fsys, "*.down.sql")
	if len(ups) != mysqlstore.SchemaVersion || len(downs) != len(ups) {
		t.Fatalf("up %v down %v", ups, downs)
	}
	// The down migrations, latest first, undo the up ones, which then
	// apply again as they are, each file in one call as golang-migrate
	// sends it (its MySQL driver needs multiStatements=true).
	_, cfg := newDB(t)
	cfg = cfg.Clone()
	cfg.MultiStatements = true
	db := openDB(t, cfg)
	for i := len(downs) - 1; i >= 0; i-- {
		body, err := fs.ReadFile(fsys, downs[i])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(body)); err != nil {
			t.Fatalf("apply %s: %v", downs[i], err)
		}
	}
	for _, table := range []string{"outbox", "processed_messages"} {
		if _, err := db.Exec(`SELECT 1 FROM ` + table); err == nil {
			t.Fatalf("%s still exists after the down migrations", table)
		}
	}
	for _, name := range ups {
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(string(body)); err != nil {
			t.Fatalf("apply %s: %v", name, err)
		}
	}
}

// A database at version 1 (the outbox alone) is refused by New until
// Migrate adds the inbox table; its messages survive the upgrade.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := t.Context()
	db := openDB(t, newDatabase(t))
	v1, err := fs.ReadFile(mysqlstore.Migrations(), "0001_outbox.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		string(v1),
		`CREATE TABLE reliar_migrations (version INT NOT NULL PRIMARY KEY, name VARCHAR(255) NOT NULL, applied_at DATETIME(6) NOT NULL)`,
		`INSERT INTO reliar_migrations VALUES (1, '0001_outbox.up.sql', UTC_TIMESTAMP(6))`,
		`INSERT INTO outbox (id, message_type, payload) VALUES ('0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', 'kept', '{}')`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	target.UpgradeFromVersion1(t, db)
}

// A schema problem (here the table is gone) is a permanent error for every
// operation, so the dispatcher stops instead of retrying forever.
func TestSchemaErrorsArePermanent(t *testing.T) { target.SchemaErrorsArePermanent(t) }

func TestInvalidRequests(t *testing.T) {
	s := newStore(t)
	tests := []outboxdriver.AcquireRequest{
		{Worker: "w", BatchSize: 1},
		{Worker: "w", BatchSize: 1, Lease: time.Minute, Ordering: outboxdriver.PerKey},
	}
	for _, req := range tests {
		if _, err := s.Acquire(t.Context(), req); !errors.Is(err, mysqlstore.ErrInvalidRequest) || !reliar.IsPermanent(err) {
			t.Errorf("Acquire(%+v): %v, want ErrInvalidRequest", req, err)
		}
	}
	if b, err := s.Acquire(t.Context(), outboxdriver.AcquireRequest{}); err != nil || b.Len() != 0 {
		t.Errorf("Acquire with no batch size: %+v, %v", b, err)
	}
}

// Several handles claiming at once skip each other's locked rows: every row
// is claimed exactly once.
func TestConcurrentClaims(t *testing.T) {
	ctx := t.Context()
	db, cfg := newDB(t)
	first, err := mysqlstore.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 300
	if err := enqueue(ctx, first, newMsgs(rows)...); err != nil {
		t.Fatal(err)
	}
	second, err := mysqlstore.New(ctx, openDB(t, cfg))
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		claimed = map[reliar.MessageID]int{}
		wg      sync.WaitGroup
	)
	errs := make(chan error, 4)
	for i, s := range []*mysqlstore.Store{first, second, first, second} {
		wg.Go(func() {
			errs <- func() error {
				for {
					b, err := s.Acquire(ctx, outboxdriver.AcquireRequest{Worker: fmt.Sprint("w", i), BatchSize: 9, Lease: time.Minute})
					if err != nil || b.Len() == 0 {
						return err
					}
					leases := make([]outboxdriver.Lease, len(b.Records))
					mu.Lock()
					for j, r := range b.Records {
						claimed[r.Envelope.ID]++
						leases[j] = r.Lease()
					}
					mu.Unlock()
					if n, err := s.Complete(ctx, leases); err != nil || n != int64(len(leases)) {
						return fmt.Errorf("Complete: %d of %d, %v", n, len(leases), err)
					}
				}
			}()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(claimed) != rows {
		t.Fatalf("%d rows claimed, want %d", len(claimed), rows)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Fatalf("row %s claimed %d times", id, n)
		}
	}
}

// An open claim-like transaction holding row locks does not block the
// application's inserts: claims run in READ COMMITTED and take no gap locks.
func TestClaimDoesNotBlockInserts(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	if err := enqueue(ctx, s, newMsgs(3)...); err != nil {
		t.Fatal(err)
	}
	// Another store's claims skip the rows an open transaction locked.
	tx, err := s.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SET SESSION innodb_lock_wait_timeout = 2`); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `SELECT id FROM outbox ORDER BY sequence LIMIT 1 FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	b, err := s.Acquire(ctx, acquireReq(10))
	if err != nil || len(b.Records) != 2 {
		t.Fatalf("Acquire beside a locked row: %d records, %v; want the 2 unlocked rows", len(b.Records), err)
	}
	if err := enqueue(ctx, s, newMsgs(1)...); err != nil {
		t.Fatalf("Enqueue beside open locks: %v", err)
	}
}

// openHandle lets a table of cases name a possibly nil handle.
type openHandle struct{ DB *sql.DB }

// Ids that another program wrote in upper case (or without hyphens) are
// stored so that outcome writes find them.
func TestForeignIDs(t *testing.T) { target.ForeignIDs(t) }

// A database at version 2 that already holds rows with upper-case ids is
// brought to version 3 with those rows normalised, so that they are
// published once and completed.
func TestMigrateNormalisesStoredUpperCaseIDs(t *testing.T) {
	ctx := t.Context()
	db, _ := newDB(t)
	down, err := fs.ReadFile(mysqlstore.Migrations(), "0003_outbox_canonical_ids.down.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{string(down), `DELETE FROM reliar_migrations WHERE version = 3`} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	id := reliar.NewMessageID()
	if _, err := db.ExecContext(ctx, `INSERT INTO outbox (id, message_type, payload) VALUES (?, 'x', '{}')`,
		strings.ToUpper(id.String())); err != nil {
		t.Fatal(err)
	}
	if err := mysqlstore.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	s, err := mysqlstore.New(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Acquire(ctx, acquireReq(10))
	if err != nil || len(b.Records) != 1 || b.Records[0].Envelope.ID != id {
		t.Fatalf("Acquire = %+v, %v; want the row", b, err)
	}
	if n, err := s.Complete(ctx, []outboxdriver.Lease{b.Records[0].Lease()}); err != nil || n != 1 {
		t.Fatalf("Complete = %d, %v; want 1", n, err)
	}
}

// The differential test: random operations on the store and on memstore,
// compared step by step (storetest.Differential).
func TestDifferential(t *testing.T) {
	storetest.Differential(t, func(t *testing.T) storetest.Harness { return target.Harness(newStore(t)) },
		storetest.DifferentialOptions{Steps: 3000})
}
