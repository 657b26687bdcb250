package outboxsqltest

import (
	"database/sql"
	"testing"

	"github.com/reliar/reliar"
)

// UpgradeFromVersion1 checks that a database at schema version 1 (the
// outbox alone, holding one due message) is refused by the store's New
// until Migrate brings it to SchemaVersion (adding the inbox table), and that its message survives the
// upgrade. The caller prepares db so.
func (tg Target[T]) UpgradeFromVersion1(t *testing.T, db *sql.DB) {
	ctx := t.Context()
	_, err := tg.Open(ctx, db)
	if have, want, ok := tg.NotMigrated(err); !ok || have != 1 || want != tg.SchemaVersion {
		t.Fatalf("New on a version 1 database: %v, want Have 1 Want %d", err, tg.SchemaVersion)
	}
	if err := tg.Migrate(ctx, db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	s, err := tg.Open(ctx, db)
	if err != nil {
		t.Fatalf("New after Migrate: %v", err)
	}
	if st, err := s.Stats(ctx); err != nil || st.Due != 1 {
		t.Fatalf("Stats = %+v, %v; want the version 1 message still due", st, err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if first, err := tg.Inbox(s).MarkProcessed(ctx, tx, "billing", reliar.NewMessageID()); !first || err != nil {
		t.Fatalf("MarkProcessed after the upgrade = %v, %v", first, err)
	}
}
