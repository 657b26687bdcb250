package sqliteenv

import (
	"strings"
	"testing"
)

// TestSettings checks that a handle has the store's settings, read back from
// SQLite itself.
func TestSettings(t *testing.T) {
	for _, queued := range []bool{false, true} {
		settings(t, queued)
	}
}

func settings(t *testing.T, queued bool) {
	db, err := Open(t.Context(), t.TempDir(), 0, queued)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	var sync, busy int
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA synchronous`).Scan(&sync); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`PRAGMA busy_timeout`).Scan(&busy); err != nil {
		t.Fatal(err)
	}
	if !strings.EqualFold(mode, "wal") || sync != 2 || busy <= 0 || db.Stats().MaxOpenConnections != DefaultConns {
		t.Fatalf("journal_mode %s, synchronous %d (2 is FULL), busy_timeout %d, max open %d", mode, sync, busy, db.Stats().MaxOpenConnections)
	}
	if _, err := Open(t.Context(), "", 1, queued); err == nil {
		t.Fatal("Open without a directory succeeded")
	}
}
