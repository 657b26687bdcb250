package rig

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/chaos/internal/netproxy"
	"github.com/reliar/reliar/chaos/internal/sink"
	"github.com/reliar/reliar/store/pgstore"
)

// The shared services.
const (
	PostgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	NATSURL     = "nats://127.0.0.1:4222"
)

// Options configure a run.
type Options struct {
	// DatabaseURL defaults to the shared PostgreSQL; a throwaway cluster's
	// URL for crash scenarios.
	DatabaseURL string
	// StreamMaxMsgs, when positive, limits the stream with DiscardNew, so
	// publishes beyond it are refused until RaiseStreamLimit.
	StreamMaxMsgs int64
}

// Run is one scenario run: its schema, stream, sink, relays and proxies.
type Run struct {
	t     testing.TB
	bin   Binary
	Name  string // schema, subject prefix, stream and application names
	dir   string
	dbURL string

	Pool   *pgxpool.Pool
	store  *pgstore.Store
	nc     *nats.Conn
	js     jetstream.JetStream
	stream string
	Sink   *sink.Sink

	mu       sync.Mutex
	relays   []*Relay
	proxies  []*netproxy.Proxy
	acked    []reliar.MessageID // commits that returned success
	produced int
}

// New prepares a run: a migrated schema and a stream named after the run,
// and a sink on its subjects. Everything is removed in t.Cleanup.
func New(t testing.TB, bin Binary, o Options) *Run {
	t.Helper()
	if o.DatabaseURL == "" {
		o.DatabaseURL = PostgresURL
	}
	var b [5]byte
	_, _ = rand.Read(b[:])
	r := &Run{t: t, bin: bin, Name: "chaos_" + hex.EncodeToString(b[:]), dir: t.TempDir(), dbURL: o.DatabaseURL}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pcfg, err := pgxpool.ParseConfig(withAppName(o.DatabaseURL, r.Name+"_producer"))
	if err != nil {
		t.Fatalf("rig: postgres: %v", err)
	}
	pcfg.MaxConns = 32 // commit-order races hold one transaction open while committing another
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		t.Fatalf("rig: postgres: %v", err)
	}
	r.Pool = pool
	t.Cleanup(r.cleanup)
	if err := pgstore.Migrate(ctx, pool, pgstore.WithSchema(r.Name)); err != nil {
		t.Fatalf("rig: migrate %s: %v", r.Name, err)
	}
	if r.store, err = pgstore.New(ctx, pool, pgstore.WithSchema(r.Name), pgstore.WithLogger(slog.New(slog.DiscardHandler))); err != nil {
		t.Fatalf("rig: store: %v", err)
	}
	if r.nc, err = nats.Connect(NATSURL, nats.Name("reliar-chaos-rig")); err != nil {
		t.Fatalf("rig: nats: %v", err)
	}
	if r.js, err = jetstream.New(r.nc); err != nil {
		t.Fatalf("rig: jetstream: %v", err)
	}
	cfg := jetstream.StreamConfig{Name: r.Name, Subjects: []string{r.Name + ".>"}, Storage: jetstream.MemoryStorage}
	if o.StreamMaxMsgs > 0 {
		cfg.MaxMsgs, cfg.Discard = o.StreamMaxMsgs, jetstream.DiscardNew
	}
	if _, err := r.js.CreateStream(ctx, cfg); err != nil {
		t.Fatalf("rig: stream: %v", err)
	}
	r.stream = r.Name
	if r.Sink, err = sink.Start(NATSURL, r.Name); err != nil {
		t.Fatalf("rig: %v", err)
	}
	return r
}

// DatabaseURL is the run's database URL.
func (r *Run) DatabaseURL() string { return r.dbURL }

// Proxy starts a fault-injecting proxy to target, closed at cleanup.
func (r *Run) Proxy(target string) *netproxy.Proxy {
	r.t.Helper()
	p, err := netproxy.Start(target)
	if err != nil {
		r.t.Fatalf("rig: %v", err)
	}
	r.mu.Lock()
	r.proxies = append(r.proxies, p)
	r.mu.Unlock()
	return p
}

// BrokerVia returns the NATS URL of a new proxy in front of the shared
// server, and the proxy.
func (r *Run) BrokerVia() (string, *netproxy.Proxy) {
	p := r.Proxy("127.0.0.1:4222")
	return "nats://" + p.Addr(), p
}

// DatabaseVia returns the run's database URL through a new proxy, and the
// proxy.
func (r *Run) DatabaseVia() (string, *netproxy.Proxy) {
	u, err := url.Parse(r.dbURL)
	if err != nil {
		r.t.Fatalf("rig: database URL: %v", err)
	}
	p := r.Proxy(u.Host)
	u.Host = p.Addr()
	return u.String(), p
}

// RaiseStreamLimit lifts the stream's message limit.
func (r *Run) RaiseStreamLimit(ctx context.Context) error {
	s, err := r.js.Stream(ctx, r.stream)
	if err != nil {
		return fmt.Errorf("rig: stream: %w", err)
	}
	cfg := s.CachedInfo().Config
	cfg.MaxMsgs = -1
	if _, err := r.js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("rig: raise stream limit: %w", err)
	}
	return nil
}

// TerminateRelayBackends runs pg_terminate_backend on every connection of
// the relay and returns how many it ended.
func (r *Run) TerminateRelayBackends(ctx context.Context, p *Relay) (int, error) {
	var n int
	err := r.Pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE application_name = $1 AND pid <> pg_backend_pid()) t`, p.Args.AppName).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("rig: terminate backends: %w", err)
	}
	return n, nil
}

// ReopenPool replaces the producer's pool, after a database restart.
func (r *Run) ReopenPool(ctx context.Context) error {
	r.Pool.Reset()
	return r.Pool.Ping(ctx)
}

func (r *Run) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.mu.Lock()
	relays, proxies := r.relays, r.proxies
	r.mu.Unlock()
	for _, p := range relays {
		if !p.exited() {
			p.Kill()
		}
	}
	for _, p := range proxies {
		if err := p.Close(ctx); err != nil {
			r.t.Errorf("rig: %v", err)
		}
	}
	if r.Sink != nil {
		r.Sink.Close()
	}
	if r.js != nil {
		if err := r.js.DeleteStream(ctx, r.stream); err != nil && r.stream != "" {
			r.t.Errorf("rig: delete stream: %v", err)
		}
	}
	if r.nc != nil {
		r.nc.Close()
	}
	if _, err := r.Pool.Exec(ctx, `DROP SCHEMA IF EXISTS "`+r.Name+`" CASCADE`); err != nil {
		r.t.Errorf("rig: drop schema: %v", err)
	}
	r.Pool.Close()
}

// withAppName sets application_name in a PostgreSQL URL.
func withAppName(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String()
}
