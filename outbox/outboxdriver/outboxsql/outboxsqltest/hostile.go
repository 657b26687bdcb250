package outboxsqltest

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar/outbox/storetest"
)

// HostileTarget is the storetest.HostileTarget of a fresh store: rows are
// written with one plain INSERT each, times encoded as the store keeps
// them, and edges are the dialect's own, added to storetest.CommonEdges.
func (tg Target[T]) HostileTarget(t testing.TB, edges ...storetest.Edge) storetest.HostileTarget {
	s := tg.New(t)
	db := s.DB()
	return storetest.HostileTarget{
		Store: s,
		Insert: func(ctx context.Context, r storetest.HostileRow) error {
			cols := make([]string, 0, len(r.Columns))
			for c := range r.Columns {
				cols = append(cols, c)
			}
			sort.Strings(cols)
			vals := make([]string, len(cols))
			var args []any
			for i, c := range cols {
				v := r.Columns[c]
				if v.SQL != "" {
					vals[i] = v.SQL
					continue
				}
				vals[i] = "?"
				if tm, ok := v.Arg.(time.Time); ok {
					args = append(args, tg.Times.Encode(tm))
				} else {
					args = append(args, v.Arg)
				}
			}
			_, err := db.ExecContext(ctx, `INSERT INTO outbox (`+strings.Join(cols, ", ")+`) VALUES (`+strings.Join(vals, ", ")+`)`, args...)
			return err
		},
		Rows:  func(ctx context.Context) ([]storetest.FinalRow, error) { return finalRows(ctx, db) },
		Edges: edges,
	}
}

func finalRows(ctx context.Context, db *sql.DB) ([]storetest.FinalRow, error) {
	rows, err := db.QueryContext(ctx, `SELECT id, published_at IS NOT NULL, lease_token IS NOT NULL,
		COALESCE(dead_reason, ''), published_at IS NULL AND dead_at IS NULL FROM outbox`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []storetest.FinalRow
	for rows.Next() {
		var f storetest.FinalRow
		if err := rows.Scan(&f.ID, &f.Published, &f.Leased, &f.DeadReason, &f.Pending); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// HostileRows runs storetest.RunHostile on n rows drawn with a logged seed
// (-storetest.seed reproduces it).
func (tg Target[T]) HostileRows(t *testing.T, n int, edges ...storetest.Edge) {
	seed := storetest.HostileSeed()
	t.Logf("seed %d (rerun with -storetest.seed=%d)", seed, seed)
	ht := tg.HostileTarget(t, edges...)
	st, err := ht.Store.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunHostile(t, ht, storetest.HostileRows(rand.New(rand.NewPCG(seed, 1)), ht.AllEdges(), n, st.AsOf))
}

// FuzzHostileRows is the fuzz target of the store's hostile rows: the rows
// are derived from the fuzzer's bytes, three a row. Its seed corpus, which
// runs with the tests, applies every edge once and mixes a few.
func (tg Target[T]) FuzzHostileRows(f *testing.F, edges ...storetest.Edge) {
	every := []byte{}
	for i := range len(storetest.CommonEdges()) + len(edges) {
		every = append(every, 3, byte(i), 0)
	}
	f.Add(every)
	f.Add([]byte{5, 1, 2, 0, 0, 0, 5, 7, 30, 3, 40, 0, 1, 1, 1, 5, 60, 61})
	f.Fuzz(func(t *testing.T, picks []byte) {
		if len(picks) > 300 {
			picks = picks[:300]
		}
		ht := tg.HostileTarget(t, edges...)
		st, err := ht.Store.Stats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		storetest.RunHostile(t, ht, storetest.HostileRowsFrom(picks, ht.AllEdges(), st.AsOf.Add(-time.Millisecond)))
	})
}
