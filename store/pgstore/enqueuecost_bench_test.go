package pgstore

import (
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// BenchmarkEnqueueCosts splits what one Enqueue transaction costs into its
// parts, each variant committed in turn in one loop on one table so that all
// see the same table size and the same noise:
//
//   - enqueue: Store.Enqueue as shipped;
//   - no-notify: the same statement and arguments without the notification;
//   - sent-at-doc: the same with a metadata document holding the send time
//     in every row, as Enqueue wrote before a send time the caller did not
//     set was left to created_at;
//   - 3-columns: id, message_type and payload only, the rest defaults, through
//     the same unnest form and no notification: what the schema alone costs;
//   - no-tenant-index: Store.Enqueue into a table without schema v5's tenant
//     index, which every pending row enters;
//   - fillfactor-100: Store.Enqueue into a table whose pages are filled
//     whole, not to half (schema v3);
//   - leased: Store.Enqueue on the zero-claim path, as when a dispatcher
//     runs in the process: the rows leased at enqueue, their sequences
//     returned;
//   - no-checks: Store.Enqueue into a table without its check constraints,
//     which PostgreSQL prepares anew for every INSERT (schema versions 1
//     and 4);
//   - minimal: the 3-columns statement into the peers' minimal table (uuid
//     primary key, bigserial sequence, one partial pending index): the
//     floor no outbox table with claims can go below.
//
// encode-ns/msg is the client's share of the enqueue variant (building the
// rows and arrays, no database). Run with -bench 'EnqueueCosts/perTx=100'
// for the peer harness's transaction size.
func BenchmarkEnqueueCosts(b *testing.B) {
	for _, perTx := range []int{1, 100} {
		b.Run("perTx="+strconv.Itoa(perTx), func(b *testing.B) { benchEnqueueCosts(b, perTx) })
	}
}

func benchEnqueueCosts(b *testing.B, perTx int) {
	s := newStore(b)
	ctx := b.Context()
	threeCols := s.n.render(`INSERT INTO {{table}} (id, message_type, payload)
SELECT * FROM unnest($1::uuid[], $2::text[], $3::bytea[])`)
	noTenantIdx := newStore(b)
	if _, err := sharedPool.Exec(ctx, noTenantIdx.n.render(`DROP INDEX {{schema}}.outbox_tenant_pending_idx`)); err != nil {
		b.Fatal(err)
	}
	fullPages := newStore(b)
	if _, err := sharedPool.Exec(ctx, fullPages.n.render(`ALTER TABLE {{table}} SET (fillfactor = 100)`)); err != nil {
		b.Fatal(err)
	}
	noChecks := newStore(b)
	if _, err := sharedPool.Exec(ctx, noChecks.n.render(`ALTER TABLE {{table}}
    DROP CONSTRAINT outbox_terminal_ck, DROP CONSTRAINT outbox_dead_pair_ck,
    DROP CONSTRAINT outbox_dead_reason_ck, DROP CONSTRAINT outbox_times_finite_ck,
    DROP CONSTRAINT outbox_message_version_ck, DROP CONSTRAINT outbox_counters_ck`)); err != nil {
		b.Fatal(err)
	}
	if _, err := sharedPool.Exec(ctx, s.n.render(`CREATE TABLE {{schema}}.minimal (
    id uuid PRIMARY KEY, sequence bigserial NOT NULL, message_type text NOT NULL,
    payload bytea NOT NULL, locked_until timestamptz, published_at timestamptz);
CREATE INDEX ON {{schema}}.minimal (sequence) WHERE published_at IS NULL`)); err != nil {
		b.Fatal(err)
	}
	minimal := s.n.render(`INSERT INTO {{schema}}.minimal (id, message_type, payload)
SELECT * FROM unnest($1::uuid[], $2::text[], $3::bytea[])`)
	leasing := newStore(b)
	if _, err := leasing.Handoff(ctx, outboxdriver.HandoffRequest{
		Worker: "bench", Lease: time.Hour, MinLeft: time.Second,
		Reserve: func(int) bool { return true }, Unreserve: func(int) {},
	}); err != nil {
		b.Fatal(err)
	}
	msgs := make([]reliar.Outgoing, perTx)
	fresh := func() []any {
		for i := range msgs {
			msgs[i] = reliar.NewMsg(orderPlaced{OrderID: "o-1"})
		}
		args, _, _, err := s.enqueueArgs(ctx, msgs, false)
		if err != nil {
			b.Fatal(err)
		}
		args[0] = s.notifyChannel()
		return args
	}
	commit := func(sql string, args ...any) time.Duration {
		start := time.Now()
		err := pgx.BeginFunc(ctx, sharedPool, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, sql, args...)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	enqueueInto := func(st *Store) time.Duration {
		for i := range msgs {
			msgs[i] = reliar.NewMsg(orderPlaced{OrderID: "o-1"})
		}
		start := time.Now()
		err := pgx.BeginFunc(ctx, sharedPool, func(tx pgx.Tx) error {
			_, err := st.Enqueue(ctx, tx, msgs...)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var enqueue, encode, noNotify, withDoc, three, noIdx, full, leased, unchecked, floor time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		args := fresh()
		encode += time.Since(start)
		commit(s.sql.enqueue, args...)
		enqueue += time.Since(start)

		args = fresh()
		args[0] = ""
		noNotify += commit(s.sql.enqueue, args...)

		args = fresh()
		docs := make([][]byte, perTx)
		for i := range docs {
			docs[i] = []byte(`{"delivery":{"sent_at":"` + time.Now().UTC().Format(time.RFC3339Nano) + `"}}`)
		}
		args[13] = docs
		withDoc += commit(s.sql.enqueue, args...)

		args = fresh()
		types := make([]string, perTx)
		payloads := make([][]byte, perTx)
		for i := range msgs {
			types[i] = "orders.placed"
			payloads[i] = args[9].([][]byte)[i]
		}
		three += commit(threeCols, args[1], types, payloads)

		args = fresh()
		floor += commit(minimal, args[1], types, args[9])

		noIdx += enqueueInto(noTenantIdx)
		full += enqueueInto(fullPages)
		leased += enqueueInto(leasing)
		unchecked += enqueueInto(noChecks)
	}
	n := float64(b.N * perTx)
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / n }
	b.ReportMetric(per(enqueue), "enqueue-ns/msg")
	b.ReportMetric(per(encode), "encode-ns/msg")
	b.ReportMetric(per(noNotify), "no-notify-ns/msg")
	b.ReportMetric(per(withDoc), "sent-at-doc-ns/msg")
	b.ReportMetric(per(three), "3-columns-ns/msg")
	b.ReportMetric(per(noIdx), "no-tenant-index-ns/msg")
	b.ReportMetric(per(full), "fillfactor-100-ns/msg")
	b.ReportMetric(per(leased), "leased-ns/msg")
	b.ReportMetric(per(unchecked), "no-checks-ns/msg")
	b.ReportMetric(per(floor), "minimal-ns/msg")
}
