package pgstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar/outbox/storetest"
)

// hostileTarget writes hostile rows into a fresh store's table with plain
// SQL, as a producer in another language would.
func hostileTarget(t *testing.T) storetest.HostileTarget {
	s := newStore(t)
	return storetest.HostileTarget{
		Store: s,
		Insert: func(ctx context.Context, r storetest.HostileRow) error {
			cols := make([]string, 0, len(r.Columns))
			for c := range r.Columns {
				cols = append(cols, c)
			}
			sort.Strings(cols)
			var vals []string
			var args []any
			for _, c := range cols {
				v := r.Columns[c]
				if v.SQL != "" {
					vals = append(vals, v.SQL)
					continue
				}
				args = append(args, v.Arg)
				p := fmt.Sprintf("$%d", len(args))
				switch c {
				case "id", "conversation_id", "causation_id", "request_id":
					p += "::text::uuid" // PostgreSQL parses the text, in whatever form
				case "metadata", "headers":
					p += "::text::jsonb"
				}
				vals = append(vals, p)
			}
			sql := s.n.render(`INSERT INTO {{table}} (` + strings.Join(cols, ", ") + `) VALUES (` + strings.Join(vals, ", ") + `)`)
			return settled(ctx, func(tx pgx.Tx) error { _, err := tx.Exec(ctx, sql, args...); return err })
		},
		Rows: func(ctx context.Context) ([]storetest.FinalRow, error) {
			rows, err := sharedPool.Query(ctx, s.n.render(`SELECT id::text, published_at IS NOT NULL,
    lease_token IS NOT NULL, coalesce(dead_reason, ''), published_at IS NULL AND dead_at IS NULL FROM {{table}}`))
			if err != nil {
				return nil, err
			}
			return pgx.CollectRows(rows, func(r pgx.CollectableRow) (storetest.FinalRow, error) {
				var f storetest.FinalRow
				err := r.Scan(&f.ID, &f.Published, &f.Leased, &f.DeadReason, &f.Pending)
				return f, err
			})
		},
		Edges: []storetest.Edge{
			storetest.SQLEdge("available_at -infinity", storetest.ExpectEither, "available_at", "'-infinity'"),
			storetest.SQLEdge("available_at infinity", storetest.ExpectEither, "available_at", "'infinity'"),
			storetest.SQLEdge("created_at infinity", storetest.ExpectEither, "created_at", "'infinity'"),
			storetest.SQLEdge("created_at -infinity", storetest.ExpectEither, "created_at", "'-infinity'"),
			storetest.SQLEdge("expires_at infinity", storetest.ExpectEither, "expires_at", "'infinity'"),
			storetest.SQLEdge("expires_at -infinity", storetest.ExpectEither, "expires_at", "'-infinity'"),
			storetest.SQLEdge("created_at in 4000 BC", storetest.ExpectEither, "created_at", "'4000-01-01 BC'"),
			storetest.SQLEdge("metadata a number", storetest.ExpectDead, "metadata", "'42'::jsonb"),
		},
	}
}

// Rows written with plain SQL at every column's edge, mixed with good rows:
// the dispatcher publishes each good row exactly once and every row ends
// published or dead with a reason.
func TestHostileRows(t *testing.T) {
	t.Parallel()
	seed := storetest.HostileSeed()
	t.Logf("seed %d (rerun with -storetest.seed=%d)", seed, seed)
	ht := hostileTarget(t)
	st, err := ht.Store.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunHostile(t, ht, storetest.HostileRows(rand.New(rand.NewPCG(seed, 1)), ht.AllEdges(), 150, st.AsOf))
}

// FuzzHostileRows derives the rows from the fuzzer's bytes, three a row; its
// seed corpus runs with the tests: every edge once, and a mixed table.
func FuzzHostileRows(f *testing.F) {
	every := []byte{}
	for i := range 60 {
		every = append(every, 3, byte(i), 0)
	}
	f.Add(every)
	f.Add([]byte{5, 1, 2, 0, 0, 0, 5, 7, 30, 3, 40, 0, 1, 1, 1, 5, 60, 61})
	f.Fuzz(func(t *testing.T, picks []byte) {
		if len(picks) > 300 {
			picks = picks[:300]
		}
		ht := hostileTarget(t)
		st, err := ht.Store.Stats(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		storetest.RunHostile(t, ht, storetest.HostileRowsFrom(picks, ht.AllEdges(), st.AsOf.Add(-time.Millisecond)))
	})
}
