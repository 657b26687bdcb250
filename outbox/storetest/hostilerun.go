package storetest

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/internal/countpub"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// HostileTarget is a SQL store and the raw-SQL writer of its dialect.
type HostileTarget struct {
	// Store is a fresh store over an empty, migrated table.
	Store outboxdriver.Store
	// Insert writes r with one plain INSERT of its columns, in a
	// transaction of its own, as another program would. An error means the
	// table refused the row; nothing of it may then be stored.
	Insert func(ctx context.Context, r HostileRow) error
	// Rows reads the final state of every row of the table.
	Rows func(ctx context.Context) ([]FinalRow, error)
	// Edges are the dialect's own edges, added to CommonEdges.
	Edges []Edge
}

// FinalRow is the state of one stored row after the run.
type FinalRow struct {
	// ID is the id as stored.
	ID string
	// Published and Leased say whether published_at is set and whether a
	// lease token is.
	Published, Leased bool
	// DeadReason is empty when the row is not dead.
	DeadReason string
	// Pending says whether the row is neither published nor dead.
	Pending bool
}

// AllEdges returns the target's edges: the common ones and its own.
func (ht HostileTarget) AllEdges() []Edge { return append(CommonEdges(), ht.Edges...) }

// RunHostile writes rows with plain SQL into the target's table, runs a
// dispatcher (outbox.New with a publisher that records every delivery)
// until nothing is due or leased, sweeps the expired rows, and checks that
// every row the table accepted ended published exactly once or dead with a
// reason, never both, as its edges allow; that every row that must be
// published was accepted and published; and that nothing stays pending or
// leased. A row another could not publish must never keep the good rows
// claimed with it from being published.
func RunHostile(t *testing.T, ht HostileTarget, rows []HostileRow) {
	t.Helper()
	ctx := t.Context()
	accepted := make(map[reliar.MessageID]HostileRow, len(rows))
	for _, r := range rows {
		if err := ht.Insert(ctx, r); err != nil {
			if r.Expect == ExpectPublished {
				t.Errorf("the table refused a row it must accept (edges %v): %v", r.Edges, err)
			}
			continue
		}
		accepted[r.ID] = r
	}
	pub := &countpub.Publisher{}
	settings := outbox.Settings{
		WorkerID:         "storetest-hostile",
		BatchSize:        25,
		MaxInFlight:      100,
		PollInterval:     10 * time.Millisecond,
		IdlePollInterval: 20 * time.Millisecond,
		Lease:            6 * time.Second,
		StoreTimeout:     2 * time.Second,
		StatsInterval:    outbox.Off,
		MaxClaims:        hostileMaxClaims,
	}
	d, err := outbox.New(ht.Store, pub, settings, outbox.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatalf("outbox.New: %v", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var runErr error
	wg.Go(func() { runErr = d.Run(runCtx) })
	deadline := time.Now().Add(60 * time.Second)
	var st outboxdriver.Stats
	for {
		st, err = ht.Store.Stats(ctx)
		if err == nil && st.Due+st.Leased+st.Scheduled == 0 {
			break
		}
		if time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	wg.Wait()
	if runErr != nil {
		t.Errorf("Run = %v", runErr)
	}
	for {
		rep, err := ht.Store.Purge(ctx, outboxdriver.PurgeRequest{})
		if err != nil {
			t.Fatalf("the expiry sweep: %v", err)
		}
		if rep.Expired == 0 {
			break
		}
	}
	final, err := ht.Rows(ctx)
	if err != nil {
		t.Fatalf("read the final rows: %v", err)
	}
	checkHostile(t, accepted, final, pub.Counts(), st)
}

// checkHostile checks the final table against what each row may end as.
func checkHostile(t *testing.T, accepted map[reliar.MessageID]HostileRow, final []FinalRow,
	published map[reliar.MessageID]int, st outboxdriver.Stats) {
	t.Helper()
	seen := map[reliar.MessageID]bool{}
	var problems []string
	for _, f := range final {
		id, err := uuid.Parse(f.ID)
		if err != nil {
			problems = append(problems, fmt.Sprintf("row %q: stored id is not a UUID", f.ID))
			continue
		}
		r, ok := accepted[id]
		if !ok {
			problems = append(problems, fmt.Sprintf("row %s: in the table but never inserted", id))
			continue
		}
		seen[id] = true
		n := published[id]
		state := "published"
		switch {
		case f.Pending:
			state = "pending"
		case f.DeadReason != "":
			state = "dead (" + f.DeadReason + ")"
		}
		bad := ""
		switch {
		case f.Pending || f.Leased:
			bad = "left pending or leased"
		case f.Published && f.DeadReason != "":
			bad = "both published and dead"
		case f.Published && n != 1:
			bad = fmt.Sprintf("published %d times", n)
		case f.DeadReason != "" && n != 0:
			bad = fmt.Sprintf("dead but published %d times", n)
		case r.Expect == ExpectPublished && !f.Published:
			bad = "must be published"
		case r.Expect == ExpectDead && f.DeadReason == "":
			bad = "must be dead"
		}
		if bad != "" {
			problems = append(problems, fmt.Sprintf("row %s (edges %v, expect %s): %s; it ended %s, published %d times",
				id, r.Edges, r.Expect, bad, state, n))
		}
	}
	for id, r := range accepted {
		if !seen[id] {
			problems = append(problems, fmt.Sprintf("row %s (edges %v): accepted by the table, then gone", id, r.Edges))
		}
	}
	for id, n := range published {
		if _, ok := accepted[id]; !ok {
			problems = append(problems, fmt.Sprintf("message %s published %d times but never inserted", id, n))
		}
	}
	var nPublished, nDead int
	for _, f := range final {
		if f.Published {
			nPublished++
		} else if f.DeadReason != "" {
			nDead++
		}
	}
	t.Logf("hostile rows: %d accepted, %d published, %d dead", len(accepted), nPublished, nDead)
	if len(problems) > 0 {
		sort.Strings(problems)
		t.Errorf("%d of %d accepted rows did not end as they must (last stats %+v):\n  %s",
			len(problems), len(accepted), st, strings.Join(problems, "\n  "))
	}
}

// HostileSeed returns the seed of a hostile run: the -storetest.seed flag or
// RELIAR_STORETEST_SEED when set, else a random one. The caller logs it.
func HostileSeed() uint64 {
	if *seedFlag != 0 {
		return *seedFlag
	}
	if v, err := strconv.ParseUint(os.Getenv("RELIAR_STORETEST_SEED"), 10, 64); err == nil && v != 0 {
		return v
	}
	return rand.Uint64()
}
