package rawsql

import (
	"strings"
	"testing"

	"github.com/reliar/reliar/bench/internal/harness/harnesstest"
)

func TestLoops(t *testing.T) {
	for _, l := range []Loop{Pinned(), FourConns(), PipelinedLoop(), Minimal()} {
		t.Run(l.Name, func(t *testing.T) {
			t.Parallel()
			harnesstest.Check(t, l.System(), true)
		})
	}
}

func TestValuesSQL(t *testing.T) {
	got := valuesSQL(2)
	want := "INSERT INTO raw_outbox (id, message_type, payload) VALUES ($1, $2, $3), ($4, $5, $6)"
	if got != want {
		t.Fatalf("valuesSQL(2) = %q\nwant          %q", got, want)
	}
	if n := strings.Count(valuesSQL(100), "("); n != 101 {
		t.Fatalf("valuesSQL(100) has %d row groups and the column list, want 101 parentheses", n)
	}
}
