package pgstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A migration file is split into steps at lines starting with stepMarker.
// Without such a line the whole file is one step. A marker followed by
// noTransaction begins a step of exactly one statement that runs outside a
// transaction.
const (
	stepMarker    = "-- reliar:step"
	noTransaction = "no-transaction"
)

// step is one part of a migration: a transaction of one or more
// statements, or one statement outside a transaction.
type step struct {
	sql  string
	noTx bool
}

// splitSteps splits a migration file into its steps.
func splitSteps(body string) ([]step, error) {
	if !strings.Contains(body, stepMarker) {
		return []step{{sql: body}}, nil
	}
	var steps []step
	cur := step{}
	started := false
	var err error
	flush := func() {
		switch {
		case strings.TrimSpace(stripComments(cur.sql)) == "":
		case !started:
			err = errors.New("statements before the first step marker")
		default:
			steps = append(steps, cur)
		}
	}
	for line := range strings.SplitAfterSeq(body, "\n") {
		trimmed := strings.TrimSpace(line)
		if !strings.HasPrefix(trimmed, stepMarker) {
			cur.sql += line
			continue
		}
		flush()
		mode := strings.TrimSpace(strings.TrimPrefix(trimmed, stepMarker))
		switch mode {
		case "":
			cur = step{}
		case noTransaction:
			cur = step{noTx: true}
		default:
			return nil, fmt.Errorf("unknown step marker %q", trimmed)
		}
		started = true
	}
	flush()
	if err != nil {
		return nil, err
	}
	for _, st := range steps {
		if st.noTx && strings.Count(strings.TrimRight(strings.TrimSpace(stripComments(st.sql)), ";"), ";") > 0 {
			return nil, errors.New("a no-transaction step holds more than one statement")
		}
	}
	return steps, nil
}

// stripComments drops the lines that are only a comment.
func stripComments(sql string) string {
	var b strings.Builder
	for line := range strings.SplitAfterSeq(sql, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// Bounds of a migration step's waits.
const (
	// stepLockTimeout is the lock_timeout of a transactional step: a step
	// that cannot take its lock in that time gives up, so that the table's
	// readers and writers never queue behind it for longer, and retries.
	stepLockTimeout = time.Second
	// stepLockRetries is how many times a step retries before Migrate
	// returns the lock timeout (transient) to its caller.
	stepLockRetries = 60
	// lockPoll is how often a waiting Migrate tries the migration lock.
	lockPoll = 200 * time.Millisecond
)

// runStep runs one step on conn: a transactional step with a short lock
// timeout, retried while its lock is taken; a no-transaction step alone,
// after dropping an index a CREATE INDEX CONCURRENTLY it repeats left
// INVALID.
func runStep(ctx context.Context, conn *pgx.Conn, n names, st step) error {
	if st.noTx {
		return runNoTxStep(ctx, conn, n, st.sql)
	}
	for attempt := 0; ; attempt++ {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			// The step's own lock_timeout, and no statement_timeout: a
			// limit set on the role or the database is meant for the
			// application's statements, not for a migration, which the
			// lock timeout already keeps from queueing others.
			if _, err := tx.Exec(ctx, "SELECT pg_catalog.set_config('lock_timeout', $1, true), pg_catalog.set_config('statement_timeout', '0', true)",
				fmt.Sprintf("%dms", stepLockTimeout.Milliseconds())); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, st.sql)
			return err
		})
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55P03" || attempt >= stepLockRetries {
			return err
		}
		if err := sleep(ctx, stepLockTimeout); err != nil {
			return err
		}
	}
}

// concurrentIndex matches a CREATE INDEX CONCURRENTLY and captures the
// index's name.
var concurrentIndex = regexp.MustCompile(`(?is)^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+(?:IF\s+NOT\s+EXISTS\s+)?"?([A-Za-z_][A-Za-z0-9_]*)"?\s+ON\s`)

// runNoTxStep runs one statement outside a transaction. A CREATE INDEX
// CONCURRENTLY that was interrupted (a crash, a cancelled context, a
// deadlock) leaves an INVALID index behind, which IF NOT EXISTS would then
// keep for ever: such an index is dropped, concurrently, before the
// statement runs again.
//
// The step runs without statement_timeout and lock_timeout, whatever the
// role or the database sets: CREATE INDEX CONCURRENTLY waits for every
// older transaction and takes as long as the table needs, while it blocks
// neither reads nor writes. The session's values are restored afterwards.
func runNoTxStep(ctx context.Context, conn *pgx.Conn, n names, sql string) (err error) {
	sql = strings.TrimRight(strings.TrimSpace(stripComments(sql)), ";")
	if _, err := conn.Exec(ctx, "SELECT pg_catalog.set_config('statement_timeout', '0', false), pg_catalog.set_config('lock_timeout', '0', false)"); err != nil {
		return err
	}
	defer func() {
		for _, reset := range []string{"RESET statement_timeout", "RESET lock_timeout"} {
			if _, rerr := conn.Exec(ctx, reset); rerr != nil && err == nil {
				err = rerr
			}
		}
	}()
	if m := concurrentIndex.FindStringSubmatch(sql); m != nil {
		var invalid bool
		err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_index i
JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid
JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
WHERE ns.nspname = $1 AND c.relname = $2 AND NOT (i.indisvalid AND i.indisready))`, n.schema, m[1]).Scan(&invalid)
		if err != nil {
			return err
		}
		if invalid {
			if _, err := conn.Exec(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+n.quoted+`."`+m[1]+`"`); err != nil {
				return fmt.Errorf("drop the invalid index %s: %w", m[1], err)
			}
		}
	}
	_, err = conn.Exec(ctx, sql)
	return err
}

// withMigrationLock runs fn on a connection of its own that holds the
// schema's migration lock: a session-level advisory lock, so that steps
// outside a transaction stay serialised too. A waiting caller polls with
// pg_try_advisory_lock instead of blocking in pg_advisory_lock: a blocked
// statement would hold a snapshot that the holder's CREATE INDEX
// CONCURRENTLY waits for, a deadlock.
func withMigrationLock(ctx context.Context, pool *pgxpool.Pool, n names, fn func(conn *pgx.Conn) error) error {
	pc, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	key := advisoryKey("migrate", n.schema)
	for {
		var ok bool
		if err := pc.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok); err != nil {
			pc.Release()
			return err
		}
		if ok {
			break
		}
		if err := sleep(ctx, lockPoll); err != nil {
			pc.Release()
			return err
		}
	}
	err = fn(pc.Conn())
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
	defer cancel()
	var released bool
	if uerr := pc.QueryRow(uctx, "SELECT pg_advisory_unlock($1)", key).Scan(&released); uerr != nil || !released {
		// Ending the session releases its advisory locks.
		closeConn(pc.Hijack())
		return err
	}
	pc.Release()
	return err
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
