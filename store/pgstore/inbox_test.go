package pgstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/inbox/inboxtest"
)

func TestInboxConformance(t *testing.T) {
	t.Parallel()
	inboxtest.Run(t, func(t *testing.T) inboxtest.Harness[pgx.Tx] {
		s := newInboxStore(t)
		ctx := t.Context()
		return inboxtest.Harness[pgx.Tx]{
			Marker:   s.Inbox(),
			Begin:    func(ctx context.Context) (pgx.Tx, error) { return sharedPool.Begin(ctx) },
			Commit:   func(tx pgx.Tx) error { return tx.Commit(ctx) },
			Rollback: func(tx pgx.Tx) error { return tx.Rollback(ctx) },
			Effect: func(ctx context.Context, tx pgx.Tx, v string) error {
				_, err := tx.Exec(ctx, s.n.render(`INSERT INTO {{schema}}.effects (value) VALUES ($1)`), v)
				return err
			},
			Effects: func(ctx context.Context) ([]string, error) { return effectValues(ctx, s) },
			Advance: func(ctx context.Context, d time.Duration) error { return ageRecords(ctx, s, d) },
		}
	})
}

func TestInboxSQLConformance(t *testing.T) {
	t.Parallel()
	inboxtest.Run(t, func(t *testing.T) inboxtest.Harness[*sql.Tx] {
		s := newInboxStore(t)
		db := stdlib.OpenDBFromPool(sharedPool)
		t.Cleanup(func() { _ = db.Close() })
		return inboxtest.Harness[*sql.Tx]{
			Marker:   s.InboxSQL(),
			Begin:    func(ctx context.Context) (*sql.Tx, error) { return db.BeginTx(ctx, nil) },
			Commit:   func(tx *sql.Tx) error { return tx.Commit() },
			Rollback: func(tx *sql.Tx) error { return tx.Rollback() },
			Effect: func(ctx context.Context, tx *sql.Tx, v string) error {
				_, err := tx.ExecContext(ctx, s.n.render(`INSERT INTO {{schema}}.effects (value) VALUES ($1)`), v)
				return err
			},
			Effects: func(ctx context.Context) ([]string, error) { return effectValues(ctx, s) },
			Advance: func(ctx context.Context, d time.Duration) error { return ageRecords(ctx, s, d) },
		}
	})
}

// newInboxStore is a store on a fresh schema that also holds an effects
// table, the consumer's business table in the tests.
func newInboxStore(t *testing.T) *Store {
	t.Helper()
	s := newStore(t)
	if _, err := sharedPool.Exec(t.Context(), s.n.render(`CREATE TABLE {{schema}}.effects (value text NOT NULL)`)); err != nil {
		t.Fatal(err)
	}
	return s
}

func effectValues(ctx context.Context, s *Store) ([]string, error) {
	rows, err := sharedPool.Query(ctx, s.n.render(`SELECT value FROM {{schema}}.effects`))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// ageRecords makes every processed record look d older.
func ageRecords(ctx context.Context, s *Store, d time.Duration) error {
	_, err := sharedPool.Exec(ctx, s.n.render(`UPDATE {{schema}}.processed_messages
SET processed_at = processed_at - $1::int8 * interval '1 microsecond'`), micros(d))
	return err
}

// markTx is one consumer transaction, of either driver, as the tests below
// drive it.
type markTx struct {
	mark func(ctx context.Context, consumer string, id reliar.MessageID) (bool, error)
	end  func(commit bool) error
}

// transactionKinds begin a consumer transaction on pool through pgx or
// through database/sql, at the given isolation level.
var transactionKinds = []struct {
	name  string
	begin func(t *testing.T, s *Store, pool *pgxpool.Pool, iso sql.IsolationLevel) markTx
}{
	{"pgx", func(t *testing.T, s *Store, pool *pgxpool.Pool, iso sql.IsolationLevel) markTx {
		levels := map[sql.IsolationLevel]pgx.TxIsoLevel{
			sql.LevelDefault: "", sql.LevelRepeatableRead: pgx.RepeatableRead, sql.LevelSerializable: pgx.Serializable,
		}
		tx, err := pool.BeginTx(t.Context(), pgx.TxOptions{IsoLevel: levels[iso]})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
		return markTx{
			mark: func(ctx context.Context, c string, id reliar.MessageID) (bool, error) {
				return s.Inbox().MarkProcessed(ctx, tx, c, id)
			},
			end: func(commit bool) error {
				if commit {
					return tx.Commit(context.Background())
				}
				return tx.Rollback(context.Background())
			},
		}
	}},
	{"database/sql", func(t *testing.T, s *Store, pool *pgxpool.Pool, iso sql.IsolationLevel) markTx {
		db := stdlib.OpenDBFromPool(pool)
		t.Cleanup(func() { _ = db.Close() })
		tx, err := db.BeginTx(t.Context(), &sql.TxOptions{Isolation: iso})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tx.Rollback() })
		return markTx{
			mark: func(ctx context.Context, c string, id reliar.MessageID) (bool, error) {
				return s.InboxSQL().MarkProcessed(ctx, tx, c, id)
			},
			end: func(commit bool) error {
				if commit {
					return tx.Commit()
				}
				return tx.Rollback()
			},
		}
	}},
}

// markInOwnTx records (consumer, id) in a committed pgx transaction.
func markInOwnTx(t *testing.T, s *Store, consumer string, id reliar.MessageID) bool {
	t.Helper()
	var first bool
	err := pgx.BeginFunc(t.Context(), sharedPool, func(tx pgx.Tx) error {
		var err error
		first, err = s.Inbox().MarkProcessed(t.Context(), tx, consumer, id)
		return err
	})
	if err != nil {
		t.Fatalf("MarkProcessed: %v", err)
	}
	return first
}

// awaitLockWait waits until a backend of application app waits on a lock.
func awaitLockWait(t *testing.T, app string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		err := sharedPool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
WHERE application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the second record never waited for the first")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type markResult struct {
	first bool
	err   error
}

// markConcurrently starts waiter's mark of (consumer, id) in a goroutine
// whose result the returned channel delivers; the goroutine ends once the
// mark returns.
func markConcurrently(ctx context.Context, waiter markTx, consumer string, id reliar.MessageID) <-chan markResult {
	done := make(chan markResult, 1)
	go func() {
		first, err := waiter.mark(ctx, consumer, id)
		done <- markResult{first, err}
	}()
	return done
}

// A second record of a message waits for the transaction holding the first:
// it reports a duplicate when that transaction commits and records the
// message when it rolls back, without an error in either case.
func TestInboxConcurrentRecordWaitsForTheFirst(t *testing.T) {
	t.Parallel()
	for _, kind := range transactionKinds {
		for _, tt := range []struct {
			name      string
			commit    bool
			wantFirst bool
		}{
			{"first commits", true, false},
			{"first rolls back", false, true},
		} {
			t.Run(kind.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				s := newInboxStore(t)
				pool, app := dedicatedPool(t, 2)
				ctx := t.Context()
				id := reliar.NewMessageID()
				holder := kind.begin(t, s, pool, sql.LevelDefault)
				if first, err := holder.mark(ctx, "billing", id); !first || err != nil {
					t.Fatalf("first mark = %v, %v", first, err)
				}
				waiter := kind.begin(t, s, pool, sql.LevelDefault)
				done := markConcurrently(ctx, waiter, "billing", id)
				awaitLockWait(t, app)
				if err := holder.end(tt.commit); err != nil {
					t.Fatal(err)
				}
				got := <-done
				if got.err != nil || got.first != tt.wantFirst {
					t.Fatalf("waiting mark = %v, %v; want %v and no error", got.first, got.err, tt.wantFirst)
				}
				if err := waiter.end(true); err != nil {
					t.Fatalf("commit after the waiting mark: %v", err)
				}
				if markInOwnTx(t, s, "billing", id) {
					t.Fatal("no record committed")
				}
			})
		}
	}
}

// Above READ COMMITTED, a record committed after the waiter's snapshot is a
// transient serialization failure; the retried delivery finds the record.
func TestInboxConcurrentRecordAboveReadCommitted(t *testing.T) {
	t.Parallel()
	for _, kind := range transactionKinds {
		for _, iso := range []sql.IsolationLevel{sql.LevelRepeatableRead, sql.LevelSerializable} {
			t.Run(kind.name+"/"+iso.String(), func(t *testing.T) {
				t.Parallel()
				s := newInboxStore(t)
				pool, app := dedicatedPool(t, 2)
				ctx := t.Context()
				id := reliar.NewMessageID()
				holder := kind.begin(t, s, pool, sql.LevelDefault)
				if first, err := holder.mark(ctx, "billing", id); !first || err != nil {
					t.Fatalf("first mark = %v, %v", first, err)
				}
				waiter := kind.begin(t, s, pool, iso)
				done := markConcurrently(ctx, waiter, "billing", id)
				awaitLockWait(t, app)
				if err := holder.end(true); err != nil {
					t.Fatal(err)
				}
				got := <-done
				var pgErr *pgconn.PgError
				if !errors.As(got.err, &pgErr) || pgErr.Code != "40001" || reliar.IsPermanent(got.err) {
					t.Fatalf("waiting mark = %v, %v; want a transient serialization failure", got.first, got.err)
				}
				_ = waiter.end(false)
				retry := kind.begin(t, s, pool, iso)
				if first, err := retry.mark(ctx, "billing", id); first || err != nil {
					t.Fatalf("retried mark = %v, %v; want a duplicate", first, err)
				}
			})
		}
	}
}

// Marking a message twice in one transaction reports the second as a
// duplicate; consumer names of up to 200 bytes of UTF-8 are kept as given.
func TestInboxMarksOncePerTransaction(t *testing.T) {
	t.Parallel()
	s := newInboxStore(t)
	for _, kind := range transactionKinds {
		for _, consumer := range []string{"billing", "Billing", "café-ünïcode", strings.Repeat("c", 200), "with space"} {
			tx := kind.begin(t, s, sharedPool, sql.LevelDefault)
			id := reliar.NewMessageID()
			for i, want := range []bool{true, false} {
				got, err := tx.mark(t.Context(), consumer, id)
				if err != nil || got != want {
					t.Fatalf("%s, consumer %q, mark %d = %v, %v; want %v", kind.name, consumer, i+1, got, err, want)
				}
			}
			if err := tx.end(true); err != nil {
				t.Fatal(err)
			}
			var stored string
			if err := sharedPool.QueryRow(t.Context(), s.n.render(`SELECT consumer FROM {{schema}}.processed_messages WHERE message_id = $1`), id.String()).Scan(&stored); err != nil || stored != consumer {
				t.Fatalf("stored consumer %q (%v), want %q", stored, err, consumer)
			}
		}
	}
}

// Invalid input is refused with a permanent error before anything is sent,
// so the caller's transaction stays usable.
func TestInboxRefusesBadInput(t *testing.T) {
	t.Parallel()
	s := newInboxStore(t)
	ctx := t.Context()
	tests := []struct {
		name     string
		consumer string
		id       reliar.MessageID
	}{
		{"empty consumer", "", reliar.NewMessageID()},
		{"control byte in consumer", "bill\ning", reliar.NewMessageID()},
		{"NUL in consumer", "bill\x00ing", reliar.NewMessageID()},
		{"consumer too long", strings.Repeat("c", 201), reliar.NewMessageID()},
		{"consumer not UTF-8", "caf\xe9", reliar.NewMessageID()},
		{"nil message id", "billing", reliar.MessageID{}},
	}
	for _, kind := range transactionKinds {
		tx := kind.begin(t, s, sharedPool, sql.LevelDefault)
		for _, tt := range tests {
			first, err := tx.mark(ctx, tt.consumer, tt.id)
			if first || err == nil || !reliar.IsPermanent(err) {
				t.Errorf("%s, %s: MarkProcessed = %v, %v; want a permanent error", kind.name, tt.name, first, err)
			}
		}
		if first, err := tx.mark(ctx, "billing", reliar.NewMessageID()); !first || err != nil {
			t.Fatalf("%s: the transaction is unusable after refused input: %v, %v", kind.name, first, err)
		}
		if err := tx.end(false); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Inbox().MarkProcessed(ctx, nil, "billing", reliar.NewMessageID()); err == nil {
		t.Error("Inbox.MarkProcessed accepted a nil transaction")
	}
	if _, err := s.InboxSQL().MarkProcessed(ctx, nil, "billing", reliar.NewMessageID()); err == nil {
		t.Error("InboxSQL.MarkProcessed accepted a nil transaction")
	}
	purges := map[string]func(context.Context, time.Duration, int) (int64, error){
		"Inbox":    s.Inbox().PurgeProcessed,
		"InboxSQL": s.InboxSQL().PurgeProcessed,
	}
	for name, purge := range purges {
		for _, retention := range []time.Duration{0, -time.Hour} {
			if _, err := purge(ctx, retention, 10); !reliar.IsPermanent(err) {
				t.Errorf("%s.PurgeProcessed(retention %v) = %v, want a permanent error", name, retention, err)
			}
		}
	}
}

func TestInboxSQLRefusesOtherDrivers(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	db := sql.OpenDB(fakeConnector{})
	defer db.Close()
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	first, err := s.InboxSQL().MarkProcessed(t.Context(), tx, "billing", reliar.NewMessageID())
	if first || !errors.Is(err, ErrNotPgxDriver) {
		t.Fatalf("MarkProcessed on another driver = %v, %v; want ErrNotPgxDriver", first, err)
	}
}

// The purge never deletes a record younger than the retention, deletes the
// oldest first, and stops at its limit; a limit of 0 means the default.
func TestInboxPurgeRespectsRetentionAndLimit(t *testing.T) {
	t.Parallel()
	s := newInboxStore(t)
	ctx := t.Context()
	const retention = 24 * time.Hour
	ages := map[string]time.Duration{
		"young":       retention - time.Minute,
		"just-young":  retention - time.Second,
		"just-old":    retention + time.Second,
		"old":         retention + time.Hour,
		"oldest":      10 * retention,
		"brand-new":   0,
		"other-old":   retention + 2*time.Hour,
		"other-young": time.Hour,
	}
	ids := make(map[string]reliar.MessageID, len(ages))
	for name, age := range ages {
		ids[name] = reliar.NewMessageID()
		consumer := "billing"
		if strings.HasPrefix(name, "other") {
			consumer = "shipping"
		}
		if _, err := sharedPool.Exec(ctx, s.n.render(`INSERT INTO {{schema}}.processed_messages (consumer, message_id, processed_at)
VALUES ($1, $2, now() - $3::int8 * interval '1 microsecond')`), consumer, ids[name].String(), micros(age)); err != nil {
			t.Fatal(err)
		}
	}
	remaining := func() map[string]bool {
		t.Helper()
		rows, err := sharedPool.Query(ctx, s.n.render(`SELECT message_id::text FROM {{schema}}.processed_messages`))
		if err != nil {
			t.Fatal(err)
		}
		kept, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		out := make(map[string]bool)
		for name, id := range ids {
			for _, k := range kept {
				if k == id.String() {
					out[name] = true
				}
			}
		}
		return out
	}

	for _, step := range []struct {
		limit   int
		deleted int64
		gone    []string
	}{
		{1, 1, []string{"oldest"}},
		{2, 2, []string{"oldest", "other-old", "old"}},
		{0, 1, []string{"oldest", "other-old", "old", "just-old"}},
		{100, 0, []string{"oldest", "other-old", "old", "just-old"}},
	} {
		n, err := s.Inbox().PurgeProcessed(ctx, retention, step.limit)
		if err != nil || n != step.deleted {
			t.Fatalf("PurgeProcessed(limit %d) = %d, %v; want %d", step.limit, n, err, step.deleted)
		}
		left := remaining()
		for name := range ages {
			wantGone := strings.Contains(" "+strings.Join(step.gone, " ")+" ", " "+name+" ")
			if left[name] == wantGone {
				t.Fatalf("after purging %d with limit %d: record %q present = %v", n, step.limit, name, left[name])
			}
		}
	}
}

// Once the table is gone, both operations fail permanently with the
// driver's error reachable.
func TestInboxMissingTableIsPermanent(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	if _, err := sharedPool.Exec(ctx, s.n.render(`DROP TABLE {{schema}}.processed_messages`)); err != nil {
		t.Fatal(err)
	}
	var pgErr *pgconn.PgError
	for _, kind := range transactionKinds {
		tx := kind.begin(t, s, sharedPool, sql.LevelDefault)
		_, err := tx.mark(ctx, "billing", reliar.NewMessageID())
		if !reliar.IsPermanent(err) || !errors.As(err, &pgErr) || pgErr.Code != "42P01" {
			t.Errorf("%s: MarkProcessed = %v, want a permanent undefined-table error", kind.name, err)
		}
		_ = tx.end(false)
	}
	if _, err := s.Inbox().PurgeProcessed(ctx, time.Hour, 10); !reliar.IsPermanent(err) || !errors.As(err, &pgErr) {
		t.Errorf("PurgeProcessed = %v, want a permanent driver error", err)
	}
}

// On a table of many recent records and few old ones, the purge walks the
// processed_at index instead of scanning the table.
func TestInboxPurgeUsesProcessedAtIndex(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	fill := s.n.render(`INSERT INTO {{schema}}.processed_messages (consumer, message_id, processed_at)
SELECT 'consumer-' || (g % 4), gen_random_uuid(), now() - (g || ' seconds')::interval
FROM generate_series(1, 50000) AS g`)
	if _, err := sharedPool.Exec(ctx, fill); err != nil {
		t.Fatal(err)
	}
	if _, err := sharedPool.Exec(ctx, s.n.render(`ANALYZE {{schema}}.processed_messages`)); err != nil {
		t.Fatal(err)
	}
	plan := explain(t, sharedPool, "EXPLAIN "+s.sql.purgeProcessed, micros(12*time.Hour), 1000)
	if !strings.Contains(plan, "processed_messages_processed_at_idx") || strings.Contains(plan, "Seq Scan") {
		t.Errorf("the purge does not walk processed_messages_processed_at_idx:\n%s", plan)
	}
	n, err := s.Inbox().PurgeProcessed(ctx, 12*time.Hour, 0)
	if err != nil || n != defaultPurgeBatch {
		t.Fatalf("PurgeProcessed = %d, %v; want the default batch of %d", n, err, defaultPurgeBatch)
	}
}

// BenchmarkInboxProcess is one delivery per transaction through
// inbox.Process, a first delivery then its duplicate, with a one-row
// business effect: what the inbox adds to a consumer's transaction.
func BenchmarkInboxProcess(b *testing.B) {
	s := newStore(b)
	ctx := b.Context()
	if _, err := sharedPool.Exec(ctx, s.n.render(`CREATE TABLE {{schema}}.effects (value text NOT NULL)`)); err != nil {
		b.Fatal(err)
	}
	effect := s.n.render(`INSERT INTO {{schema}}.effects (value) VALUES ($1)`)
	marker := s.Inbox()
	deliver := func(id reliar.MessageID) error {
		return pgx.BeginFunc(ctx, sharedPool, func(tx pgx.Tx) error {
			err := inbox.Process(ctx, marker, tx, "billing", id, func(ctx context.Context) error {
				_, err := tx.Exec(ctx, effect, "v")
				return err
			})
			if errors.Is(err, inbox.ErrAlreadyProcessed) {
				return nil
			}
			return err
		})
	}
	b.ReportAllocs()
	for b.Loop() {
		id := reliar.NewMessageID()
		if err := deliver(id); err != nil {
			b.Fatal(err)
		}
		if err := deliver(id); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(2*b.N), "ns/delivery")
}
