package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/reliar/reliar/store/pgstore"
)

// relayWait bounds every wait of the relay tests.
const relayWait = 30 * time.Second

// suffix returns a random name suffix unique to a test.
func suffix(t testing.TB) string {
	t.Helper()
	var b [5]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// pgEnv is a fresh, unmigrated PostgreSQL schema for one test, dropped
// when it ends.
type pgEnv struct {
	pool   *pgxpool.Pool
	schema string
}

func newPG(t testing.TB) *pgEnv {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), postgresURL)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	e := &pgEnv{pool: pool, schema: "relay_test_" + suffix(t)}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, "DROP SCHEMA IF EXISTS "+e.quoted()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", e.schema, err)
		}
		pool.Close()
	})
	return e
}

func (e *pgEnv) quoted() string { return pgx.Identifier{e.schema}.Sanitize() }

func (e *pgEnv) table() string { return pgx.Identifier{e.schema, "outbox"}.Sanitize() }

func (e *pgEnv) migrate(t testing.TB) {
	t.Helper()
	if err := pgstore.Migrate(t.Context(), e.pool, pgstore.WithSchema(e.schema)); err != nil {
		t.Fatalf("migrate %s: %v", e.schema, err)
	}
}

// insert adds n rows of type typ by plain SQL, only the required columns,
// as a producer in any language would, and returns their ids.
func (e *pgEnv) insert(t testing.TB, typ string, n int) []string {
	t.Helper()
	rows, err := e.pool.Query(t.Context(), `INSERT INTO `+e.table()+` (id, message_type, payload)
		SELECT gen_random_uuid(), $1, convert_to(format('{"n":%s}', i), 'UTF8') FROM generate_series(1, $2) AS i
		RETURNING id::text`, typ, n)
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	return ids
}

// count counts the rows of the outbox matching a condition.
func (e *pgEnv) count(t testing.TB, where string) int {
	t.Helper()
	var n int
	if err := e.pool.QueryRow(t.Context(), `SELECT count(*) FROM `+e.table()+` WHERE `+where).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", where, err)
	}
	return n
}

// jsEnv is a JetStream stream of its own, deleted when the test ends.
type jsEnv struct {
	nc     *nats.Conn
	stream jetstream.Stream
	prefix string
}

func newJetStream(t testing.TB) *jsEnv {
	t.Helper()
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatalf("nats: %v", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	name := "relay_test_" + suffix(t)
	s, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := js.DeleteStream(ctx, name); err != nil {
			t.Errorf("delete stream %s: %v", name, err)
		}
		nc.Close()
	})
	return &jsEnv{nc: nc, stream: s, prefix: name}
}

// messages returns how many messages the stream holds.
func (e *jsEnv) messages(t testing.TB) int {
	t.Helper()
	info, err := e.stream.Info(t.Context())
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	return int(info.State.Msgs)
}

// relayProc is a relay running as a child process.
type relayProc struct {
	cmd    *exec.Cmd
	stderr *syncBuffer
	stdout *syncBuffer
	done   chan struct{}
	err    error
	addr   string
}

// servingLine is the relay's log line naming its metrics address, in the
// text or the JSON format.
var servingLine = regexp.MustCompile(`msg="relay serving[^"]*" addr=(\S+)|"msg":"relay serving[^"]*","addr":"([^"]+)"`)

// startRelay starts `reliar relay args...` with a metrics address of its
// own and waits until it serves; the process is killed when the test ends
// if it still runs.
func startRelay(t testing.TB, args ...string) *relayProc {
	t.Helper()
	return startRelayEnv(t, nil, args...)
}

// startRelayEnv is startRelay with environment variables.
func startRelayEnv(t testing.TB, env []string, args ...string) *relayProc {
	t.Helper()
	args = append([]string{"relay", "--metrics-addr", "127.0.0.1:0"}, args...)
	p := &relayProc{cmd: exec.Command(binary, args...), stderr: &syncBuffer{}, stdout: &syncBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append([]string{"HOME=" + t.TempDir()}, env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start relay: %v", err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("relay stderr:\n%s", p.stderr.String())
		}
	})
	waitFor(t, "the relay to serve", func() bool {
		if m := servingLine.FindStringSubmatch(p.stderr.String()); m != nil {
			p.addr = m[1] + m[2]
			return true
		}
		select {
		case <-p.done:
			t.Fatalf("relay exited before serving: %v\n%s", p.err, p.stderr.String())
		default:
		}
		return false
	})
	return p
}

// stop sends sig and returns the exit status and how long the relay took.
func (p *relayProc) stop(t *testing.T, sig syscall.Signal) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal relay: %v", err)
	}
	return p.wait(t), time.Since(start)
}

// wait waits for the relay to exit and returns its status.
func (p *relayProc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(relayWait):
		t.Fatalf("relay did not exit within %v\n%s", relayWait, p.stderr.String())
	}
	var exitErr *exec.ExitError
	switch {
	case p.err == nil:
		return 0
	case errors.As(p.err, &exitErr):
		return exitErr.ExitCode()
	}
	t.Fatalf("relay: %v", p.err)
	return -1
}

// get fetches one of the relay's endpoints.
func (p *relayProc) get(t *testing.T, path string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// waitReady waits until /readyz answers want.
func (p *relayProc) waitReady(t *testing.T, want int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("/readyz to answer %d", want), func() bool {
		code, _ := p.get(t, "/readyz")
		return code == want
	})
}

// metric returns the value of one series on /metrics (0 when absent), for
// example `reliar_outbox_published_total{message_type="order_placed"}`.
func (p *relayProc) metric(t *testing.T, series string) float64 {
	t.Helper()
	code, body := p.get(t, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics answered %d", code)
	}
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("/metrics: %q: %v", line, err)
			}
			return f
		}
	}
	return 0
}

// waitFor polls cond until it holds, failing the test after relayWait.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(relayWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
