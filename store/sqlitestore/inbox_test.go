package sqlitestore_test

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/inbox/inboxtest"
	"github.com/reliar/reliar/outbox/outboxdriver/outboxsql/outboxsqltest"
	"github.com/reliar/reliar/store/sqlitestore"
)

// TestInboxConformance runs the inbox contract's suite, each subtest on a
// fresh database file whose handle comes from Open, so that every consumer
// transaction begins with BEGIN IMMEDIATE.
func TestInboxConformance(t *testing.T) {
	inboxtest.Run(t, inboxHarness)
}

// inboxHarness is the inboxtest harness of a fresh store, with an effects
// table as the consumer's business table.
func inboxHarness(t *testing.T) inboxtest.Harness[*sql.Tx] {
	s := newStore(t)
	db := s.DB()
	if _, err := db.ExecContext(t.Context(), `CREATE TABLE effects (value TEXT NOT NULL) STRICT`); err != nil {
		t.Fatal(err)
	}
	return outboxsqltest.InboxHarness(db, s.Inbox(), `UPDATE processed_messages SET processed_at = processed_at - ?`)
}

// effectValues reads the effects table.
var effectValues = outboxsqltest.EffectValues

// mark records (consumer, id) in a transaction of its own and commits it.
func mark(t *testing.T, in *sqlitestore.Inbox, db *sql.DB, consumer string, id reliar.MessageID) bool {
	t.Helper()
	return outboxsqltest.Mark(t, in, db, consumer, id)
}

func TestInboxRefusesBadInput(t *testing.T) { target.InboxRefusesBadInput(t) }

// Marking a message twice in one transaction reports the second as a
// duplicate; any printable UTF-8 up to 200 bytes names a consumer.
func TestInboxMarksOncePerTransaction(t *testing.T) {
	s := newStore(t)
	in := s.Inbox()
	for _, consumer := range []string{"billing", "caf\xc3\xa9", strings.Repeat("c", 200)} {
		tx, err := s.DB().BeginTx(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		id := reliar.NewMessageID()
		for i, want := range []bool{true, false} {
			got, err := in.MarkProcessed(t.Context(), tx, consumer, id)
			if err != nil || got != want {
				t.Fatalf("consumer %q mark %d = %v, %v; want %v", consumer, i, got, err, want)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if mark(t, in, s.DB(), consumer, id) {
			t.Fatalf("consumer %q: committed record not found", consumer)
		}
	}
}

// Records carry the store's clock, and the purge measures retention on it:
// a record exactly as old as the retention is kept, an older one deleted.
func TestInboxPurgeUsesStoreClock(t *testing.T) {
	base := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	now := base
	db, _ := newDB(t)
	s, err := sqlitestore.New(t.Context(), db, sqlitestore.WithClock(func() time.Time { return now }))
	if err != nil {
		t.Fatal(err)
	}
	in := s.Inbox()
	ids := []reliar.MessageID{reliar.NewMessageID(), reliar.NewMessageID()}
	mark(t, in, db, "billing", ids[0])
	now = base.Add(time.Microsecond)
	mark(t, in, db, "billing", ids[1])

	var at int64
	if err := db.QueryRow(`SELECT processed_at FROM processed_messages WHERE message_id = ?`, ids[0].String()).Scan(&at); err != nil {
		t.Fatal(err)
	}
	if got := time.UnixMicro(at).UTC(); !got.Equal(base.Truncate(time.Microsecond)) {
		t.Fatalf("processed_at %v, want the store's clock %v", got, base)
	}

	// At base + retention + 1µs, the first record is older than the
	// retention by 1µs and the second exactly as old.
	now = base.Add(inbox.DefaultRetention + time.Microsecond)
	n, err := in.PurgeProcessed(t.Context(), inbox.DefaultRetention, 0)
	if err != nil || n != 1 {
		t.Fatalf("PurgeProcessed = %d, %v; want 1", n, err)
	}
	if !mark(t, in, db, "billing", ids[0]) {
		t.Fatal("the purged record still blocks its message")
	}
	if mark(t, in, db, "billing", ids[1]) {
		t.Fatal("a record as old as the retention was purged")
	}
}

// A missing table is a permanent error of both operations.
func TestInboxSchemaErrorsArePermanent(t *testing.T) { target.InboxSchemaErrorsArePermanent(t) }
