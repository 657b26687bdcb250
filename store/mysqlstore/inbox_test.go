package mysqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/inbox/inboxtest"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql/outboxsqltest"
	"github.com/reliar/reliar/store/mysqlstore"
)

// TestInboxConformance runs the inbox contract's suite, each subtest on a
// fresh database of its own, with the driver's default DSN settings and
// with clientFoundRows=true, which changes what UPDATEs report as affected.
func TestInboxConformance(t *testing.T) {
	for _, tt := range []struct {
		name            string
		clientFoundRows bool
	}{
		{"default", false},
		{"clientFoundRows", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inboxtest.Run(t, func(t *testing.T) inboxtest.Harness[*sql.Tx] {
				return inboxHarness(t, tt.clientFoundRows)
			})
		})
	}
}

// inboxHarness is the inboxtest harness of a fresh store, with an effects
// table as the consumer's business table.
func inboxHarness(t *testing.T, clientFoundRows bool) inboxtest.Harness[*sql.Tx] {
	s := newStoreWith(t, clientFoundRows)
	createEffects(t, s.DB())
	return outboxsqltest.InboxHarness(s.DB(), s.Inbox(), `UPDATE processed_messages
		SET processed_at = processed_at - INTERVAL ? MICROSECOND`)
}

// createEffects creates the consumer's business table.
func createEffects(t testing.TB, db *sql.DB) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), `CREATE TABLE effects (
		n     BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
		value VARCHAR(255) NOT NULL) ENGINE = InnoDB`); err != nil {
		t.Fatal(err)
	}
}

// insertEffect writes a business effect in tx.
var insertEffect = outboxsqltest.InsertEffect

// effectValues reads the effects table.
var effectValues = outboxsqltest.EffectValues

// mark records (consumer, id) in a transaction of its own and commits it.
func mark(t *testing.T, in *mysqlstore.Inbox, db *sql.DB, consumer string, id reliar.MessageID) bool {
	t.Helper()
	return outboxsqltest.Mark(t, in, db, consumer, id)
}

func TestInboxRefusesBadInput(t *testing.T) { target.InboxRefusesBadInput(t) }

// Marking a message twice in one transaction reports the second as a
// duplicate and leaves the transaction usable; consumer names compare byte
// for byte (case too), up to 200 bytes of UTF-8.
func TestInboxMarksOncePerTransaction(t *testing.T) {
	s := newStore(t)
	in := s.Inbox()
	createEffects(t, s.DB())
	consumers := []string{"billing", "Billing", "caf\xc3\xa9", strings.Repeat("é", 100)}
	id := reliar.NewMessageID()
	for _, consumer := range consumers {
		tx, err := s.DB().BeginTx(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []bool{true, false} {
			got, err := in.MarkProcessed(t.Context(), tx, consumer, id)
			if err != nil || got != want {
				t.Fatalf("consumer %q mark %d = %v, %v; want %v", consumer, i, got, err, want)
			}
		}
		if err := insertEffect(t.Context(), tx, "after the duplicate"); err != nil {
			t.Fatalf("the transaction is unusable after a duplicate: %v", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	for _, consumer := range consumers {
		if mark(t, in, s.DB(), consumer, id) {
			t.Fatalf("consumer %q: committed record not found", consumer)
		}
	}
	if got, err := effectValues(t.Context(), s.DB()); err != nil || len(got) != len(consumers) {
		t.Fatalf("effects %v, %v; want %d", got, err, len(consumers))
	}
}

// The purge keeps every record younger than the retention, deletes the
// older ones in bounded batches, and a limit that is not positive means the
// default batch.
func TestInboxPurge(t *testing.T) {
	s := newStore(t)
	db := s.DB()
	in := s.Inbox()
	ids := make([]reliar.MessageID, 4)
	for i := range ids {
		ids[i] = reliar.NewMessageID()
		mark(t, in, db, "billing", ids[i])
	}
	// ids[0] and ids[1] are a day older than the retention, ids[2] a
	// second younger, ids[3] new.
	for i, age := range []time.Duration{25 * time.Hour, 25 * time.Hour, time.Hour - time.Second} {
		if _, err := db.Exec(`UPDATE processed_messages SET processed_at = processed_at - INTERVAL ? MICROSECOND
			WHERE message_id = ?`, age.Microseconds(), ids[i].String()); err != nil {
			t.Fatal(err)
		}
	}
	for _, step := range []struct {
		limit int
		want  int64
	}{{1, 1}, {0, 1}, {0, 0}} {
		n, err := in.PurgeProcessed(t.Context(), time.Hour, step.limit)
		if err != nil || n != step.want {
			t.Fatalf("PurgeProcessed(limit %d) = %d, %v; want %d", step.limit, n, err, step.want)
		}
	}
	for i, wantFirst := range []bool{true, true, false, false} {
		if got := mark(t, in, db, "billing", ids[i]); got != wantFirst {
			t.Errorf("record %d: first = %v, want %v", i, got, wantFirst)
		}
	}
}

// A missing table is a permanent error of both operations.
func TestInboxSchemaErrorsArePermanent(t *testing.T) { target.InboxSchemaErrorsArePermanent(t) }

// outcome is what one waiting delivery saw.
type outcome struct {
	first bool
	err   error
}

// TestInboxWaitersBehindAnUncommittedRecord makes several deliveries of one
// message wait on the record another transaction holds, then ends that
// transaction. After a commit every waiter sees a duplicate. After a rollback
// exactly one waiter records the message; InnoDB may pick others as deadlock
// victims (their whole transaction rolled back, reported as ErrDeadlock) and
// the rest see the winner's record. Nothing else may leak out.
func TestInboxWaitersBehindAnUncommittedRecord(t *testing.T) {
	const waiters = 6
	for _, tt := range []struct {
		name      string
		isolation sql.IsolationLevel
		commit    bool
	}{
		{"repeatable read, holder commits", sql.LevelRepeatableRead, true},
		{"repeatable read, holder rolls back", sql.LevelRepeatableRead, false},
		{"read committed, holder commits", sql.LevelReadCommitted, true},
		{"read committed, holder rolls back", sql.LevelReadCommitted, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			s := newStore(t)
			db := s.DB()
			db.SetMaxOpenConns(waiters + 2)
			createEffects(t, db)
			in := s.Inbox()
			id := reliar.NewMessageID()
			opts := &sql.TxOptions{Isolation: tt.isolation}

			holder, err := db.BeginTx(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			if first, err := in.MarkProcessed(ctx, holder, "billing", id); !first || err != nil {
				t.Fatalf("holder: %v, %v", first, err)
			}

			results := make(chan outcome, waiters)
			var wg sync.WaitGroup
			for range waiters {
				wg.Go(func() { results <- deliverOnce(ctx, db, opts, in, id) })
			}
			waitForLockWaits(t, db, waiters)
			if tt.commit {
				err = holder.Commit()
			} else {
				err = holder.Rollback()
			}
			if err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			close(results)

			var firsts, dups, deadlocks int
			for r := range results {
				switch {
				case r.err == nil && r.first:
					firsts++
				case r.err == nil:
					dups++
				case errors.Is(r.err, mysqlstore.ErrDeadlock) && !reliar.IsPermanent(r.err):
					deadlocks++
				default:
					t.Errorf("a waiter failed: %v", r.err)
				}
			}
			t.Logf("%d recorded, %d duplicates, %d deadlock victims", firsts, dups, deadlocks)
			wantFirsts := 1
			if tt.commit {
				wantFirsts = 0
				if deadlocks != 0 {
					t.Errorf("%d deadlocks behind a committed record, want none", deadlocks)
				}
			}
			if firsts != wantFirsts || firsts+dups+deadlocks != waiters {
				t.Fatalf("%d waiters recorded the message, want %d", firsts, wantFirsts)
			}
			// A deadlock victim's retry finds the record.
			for range deadlocks {
				if r := deliverOnce(ctx, db, opts, in, id); r.err != nil || r.first {
					t.Fatalf("retry after a deadlock: %v, %v; want a duplicate", r.first, r.err)
				}
			}
			// The holder wrote no effect; the winner, if any, wrote one.
			if got, err := effectValues(ctx, db); err != nil || len(got) != wantFirsts {
				t.Fatalf("effects %v, %v; want %d", got, err, wantFirsts)
			}
		})
	}
}

// deliverOnce processes one delivery of id in its own transaction, writing
// an effect when it is the first.
func deliverOnce(ctx context.Context, db *sql.DB, opts *sql.TxOptions, in *mysqlstore.Inbox, id reliar.MessageID) outcome {
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return outcome{err: err}
	}
	err = inbox.Process(ctx, in, tx, "billing", id, func(ctx context.Context) error {
		return insertEffect(ctx, tx, id.String())
	})
	if errors.Is(err, inbox.ErrAlreadyProcessed) {
		return outcome{err: tx.Commit()}
	}
	if err != nil {
		_ = tx.Rollback()
		return outcome{err: err}
	}
	return outcome{first: true, err: tx.Commit()}
}

// waitForLockWaits waits until n sessions on db's database are running
// the inbox's INSERT: with the record held by an open transaction, they wait
// for its lock. (The processlist, not innodb_trx, which MariaDB caches.)
func waitForLockWaits(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var waiting int
		err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM information_schema.processlist
			WHERE db = DATABASE() AND command <> 'Sleep' AND info LIKE 'INSERT INTO processed_messages%'`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d deliveries wait for the record's lock", waiting, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
