package relay

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/reliar/reliar/store/pgstore"
)

// fakeTable answers XIDAhead with what the test sets.
type fakeTable struct {
	x   pgstore.XIDAhead
	err error
}

func (f *fakeTable) XIDAhead(context.Context) (pgstore.XIDAhead, error) { return f.x, f.err }
func (f *fakeTable) RowSecurity(context.Context) (pgstore.RowSecurity, error) {
	return pgstore.RowSecurity{}, nil
}

// The inspector warns when rows ahead of the xid counter block its per-key
// claims: at once, when they grow, and every xidWarnEvery while they
// remain; says when they are gone; says once that a check timed out.
func TestInspector(t *testing.T) {
	reg := prometheus.NewRegistry()
	g, err := newXIDGauges(reg)
	if err != nil {
		t.Fatal(err)
	}
	gauge := func(name string) float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			if mf.GetName() == name {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatalf("no gauge %s", name)
		return 0
	}
	logs := &logBuffer{}
	table := &fakeTable{}
	in := &inspector{store: table, perKey: true, interval: time.Minute, timeout: time.Second, gauges: g, log: logs.logger()}
	ctx := t.Context()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	warnings := func() int { return strings.Count(logs.String(), "level=WARN") }

	in.once(ctx, at)
	if warnings() != 0 || gauge("reliar_outbox_xid_ahead_rows") != 0 {
		t.Fatalf("nothing ahead: %s", logs)
	}
	table.x = pgstore.XIDAhead{Rows: 2, Keys: 1, BlockedDue: 5, Sample: []string{"k"}}
	in.once(ctx, at.Add(time.Minute))
	if warnings() != 1 || gauge("reliar_outbox_xid_ahead_rows") != 2 || gauge("reliar_outbox_xid_ahead_keys") != 1 || !logs.has("WARN", "rows=2", "keys=1", "due_rows_blocked=5") {
		t.Fatalf("rows ahead found:\n%s", logs)
	}
	in.once(ctx, at.Add(2*time.Minute))
	if warnings() != 1 {
		t.Fatalf("the same rows a minute later warned again:\n%s", logs)
	}
	table.x.Rows = 3
	in.once(ctx, at.Add(3*time.Minute))
	if warnings() != 2 {
		t.Fatalf("more rows ahead did not warn:\n%s", logs)
	}
	in.once(ctx, at.Add(3*time.Minute+xidWarnEvery))
	if warnings() != 3 {
		t.Fatalf("rows still ahead after %v did not warn:\n%s", xidWarnEvery, logs)
	}
	table.err = context.DeadlineExceeded
	in.timeout = time.Nanosecond
	in.once(ctx, at.Add(time.Hour))
	in.once(ctx, at.Add(2*time.Hour))
	if warnings() != 4 || !logs.has("WARN", "could not finish its check") || gauge("reliar_outbox_xid_ahead_rows") != 3 {
		t.Fatalf("timed-out checks:\n%s", logs)
	}
	table.err, table.x, in.timeout = nil, pgstore.XIDAhead{}, time.Second
	in.once(ctx, at.Add(3*time.Hour))
	if gauge("reliar_outbox_xid_ahead_rows") != 0 || !logs.has("INFO", "no outbox row is ahead") {
		t.Fatalf("rows gone:\n%s", logs)
	}

	// An unordered relay publishes them: it says so at info.
	logs2 := &logBuffer{}
	un := &inspector{store: &fakeTable{x: pgstore.XIDAhead{Rows: 1, Keys: 1}}, interval: time.Minute, timeout: time.Second, gauges: g, log: logs2.logger()}
	un.once(ctx, at)
	if strings.Contains(logs2.String(), "level=WARN") || !logs2.has("INFO", "this relay publishes them") {
		t.Fatalf("unordered relay:\n%s", logs2)
	}
}
