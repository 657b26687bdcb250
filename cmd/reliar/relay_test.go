package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/publisher/kafkapub"
	"github.com/reliar/reliar/publisher/webhook"
	"github.com/reliar/reliar/store/pgstore"
)

// fastFlags are dispatcher settings that keep the tests quick.
var fastFlags = []string{
	"--poll-interval", "50ms", "--idle-poll-interval", "200ms", "--stats-interval", "200ms",
	"--lease", "10s", "--publish-timeout", "3s", "--store-timeout", "2s", "--drain-timeout", "5s",
}

// relayArgs returns the arguments of a relay over e and a NATS stream.
func relayArgs(e *pgEnv, js *jsEnv, extra ...string) []string {
	args := []string{"--database-url", postgresURL, "--schema", e.schema, "--broker", natsURL, "--subject-prefix", js.prefix}
	return append(append(args, fastFlags...), extra...)
}

// TestRelayDeliversPlainSQLRows: rows inserted by plain SQL are published
// to JetStream, rows inserted later are picked up at once through the
// notify trigger (the idle poll is far longer than the wait), the metrics
// move, and SIGTERM drains and exits 0.
func TestRelayDeliversPlainSQLRows(t *testing.T) {
	t.Parallel()
	db, js := newPG(t), newJetStream(t)
	db.migrate(t)
	if err := pgstore.EnableNotifyTrigger(t.Context(), db.pool, pgstore.WithSchema(db.schema)); err != nil {
		t.Fatal(err)
	}
	db.insert(t, "order_placed", 50)
	p := startRelay(t, relayArgs(db, js, "--idle-poll-interval", "60s")...)
	p.waitReady(t, http.StatusOK)
	waitFor(t, "50 messages in the stream", func() bool { return js.messages(t) == 50 })
	waitFor(t, "50 rows published", func() bool { return db.count(t, "published_at IS NOT NULL") == 50 })
	// Let the relay's claims run dry, so that it waits its idle poll.
	time.Sleep(time.Second)

	start := time.Now()
	db.insert(t, "order_shipped", 20)
	waitFor(t, "70 messages in the stream", func() bool { return js.messages(t) == 70 })
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("rows inserted while idle took %v to publish: the notify trigger did not wake the relay", took)
	}
	waitFor(t, "every row published", func() bool { return db.count(t, "published_at IS NOT NULL") == 70 })
	waitFor(t, "the published counters", func() bool {
		return p.metric(t, `reliar_outbox_published_total{message_type="order_placed"}`) == 50 &&
			p.metric(t, `reliar_outbox_published_total{message_type="order_shipped"}`) == 20
	})
	if got := p.metric(t, "reliar_outbox_claimed_total"); got != 70 {
		t.Errorf("claimed_total = %v, want 70", got)
	}

	code, took := p.stop(t, syscall.SIGTERM)
	if code != 0 {
		t.Fatalf("exit %d after SIGTERM, want 0\n%s", code, p.stderr.String())
	}
	if took > 5*time.Second+3*time.Second {
		t.Errorf("the relay took %v to exit; the drain timeout is 5s", took)
	}
	if p.stdout.String() != "" {
		t.Errorf("stdout %q, want nothing", p.stdout.String())
	}
	if strings.Contains(p.stderr.String(), `{"n":`) {
		t.Errorf("stderr holds a payload:\n%s", p.stderr.String())
	}
	if !strings.Contains(p.stderr.String(), "level=INFO") {
		t.Errorf("stderr has no info lines; the relay logs at info by default:\n%s", p.stderr.String())
	}
}

// TestRelayWaitsForMigration: on an unmigrated schema the relay is alive
// but not ready, serves every metric family, and starts once the schema is
// migrated.
func TestRelayWaitsForMigration(t *testing.T) {
	t.Parallel()
	db, js := newPG(t), newJetStream(t)
	p := startRelay(t, relayArgs(db, js)...)
	waitFor(t, "/readyz to report the unmigrated schema", func() bool {
		code, body := p.get(t, "/readyz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "version 0")
	})
	if code, body := p.get(t, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz = %d %q, want 200", code, body)
	}
	code, body := p.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	for _, family := range []string{"claimed_total", "published_total", "dead_total", "publish_duration_seconds", "pending", "breaker_open"} {
		if !strings.Contains(body, "# TYPE reliar_outbox_"+family+" ") {
			t.Errorf("/metrics does not declare reliar_outbox_%s before the start", family)
		}
	}
	if db.count0(t) {
		t.Fatal("the relay migrated the schema without --migrate")
	}

	db.migrate(t)
	p.waitReady(t, http.StatusOK)
	db.insert(t, "order_placed", 5)
	waitFor(t, "5 messages in the stream", func() bool { return js.messages(t) == 5 })
	if code, _ := p.stop(t, syscall.SIGINT); code != 0 {
		t.Fatalf("exit %d after SIGINT, want 0", code)
	}
}

// count0 reports whether the schema holds an outbox table.
func (e *pgEnv) count0(t *testing.T) bool {
	t.Helper()
	var exists bool
	if err := e.pool.QueryRow(t.Context(), "SELECT to_regclass($1) IS NOT NULL", e.table()).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	return exists
}

// TestRelayMigrateFlag: --migrate migrates the schema at start-up.
func TestRelayMigrateFlag(t *testing.T) {
	t.Parallel()
	db, js := newPG(t), newJetStream(t)
	p := startRelay(t, relayArgs(db, js, "--migrate")...)
	p.waitReady(t, http.StatusOK)
	db.insert(t, "order_placed", 3)
	waitFor(t, "3 messages in the stream", func() bool { return js.messages(t) == 3 })
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
}

// TestRelayExitsOnPermanentStoreError: dropping the outbox table under a
// running relay ends it with exit status 1 and one line on stderr's end.
func TestRelayExitsOnPermanentStoreError(t *testing.T) {
	t.Parallel()
	db, js := newPG(t), newJetStream(t)
	db.migrate(t)
	p := startRelay(t, relayArgs(db, js)...)
	p.waitReady(t, http.StatusOK)
	if _, err := db.pool.Exec(t.Context(), "DROP TABLE "+db.table()); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != 1 {
		t.Fatalf("exit %d after the table was dropped, want 1\n%s", code, p.stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(p.stderr.String()), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "reliar: ") || !strings.Contains(last, "outbox") {
		t.Errorf("last stderr line %q, want the store error", last)
	}
}

// TestRelayRetention: the maintainer deletes published rows older than
// --published-retention and dead rows older than --dead-retention, and
// nothing younger.
func TestRelayRetention(t *testing.T) {
	t.Parallel()
	db, js := newPG(t), newJetStream(t)
	db.migrate(t)
	db.insert(t, "order_placed", 10)
	if _, err := db.pool.Exec(t.Context(), `INSERT INTO `+db.table()+` (id, message_type, payload, dead_at, dead_reason)
		VALUES (gen_random_uuid(), 'old_dead', '\x00', now() - interval '30 days', 'permanent'),
		       (gen_random_uuid(), 'young_dead', '\x00', now() - interval '1 day', 'permanent')`); err != nil {
		t.Fatal(err)
	}
	p := startRelay(t, relayArgs(db, js, "--maintenance-interval", "200ms", "--published-retention", "1h")...)
	waitFor(t, "every row published", func() bool { return db.count(t, "published_at IS NOT NULL") == 10 })
	if _, err := db.pool.Exec(t.Context(), `UPDATE `+db.table()+` SET published_at = now() - interval '2 hours'
		WHERE id IN (SELECT id FROM `+db.table()+` WHERE published_at IS NOT NULL ORDER BY sequence LIMIT 6)`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the aged rows deleted", func() bool { return db.count(t, "published_at IS NOT NULL") == 4 })
	waitFor(t, "the old dead row deleted", func() bool { return db.count(t, "message_type = 'old_dead'") == 0 })
	if n := db.count(t, "message_type = 'young_dead'"); n != 1 {
		t.Errorf("young dead rows: %d, want 1", n)
	}
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
}

// TestRelayEventsFileAndDispatchers: two dispatchers polling only write
// every event to --events-file; each message is published once.
func TestRelayEventsFileAndDispatchers(t *testing.T) {
	t.Parallel()
	db, js := newPG(t), newJetStream(t)
	db.migrate(t)
	ids := db.insert(t, "order_placed", 40)
	events := filepath.Join(t.TempDir(), "events.jsonl")
	p := startRelay(t, relayArgs(db, js, "--dispatchers", "2", "--batch-size", "5", "--max-in-flight", "10", "--no-listen", "--events-file", events)...)
	waitFor(t, "every row published", func() bool { return db.count(t, "published_at IS NOT NULL") == 40 })
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	f, err := os.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := outbox.ReadEvents(f)
	if err != nil {
		t.Fatal(err)
	}
	published := map[string]int{}
	workers := map[string]bool{}
	for _, e := range evs {
		if e.Kind == outbox.EventPublished {
			workers[e.Worker] = true
			for _, id := range e.IDs {
				published[id.String()]++
			}
		}
	}
	for _, id := range ids {
		if published[id] != 1 {
			t.Errorf("message %s published %d times in the events, want 1", id, published[id])
		}
	}
	if len(workers) == 0 || len(workers) > 2 {
		t.Errorf("events name %d workers, want 1 or 2", len(workers))
	}
}

// TestRelayBadInput: bad flags exit 2 with one line on stderr, nothing on
// stdout, secrets masked.
func TestRelayBadInput(t *testing.T) {
	t.Parallel()
	db := "postgres://u:hunter2@127.0.0.1:5432/test"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no broker", []string{"--database-url", db}, "--broker is required"},
		{"no database", []string{"--broker", natsURL}, "--database-url is required"},
		{"unknown broker scheme", []string{"--database-url", db, "--broker", "mqtt://127.0.0.1"}, "unknown scheme"},
		{"option of another broker", []string{"--database-url", db, "--broker", "amqp://u:hunter2@127.0.0.1", "--topic", "x"}, "--topic does not apply"},
		{"lease shorter than publish timeout", []string{"--database-url", db, "--broker", natsURL, "--lease", "1s", "--publish-timeout", "2s"}, "--lease"},
		{"unknown ordering", []string{"--database-url", db, "--broker", natsURL, "--ordering", "sideways"}, "--ordering"},
		{"unknown fairness", []string{"--database-url", db, "--broker", natsURL, "--fair", "sideways"}, "--fair"},
		{"per-tenant cap without fair", []string{"--database-url", db, "--broker", natsURL, "--max-in-flight-per-tenant", "10"}, "--max-in-flight-per-tenant needs --fair tenant"},
		{"negative dispatchers", []string{"--database-url", db, "--broker", natsURL, "--dispatchers", "-1"}, "--dispatchers"},
		{"negative retention", []string{"--database-url", db, "--broker", natsURL, "--published-retention", "-1h"}, "--published-retention"},
		{"bad metrics address", []string{"--database-url", db, "--broker", natsURL, "--metrics-addr", "nope"}, "--metrics-addr"},
		{"webhook without secret", []string{"--database-url", db, "--broker", "https://u:hunter2@hooks.example.com/x"}, "secret"},
		{"bad webhook secret", []string{"--database-url", db, "--broker", "https://hooks.example.com/x", "--webhook-secret", "not base64!"}, "secret"},
		{"bad kafka URL", []string{"--database-url", db, "--broker", "kafka://a:1/path"}, "kafka://"},
		{"two default kafka topics", []string{"--database-url", db, "--broker", "kafka://127.0.0.1:9092", "--topic", "a,b"}, "two default topics"},
		{"bad schema", []string{"--database-url", db, "--broker", natsURL, "--schema", "x; drop"}, "schema"},
		{"unknown flag", []string{"--database-url", db, "--broker", natsURL, "--bogus"}, "unknown flag"},
		{"bad subject prefix", []string{"--database-url", postgresURL, "--broker", natsURL, "--subject-prefix", "a..b"}, "subject prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), relayWait)
			defer cancel()
			args := append([]string{"relay", "--metrics-addr", "127.0.0.1:0", "--schema", "relay_bad_" + suffix(t)}, tt.args...)
			r := command(t, ctx, t.TempDir(), t.TempDir(), nil, binary, args...)
			lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
			last := lines[len(lines)-1]
			if r.code != 2 || r.stdout != "" || !strings.HasPrefix(last, "reliar: ") || !strings.Contains(last, tt.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing, a last line with %q", r.code, r.stdout, r.stderr, tt.want)
			}
			if strings.Contains(r.stderr, "hunter2") {
				t.Errorf("stderr %q shows a password", r.stderr)
			}
		})
	}
}

// TestRelayKafka publishes to an in-process Kafka (kfake) over TCP, one
// message type to a topic of its own and the rest to the default topic.
func TestRelayKafka(t *testing.T) {
	t.Parallel()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "shipments", "orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	db := newPG(t)
	db.migrate(t)
	placed := db.insert(t, "order_placed", 6)
	shipped := db.insert(t, "order_shipped", 4)
	p := startRelay(t, append([]string{"--database-url", postgresURL, "--schema", db.schema,
		"--broker", "kafka://" + strings.Join(cluster.ListenAddrs(), ","), "--topic", "order_shipped=shipments", "--topic", "orders"}, fastFlags...)...)
	p.waitReady(t, http.StatusOK)
	if got := consumeKafka(t, cluster, "orders", 6); !sameIDs(got, placed) {
		t.Errorf("topic orders holds %v, want %v", got, placed)
	}
	if got := consumeKafka(t, cluster, "shipments", 4); !sameIDs(got, shipped) {
		t.Errorf("topic shipments holds %v, want %v", got, shipped)
	}
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
}

// consumeKafka reads n records of topic and returns their message ids.
func consumeKafka(t *testing.T, c *kfake.Cluster, topic string, n int) []string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(t.Context(), relayWait)
	defer cancel()
	var ids []string
	for len(ids) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("topic %s: %d of %d records: %v", topic, len(ids), n, ctx.Err())
		}
		for _, r := range fs.Records() {
			id, err := kafkapub.MessageID(r)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id.String())
		}
	}
	return ids
}

// sameIDs reports whether a and b hold the same ids in any order.
func sameIDs(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestRelayWebhook posts to an httptest receiver that checks every
// signature; the secret comes from the environment and never shows.
func TestRelayWebhook(t *testing.T) {
	t.Parallel()
	secret := webhook.NewSecret()
	var (
		mu  sync.Mutex
		got = map[string]int{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = webhook.Verify(secret, r.Header, body, 0)
		}
		if err != nil {
			t.Errorf("receiver: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		id, err := webhook.MessageID(r.Header)
		if err != nil {
			t.Errorf("receiver: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		mu.Lock()
		got[id.String()]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	db := newPG(t)
	db.migrate(t)
	ids := db.insert(t, "order_placed", 8)
	p := startRelayEnv(t, []string{"RELIAR_WEBHOOK_SECRET=" + secret}, append([]string{"--database-url", postgresURL,
		"--schema", db.schema, "--broker", srv.URL + "/hooks/orders"}, fastFlags...)...)
	waitFor(t, "8 deliveries", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 8
	})
	for _, id := range ids {
		mu.Lock()
		n := got[id]
		mu.Unlock()
		if n < 1 {
			t.Errorf("message %s not delivered", id)
		}
	}
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
	if strings.Contains(p.stderr.String(), strings.TrimPrefix(secret, "whsec_")) {
		t.Error("stderr shows the webhook secret")
	}
}
