package main

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// tarpit is a TCP listener that counts the connections made to it and
// answers none: a database or broker that proves nothing connected.
type tarpit struct {
	ln    net.Listener
	conns atomic.Int64
}

func newTarpit(t *testing.T) *tarpit {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tp := &tarpit{ln: ln}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			tp.conns.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return tp
}

func (tp *tarpit) addr() string { return tp.ln.Addr().String() }

// TestBadFlagsRefusedBeforeAnyConnection: every flag is checked before the
// command connects anywhere: a bad value exits 2 with one line naming the
// flag, and the relay never says it is starting.
func TestBadFlagsRefusedBeforeAnyConnection(t *testing.T) {
	t.Parallel()
	db, nats := newTarpit(t), newTarpit(t)
	dbURL := "postgres://app:hunter2@" + db.addr() + "/shop?connect_timeout=2"
	relay := func(extra ...string) []string {
		return append([]string{"relay", "--database-url", dbURL, "--broker", "nats://" + nats.addr()}, extra...)
	}
	tests := []struct {
		name string
		args []string
		env  []string
		flag string
		more []string
	}{
		{"metrics port out of range", relay("--metrics-addr", "0.0.0.0:99999"), nil, "--metrics-addr", nil},
		{"migrate negative timeout", []string{"migrate", "--database-url", dbURL, "--timeout", "-1s"}, nil, "--timeout", nil},
		{"stats empty schema", []string{"stats", "--database-url", dbURL, "--schema", ""}, nil, "--schema", nil},
		{"relay subject prefix", relay("--subject-prefix", "a b.>"), nil, "--subject-prefix", nil},
		{"relay thousand dispatchers", relay("--dispatchers", "1000"), nil, "--dispatchers", []string{"64"}},
		{"relay dispatchers beyond the pool", relay("--dispatchers", "10"), nil, "--dispatchers", []string{"--pool-size"}},
		{"relay negative lease", relay("--lease", "-5s"), nil, "--lease", nil},
		{"relay negative breaker", relay("--breaker-threshold", "-1"), nil, "--breaker-threshold", []string{`"off"`}},
		{"relay retention off", relay("--dead-retention", "off"), nil, "--dead-retention", nil},
		{"relay lease against timeouts", relay("--lease", "3s", "--publish-timeout", "5s", "--store-timeout", "2s"), nil, "--lease", []string{"--store-timeout"}},
		{"relay bad value from env", relay(), []string{"RELIAR_MAX_IN_FLIGHT=-3"}, "--max-in-flight", []string{"RELIAR_MAX_IN_FLIGHT"}},
		{"purge young dead letters", []string{"purge", "--database-url", dbURL, "--dead-retention", "10m"}, nil, "--dead-retention", []string{"--force"}},
		{"purge negative retention", []string{"purge", "--database-url", dbURL, "--published-retention", "-1h"}, nil, "--published-retention", nil},
		{"serve bad port", []string{"serve", "--database-url", dbURL, "--addr", "127.0.0.1:70000"}, []string{"RELIAR_TOKEN=serve-token-0123456789"}, "--addr", nil},
		{"dead list bad limit", []string{"dead", "list", "--database-url", dbURL, "--limit", "5000"}, nil, "--limit", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			r := command(t, ctx, t.TempDir(), t.TempDir(), tt.env, binary, tt.args...)
			if r.code != 2 || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing, one line", r.code, r.stdout, r.stderr)
			}
			for _, w := range append([]string{tt.flag}, tt.more...) {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q does not name %s", r.stderr, w)
				}
			}
			if strings.Contains(r.stderr, "relay starting") || strings.Contains(r.stderr, "hunter2") {
				t.Errorf("stderr %q", r.stderr)
			}
		})
	}
	t.Cleanup(func() {
		if n := db.conns.Load() + nats.conns.Load(); n != 0 {
			t.Errorf("%d connections were made before the flags were refused", n)
		}
	})
}

// TestRelayLeaseAloneStarts: --lease alone is enough; the timeouts left
// unset shrink with it instead of being refused.
func TestRelayLeaseAloneStarts(t *testing.T) {
	t.Parallel()
	db, js := newPG(t), newJetStream(t)
	db.migrate(t)
	db.insert(t, "order_placed", 5)
	p := startRelay(t, "--database-url", postgresURL, "--schema", db.schema, "--broker", natsURL,
		"--subject-prefix", js.prefix, "--lease", "5s")
	p.waitReady(t, http.StatusOK)
	waitFor(t, "5 messages in the stream", func() bool { return js.messages(t) == 5 })
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
}

// TestRelayManyDispatchersOneListener: eight dispatchers share one store:
// one LISTEN connection, and never more connections than the start-up line
// announces.
func TestRelayManyDispatchersOneListener(t *testing.T) {
	t.Parallel()
	db, js := newPG(t), newJetStream(t)
	db.migrate(t)
	app := "relay_conns_" + suffix(t)
	p := startRelay(t, "--database-url", postgresURL+"&application_name="+app, "--schema", db.schema, "--broker", natsURL,
		"--subject-prefix", js.prefix, "--dispatchers", "8", "--pool-size", "20", "--idle-poll-interval", "100ms")
	p.waitReady(t, http.StatusOK)
	if !strings.Contains(p.stderr.String(), `db_connections="at most 21: a pool of 20, and 1 for wake-ups"`) {
		t.Errorf("the start-up line does not announce the connections:\n%s", p.stderr.String())
	}
	db.insert(t, "order_placed", 200)
	waitFor(t, "200 messages in the stream", func() bool { return js.messages(t) == 200 })
	// The wake-up listener takes its connection from the pool once one is
	// free, which under load can be after the 200 messages went by polls:
	// wait for it, and fail at once on a second one.
	var total, listening int
	count := func() {
		t.Helper()
		if err := db.pool.QueryRow(t.Context(), `SELECT count(*), count(*) FILTER (WHERE query LIKE 'LISTEN %')
			FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&total, &listening); err != nil {
			t.Fatal(err)
		}
		if listening > 1 || total > 21 {
			t.Fatalf("%d connections, %d of them listening; want at most 21 and exactly 1", total, listening)
		}
	}
	waitFor(t, "one listening connection", func() bool { count(); return listening == 1 })
	db.insert(t, "order_placed", 100)
	waitFor(t, "300 messages in the stream", func() bool { return js.messages(t) == 300 })
	if count(); listening != 1 {
		t.Errorf("%d connections, %d of them listening after more messages; want exactly 1", total, listening)
	}
	if code, _ := p.stop(t, syscall.SIGTERM); code != 0 {
		t.Fatalf("exit %d, want 0", code)
	}
}
