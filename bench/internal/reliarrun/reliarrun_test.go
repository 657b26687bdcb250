package reliarrun

import (
	"context"
	"slices"
	"testing"

	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/harness/harnesstest"
	"github.com/reliar/reliar/bench/internal/pgenv"
)

func TestVariants(t *testing.T) {
	systems := []harness.System{SQLite().System(), SQLiteDemo().System(), SQLiteOneConn().System()}
	for _, v := range append([]Variant{Defaults(), DefaultsBatch(), Batch512()}, Options()...) {
		systems = append(systems, v.System())
	}
	for _, sys := range systems {
		t.Run(sys.Name, func(t *testing.T) {
			t.Parallel()
			harnesstest.Check(t, sys, false)
		})
	}
}

// TestFillfactor checks that the fill factor variants change the table the
// store writes to.
func TestFillfactor(t *testing.T) {
	ctx := t.Context()
	env, drop, err := pgenv.Fresh(ctx, pgenv.DefaultDSN, "fillfactor")
	if err != nil {
		t.Fatal(err)
	}
	defer drop(context.WithoutCancel(ctx))
	tgt, err := Fillfactor(100).System().Open(ctx, env)
	if err != nil {
		t.Fatal(err)
	}
	defer tgt.Close(ctx)
	var opts []string
	if err := tgt.(*target).pool.QueryRow(ctx, `SELECT reloptions FROM pg_class WHERE oid = 'outbox'::regclass`).Scan(&opts); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(opts, "fillfactor=100") {
		t.Fatalf("outbox options %q, want fillfactor=100", opts)
	}
}
