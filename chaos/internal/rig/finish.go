package rig

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/chaos/check"
	"github.com/reliar/reliar/outbox"
)

// FinishOptions shape the end of a run.
type FinishOptions struct {
	// Ordered checks per-key order (the relays ran with per-key ordering).
	Ordered bool
	// DrainWithin bounds the wait for every row to be published or dead
	// once the faults are healed; defaults to 60s.
	DrainWithin time.Duration
}

// Finish heals every fault, waits until no row is pending, stops the
// running relays with SIGTERM (each must exit 0 within its drain timeout
// and a margin), then checks the run and reports violations on t.
func (r *Run) Finish(o FinishOptions) check.Report {
	r.t.Helper()
	if o.DrainWithin == 0 {
		o.DrainWithin = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), o.DrainWithin+30*time.Second)
	defer cancel()
	r.mu.Lock()
	relays, proxies := append([]*Relay(nil), r.relays...), r.proxies
	r.mu.Unlock()
	for _, p := range proxies {
		p.Heal()
	}
	if err := r.waitDrained(ctx, o.DrainWithin); err != nil {
		r.t.Error(err)
	}
	for _, p := range relays {
		if p.exited() {
			continue
		}
		stopCtx, stop := context.WithTimeout(ctx, p.Args.DrainTimeout+5*time.Second)
		p.WaitStarted(stopCtx) // a relay still starting would die of the SIGTERM
		took, err := p.Stop(stopCtx)
		stop()
		if err != nil {
			r.t.Errorf("relay %s: exit after SIGTERM (%v): %v\n%s", p.Name, took, err, tail(p.Stderr()))
		}
	}
	if err := r.Sink.WaitQuiet(ctx, 500*time.Millisecond); err != nil {
		r.t.Error(err)
	}
	in, err := r.input(ctx, relays)
	if err != nil {
		r.t.Fatal(err)
	}
	in.Ordered = o.Ordered
	rep := check.Check(in)
	r.t.Logf("%s: %s", r.Name, rep)
	if err := rep.Err(); err != nil {
		r.t.Error(err)
		for _, id := range rep.UnattributedIDs[:min(3, len(rep.UnattributedIDs))] {
			r.t.Logf("history of %s:\n%s", id, history(in, id))
		}
		for _, p := range relays {
			r.t.Logf("relay %s stderr:\n%s", p.Name, tail(p.Stderr()))
		}
	}
	if _, bad := r.Sink.Count(); bad > 0 {
		r.t.Errorf("the sink saw %d publishes without a valid Nats-Msg-Id", bad)
	}
	return rep
}

// Pending counts rows neither published nor dead.
func (r *Run) Pending(ctx context.Context) (int, error) {
	var n int
	err := r.Pool.QueryRow(ctx, `SELECT count(*) FROM `+r.table()+` WHERE published_at IS NULL AND dead_at IS NULL`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("rig: pending: %w", err)
	}
	return n, nil
}

func (r *Run) waitDrained(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		n, err := r.Pending(ctx)
		if err == nil && n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("rig: %d rows still pending %v after healing (last error: %v)", n, within, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// input gathers what the checker needs: the committed rows (the table,
// plus any acknowledged commit missing from it), the sink's attempts,
// every relay's events and the final state of the table.
func (r *Run) input(ctx context.Context, relays []*Relay) (check.Input, error) {
	var in check.Input
	rows, err := r.Pool.Query(ctx, `SELECT id, coalesce(ordering_key, ''), sequence, dead_at IS NOT NULL,
		published_at IS NULL AND dead_at IS NULL, locked_by IS NOT NULL FROM `+r.table())
	if err != nil {
		return in, fmt.Errorf("rig: read outbox: %w", err)
	}
	inTable := make(map[reliar.MessageID]bool)
	for rows.Next() {
		var (
			c                     check.Committed
			dead, pending, leased bool
		)
		if err := rows.Scan(&c.ID, &c.Key, &c.Sequence, &dead, &pending, &leased); err != nil {
			rows.Close()
			return in, fmt.Errorf("rig: read outbox: %w", err)
		}
		inTable[c.ID] = true
		in.Committed = append(in.Committed, c)
		if dead {
			in.Final.Dead = append(in.Final.Dead, c.ID)
		}
		if pending {
			in.Final.Pending++
		}
		if leased {
			in.Final.Leased++
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return in, fmt.Errorf("rig: read outbox: %w", err)
	}
	r.mu.Lock()
	for _, id := range r.acked {
		if !inTable[id] {
			in.Committed = append(in.Committed, check.Committed{ID: id})
		}
	}
	r.mu.Unlock()
	in.Attempts = r.Sink.Attempts()
	for _, p := range relays {
		evs, err := p.Events()
		if err != nil {
			return in, err
		}
		in.Events = append(in.Events, evs...)
	}
	return in, nil
}

// Events returns the events every relay of the run wrote so far.
func (r *Run) Events() ([]outbox.Event, error) {
	r.mu.Lock()
	relays := append([]*Relay(nil), r.relays...)
	r.mu.Unlock()
	var all []outbox.Event
	for _, p := range relays {
		evs, err := p.Events()
		if err != nil {
			return nil, err
		}
		all = append(all, evs...)
	}
	return all, nil
}

// PublishedNotCompleted returns the ids a relay reported published and not
// yet completed (nor failed): the rows a crash now would duplicate.
func PublishedNotCompleted(evs []outbox.Event) []uuid.UUID {
	return openIDs(evs, []outbox.EventKind{outbox.EventPublished},
		[]outbox.EventKind{outbox.EventCompleted, outbox.EventFailed, outbox.EventClaimed, outbox.EventReclaimed})
}

// HeldNotCompleted returns the ids a relay claimed and has not completed,
// failed or released yet: the rows it holds, published or not.
func HeldNotCompleted(evs []outbox.Event) []uuid.UUID {
	return openIDs(evs, []outbox.EventKind{outbox.EventClaimed, outbox.EventReclaimed},
		[]outbox.EventKind{outbox.EventCompleted, outbox.EventFailed, outbox.EventReleased, outbox.EventAbandoned})
}

// openIDs returns the ids whose last event among opens and closes, in
// order, is one of opens.
func openIDs(evs []outbox.Event, opens, closes []outbox.EventKind) []uuid.UUID {
	open := make(map[uuid.UUID]bool)
	for _, e := range evs {
		switch {
		case slices.Contains(opens, e.Kind):
			for _, id := range e.IDs {
				open[id] = true
			}
		case slices.Contains(closes, e.Kind):
			for _, id := range e.IDs {
				delete(open, id)
			}
		}
	}
	out := make([]uuid.UUID, 0, len(open))
	for id := range open {
		out = append(out, id)
	}
	return out
}

// history describes what happened to one message: its events in time
// order and its positions among the sink's attempts.
func history(in check.Input, id reliar.MessageID) string {
	var evs []outbox.Event
	for _, e := range in.Events {
		if slices.Contains(e.IDs, id) {
			evs = append(evs, e)
		}
	}
	slices.SortStableFunc(evs, func(a, b outbox.Event) int { return a.At.Compare(b.At) })
	var b strings.Builder
	for _, e := range evs {
		fmt.Fprintf(&b, "  %s %-20s %s %s\n", e.At.Format("15:04:05.000000"), e.Kind, e.Worker, e.Err)
	}
	var at []int
	for i, a := range in.Attempts {
		if a == id {
			at = append(at, i)
		}
	}
	fmt.Fprintf(&b, "  seen at the sink as attempts %v of %d", at, len(in.Attempts))
	return b.String()
}

func (r *Run) table() string { return `"` + r.Name + `".outbox` }

func tail(s string) string {
	const keep = 4000
	if len(s) > keep {
		s = "…" + s[len(s)-keep:]
	}
	return strings.TrimSpace(s)
}
