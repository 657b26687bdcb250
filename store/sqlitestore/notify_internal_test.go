package sqlitestore

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkWakeupLook measures one idle look of the wake-up watcher (PRAGMA
// data_version, nothing committed since): its cost per second of watching is
// ns/op × 1s / DefaultWakeupInterval.
func BenchmarkWakeupLook(b *testing.B) {
	ctx := b.Context()
	db, err := Open(filepath.Join(b.TempDir(), "outbox.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := Migrate(ctx, db); err != nil {
		b.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	st, err := readWatch(ctx, conn)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if st, err = look(ctx, conn, st); err != nil {
			b.Fatal(err)
		}
	}
	perLook := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(100*float64(perLook)/float64(DefaultWakeupInterval), "%cpu-idle")
}
