package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// snapshot is the state read before and after a drain.
type snapshot struct {
	self              time.Duration // this process's CPU time
	busy, total, wait float64       // machine CPU ticks: busy, all, iowait
}

func sample() (snapshot, error) {
	var s snapshot
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return s, err
	}
	s.self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	stat, err := os.ReadFile("/proc/stat")
	if err != nil {
		return s, err
	}
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	for i, f := range bytes.Fields(line)[1:] {
		v, err := strconv.ParseFloat(string(f), 64)
		if err != nil {
			return s, fmt.Errorf("/proc/stat: %w", err)
		}
		s.total += v
		switch i {
		case 3: // idle
		case 4: // iowait
			s.wait += v
		default:
			s.busy += v
		}
	}
	return s, nil
}

// updates returns the table's heap-only and total row updates. The fill
// made none, so after a drain they are the drain's. PostgreSQL publishes
// table statistics at most once a second: wait that long first.
func updates(ctx context.Context, pool *pgxpool.Pool) (hot, all int64, err error) {
	select {
	case <-time.After(1100 * time.Millisecond):
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	err = pool.QueryRow(ctx, `SELECT coalesce(n_tup_hot_upd, 0), coalesce(n_tup_upd, 0)
FROM pg_stat_user_tables WHERE relid = 'outbox'::regclass`).Scan(&hot, &all)
	return hot, all, err
}

// report prints one drain: its rate over drain (the dispatcher's or the raw
// loop's own start to the last row marked published), and CPU over the
// samples around it.
func report(out io.Writer, c config, drain time.Duration, before, after snapshot, hot, all int64, timed *timedStore) {
	who := "reliar"
	if c.raw {
		who = "raw loop"
	}
	fmt.Fprintf(out, "%s: %d messages in %v: %.0f msg/s\n", who, c.messages, drain.Round(time.Millisecond), float64(c.messages)/drain.Seconds())
	ticks := after.total - before.total
	self := after.self - before.self
	fmt.Fprintf(out, "machine: %.0f%% busy, %.0f%% iowait; this process: %.1f µs CPU per message (%.0f%% of a core)\n",
		100*(after.busy-before.busy)/ticks, 100*(after.wait-before.wait)/ticks,
		float64(self.Microseconds())/float64(c.messages), 100*self.Seconds()/drain.Seconds())
	if all > 0 {
		fmt.Fprintf(out, "heap-only updates: %.0f%% of %d row updates (claims can be, completions cannot: 50%% at most)\n", 100*float64(hot)/float64(all), all)
	}
	if timed == nil {
		return
	}
	timed.mu.Lock()
	defer timed.mu.Unlock()
	for _, k := range []struct {
		name  string
		calls []call
	}{{"claim", timed.claims}, {"complete", timed.completes}} {
		st := summarise(k.calls, drain)
		fmt.Fprintf(out, "%-8s calls=%d rows=%d mean=%v p50=%v max=%v in flight %.0f%% of the drain\n",
			k.name, st.count, st.rows, st.mean.Round(10*time.Microsecond), st.p50.Round(10*time.Microsecond), st.max.Round(10*time.Microsecond), 100*st.busy)
	}
}
