package relay

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	amqp091 "github.com/rabbitmq/amqp091-go"

	"github.com/reliar/reliar/cmd/reliar/internal/broker"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/pgstore"
)

// The services the tests use; they fail when one is missing.
const (
	postgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	natsURL     = "nats://127.0.0.1:4222"
	amqpURL     = "amqp://guest:guest@127.0.0.1:5672/"
	waitTimeout = 30 * time.Second
)

func randomName(prefix string) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// schema is a fresh, unmigrated PostgreSQL schema, dropped when the test
// ends.
type schema struct {
	pool *pgxpool.Pool
	name string
}

func newSchema(t *testing.T) *schema {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), postgresURL)
	if err != nil {
		t.Fatal(err)
	}
	s := &schema{pool: pool, name: randomName("relay_unit_")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{s.name}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema: %v", err)
		}
		pool.Close()
	})
	return s
}

func (s *schema) table() string { return pgx.Identifier{s.name, "outbox"}.Sanitize() }

func (s *schema) migrate(t *testing.T) {
	t.Helper()
	if err := pgstore.Migrate(t.Context(), s.pool, pgstore.WithSchema(s.name)); err != nil {
		t.Fatal(err)
	}
}

func (s *schema) exec(t *testing.T, sql string) {
	t.Helper()
	if _, err := s.pool.Exec(t.Context(), sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// newStream creates a JetStream stream for prefix.>, deleted when the test
// ends, and returns a function counting its messages.
func newStream(t *testing.T, prefix string) func() int {
	t.Helper()
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: prefix, Subjects: []string{prefix + ".>"}, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = js.DeleteStream(context.Background(), prefix)
		nc.Close()
	})
	return func() int {
		info, err := st.Info(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return int(info.State.Msgs)
	}
}

// testConfig is a quick relay over s publishing to brokerURL.
func testConfig(t *testing.T, s *schema, brokerURL string, o broker.Options) Config {
	t.Helper()
	loc, err := storeurl.Parse(postgresURL)
	if err != nil {
		t.Fatal(err)
	}
	bl, err := broker.Parse(brokerURL, o)
	if err != nil {
		t.Fatal(err)
	}
	st := outbox.DefaultSettings()
	st.PollInterval, st.IdlePollInterval, st.StatsInterval = 20*time.Millisecond, 100*time.Millisecond, 100*time.Millisecond
	st.Lease, st.PublishTimeout, st.StoreTimeout, st.DrainTimeout = 10*time.Second, 2*time.Second, 2*time.Second, 5*time.Second
	m := outbox.DefaultMaintainerSettings()
	m.Interval = 100 * time.Millisecond
	return Config{
		Store: loc, StoreOptions: storeurl.Options{Schema: s.name, Logger: quiet}, Broker: bl,
		Dispatchers: 2, Settings: st, Maintainer: &m, MetricsAddr: "127.0.0.1:0",
		ProbeInterval: 100 * time.Millisecond, Logger: quiet,
	}
}

// relayRun is a relay run in a goroutine of the test.
type relayRun struct {
	addr   string
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T, cfg Config) *relayRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan string, 1)
	cfg.OnServing = func(addr string) { served <- addr }
	r := &relayRun{cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(waitTimeout):
			t.Error("Run did not return after the test")
		}
	})
	select {
	case r.addr = <-served:
	case err := <-r.done:
		t.Fatalf("Run returned before serving: %v", err)
	case <-time.After(waitTimeout):
		t.Fatal("the relay did not serve")
	}
	return r
}

// stop cancels the run and returns Run's error.
func (r *relayRun) stop(t *testing.T) error {
	t.Helper()
	r.cancel()
	return r.wait(t)
}

func (r *relayRun) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		return err
	case <-time.After(waitTimeout):
		t.Fatal("Run did not return")
		return nil
	}
}

func (r *relayRun) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + r.addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// eventually polls cond until it holds or the test times out.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (r *relayRun) readyz(t *testing.T, code int, contains string) func() bool {
	return func() bool {
		c, body := r.get(t, "/readyz")
		return c == code && strings.Contains(body, contains)
	}
}

// TestRunLifecycle: not ready on an unmigrated schema, ready once it is
// migrated, publishes, and returns nil when cancelled.
func TestRunLifecycle(t *testing.T) {
	s := newSchema(t)
	prefix := randomName("relay_unit_")
	count := newStream(t, prefix)
	cfg := testConfig(t, s, natsURL, broker.Options{SubjectPrefix: prefix})
	logs := &syncLog{}
	cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	r := start(t, cfg)
	eventually(t, "/readyz to report the schema", r.readyz(t, http.StatusServiceUnavailable, "version 0"))
	// In the words of the CLI: run reliar migrate, not a Go function.
	if _, body := r.get(t, "/readyz"); !strings.Contains(body, "run 'reliar migrate'") || strings.Contains(body, "pgstore.Migrate") {
		t.Errorf("/readyz on an unmigrated schema: %q, want it to say run 'reliar migrate'", body)
	}
	s.migrate(t)
	eventually(t, "/readyz to answer 200", r.readyz(t, http.StatusOK, "ready"))
	s.exec(t, `INSERT INTO `+s.table()+` (id, message_type, payload) SELECT gen_random_uuid(), 'order_placed', '\x7b7d' FROM generate_series(1, 25)`)
	eventually(t, "25 messages", func() bool { return count() == 25 })
	eventually(t, "the metrics", func() bool {
		_, body := r.get(t, "/metrics")
		return strings.Contains(body, `reliar_outbox_published_total{message_type="order_placed"} 25`)
	})
	if err := r.stop(t); err != nil {
		t.Fatalf("Run = %v, want nil after cancellation", err)
	}
	// The drain is logged before the end.
	out := strings.Join(logs.lines("INFO"), "\n") + strings.Join(logs.lines("WARN"), "\n")
	draining, stopped := strings.Index(out, `msg="relay draining"`), strings.Index(out, `msg="relay stopped"`)
	if draining < 0 || stopped < 0 || draining > stopped {
		t.Errorf("logs at cancellation: want relay draining, then relay stopped:\n%s", out)
	}
	if strings.Contains(out, "pgstore.Migrate") {
		t.Errorf("the relay's logs tell an operator to call a Go function:\n%s", out)
	}
}

// TestRunDroppedTable: a dropped table is a failure (exit status 1).
func TestRunDroppedTable(t *testing.T) {
	s := newSchema(t)
	s.migrate(t)
	r := start(t, testConfig(t, s, natsURL, broker.Options{SubjectPrefix: randomName("relay_unit_")}))
	eventually(t, "/readyz to answer 200", r.readyz(t, http.StatusOK, "ready"))
	s.exec(t, "DROP TABLE "+s.table())
	err := r.wait(t)
	if exitcode.Code(err, 0) != exitcode.Failure || !strings.Contains(err.Error(), "outbox") {
		t.Fatalf("Run = %v, want a failure about the table", err)
	}
}

// TestRunBrokerDown: a NATS server that does not answer leaves the relay
// running but not ready; a RabbitMQ that does not answer keeps it starting.
func TestRunBrokerDown(t *testing.T) {
	tests := []struct{ name, url, want string }{
		{"nats", "nats://127.0.0.1:1", "broker: natspub: not connected"},
		{"amqp", "amqp://guest:guest@127.0.0.1:1/", "starting: broker: amqp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchema(t)
			s.migrate(t)
			r := start(t, testConfig(t, s, tt.url, broker.Options{}))
			eventually(t, "/readyz to report the broker", r.readyz(t, http.StatusServiceUnavailable, tt.want))
			if err := r.stop(t); err != nil {
				t.Fatalf("Run = %v, want nil", err)
			}
		})
	}
}

// TestRunMissingExchange: a RabbitMQ exchange that does not exist is a
// misconfiguration an operator fixes (the publishers' error rule in
// ARCHITECTURE.md, "Invariants"): the relay waits, /readyz answering 503
// with the cause, and becomes ready once the exchange is declared.
func TestRunMissingExchange(t *testing.T) {
	s := newSchema(t)
	s.migrate(t)
	exchange := randomName("relay_missing_")
	r := start(t, testConfig(t, s, amqpURL, broker.Options{Exchange: exchange}))
	eventually(t, "/readyz to name the missing exchange", r.readyz(t, http.StatusServiceUnavailable, "NOT_FOUND"))

	conn, err := amqp091.Dial(amqpURL)
	if err != nil {
		t.Fatalf("RabbitMQ: %v", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatalf("channel: %v", err)
	}
	if err := ch.ExchangeDeclare(exchange, amqp091.ExchangeTopic, false, false, false, false, nil); err != nil {
		t.Fatalf("declare exchange: %v", err)
	}
	defer func() {
		if err := ch.ExchangeDelete(exchange, false, false); err != nil {
			t.Errorf("delete exchange %s: %v", exchange, err)
		}
	}()
	eventually(t, "/readyz to answer 200", r.readyz(t, http.StatusOK, "ready"))
	if err := r.stop(t); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
}

// TestRunMigrateAndEvents: Migrate migrates, and the events file gets the
// dispatchers' events.
func TestRunMigrateAndEvents(t *testing.T) {
	s := newSchema(t)
	prefix := randomName("relay_unit_")
	count := newStream(t, prefix)
	cfg := testConfig(t, s, natsURL, broker.Options{SubjectPrefix: prefix})
	cfg.Migrate, cfg.NoWakeups = true, true
	cfg.EventsFile = t.TempDir() + "/events.jsonl"
	r := start(t, cfg)
	eventually(t, "/readyz to answer 200", r.readyz(t, http.StatusOK, "ready"))
	s.exec(t, `INSERT INTO `+s.table()+` (id, message_type, payload) VALUES (gen_random_uuid(), 'order_placed', '\x7b7d')`)
	eventually(t, "1 message", func() bool { return count() == 1 })
	if err := r.stop(t); err != nil {
		t.Fatal(err)
	}
}
