package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The services the tests use; they fail when one is missing.
const (
	postgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	natsURL     = "nats://127.0.0.1:4222"
)

// binary is the reliar command built for the tests, with the race detector
// when the tests have it.
var binary string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "reliar-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "reliar")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build reliar:", err)
		return 1
	}
	return m.Run()
}

// run is one run of a command as a subprocess.
type run struct {
	code           int
	stdout, stderr string
}

// command runs name with args in dir, with HOME set to home and only the
// environment variables in env besides PATH, TMPDIR and GOCACHE-like
// settings go needs.
func command(t *testing.T, ctx context.Context, dir, home string, env []string, name string, args ...string) run {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}, env...)
	for _, keep := range []string{"TMPDIR", "GOCACHE", "GOMODCACHE", "GOPATH", "GOPROXY", "GOFLAGS"} {
		if v, ok := os.LookupEnv(keep); ok {
			cmd.Env = append(cmd.Env, keep+"="+v)
		}
	}
	if name == "go" {
		// go needs a cache; a fresh HOME has none, so point it at the
		// test's own.
		cmd.Env = append(cmd.Env, "GOCACHE="+goEnv(t, "GOCACHE"), "GOMODCACHE="+goEnv(t, "GOMODCACHE"))
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		exitErr, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		code = exitErr.ExitCode()
	}
	return run{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func goEnv(t *testing.T, key string) string {
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", key, err)
	}
	return strings.TrimSpace(string(out))
}

// demoLine is the specified last line of reliar demo.
var demoLine = regexp.MustCompile(`^demo: committed=(\d+) rolled_back=(\d+) published=(\d+) delivered=(\d+) lost=(\d+) duplicates=(\d+) throughput=(\d+)/s p50=([\d.]+)ms p99=([\d.]+)ms$`)

// checkDemo checks a demo run: exit 0, the specified last line with
// committed = delivered = messages and lost = 0, and nothing after it.
func checkDemo(t *testing.T, r run, messages int) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d; stdout %q; stderr %q", r.code, r.stdout, r.stderr)
	}
	if r.stderr != "" {
		t.Fatalf("stderr %q, want nothing at the default log level", r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	if len(lines) < 2 || lines[len(lines)-1] != "" {
		t.Fatalf("stdout %q does not end with one newline", r.stdout)
	}
	last := lines[len(lines)-2]
	m := demoLine.FindStringSubmatch(last)
	if m == nil {
		t.Fatalf("last line %q does not match %v", last, demoLine)
	}
	n := strconv.Itoa(messages)
	if m[1] != n || m[4] != n || m[5] != "0" {
		t.Fatalf("last line %q: want committed=delivered=%s and lost=0", last, n)
	}
	t.Logf("%s", last)
}

// emptyDir fails when dir holds anything.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Fatalf("%s holds %d entries after the demo, first %q", dir, len(entries), entries[0].Name())
	}
}

// TestDemoWithNoFlags runs the binary as a user would, from a fresh HOME
// and working directory: nothing to install, nothing left behind. Without
// the race detector it runs the default of 10,000 messages.
func TestDemoWithNoFlags(t *testing.T) {
	home, work, tmp := t.TempDir(), t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var args []string
	messages := 10000
	if raceEnabled {
		messages = 500
		args = []string{"--messages", strconv.Itoa(messages)}
	}
	r := command(t, ctx, work, home, []string{"TMPDIR=" + tmp}, binary, append([]string{"demo"}, args...)...)
	checkDemo(t, r, messages)
	emptyDir(t, home)
	emptyDir(t, work)
	emptyDir(t, tmp)
}

func TestDemoOnPostgresAndNATS(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	messages := 2000
	if raceEnabled {
		messages = 500
	}
	r := command(t, ctx, t.TempDir(), t.TempDir(), nil, binary, "demo",
		"--messages", strconv.Itoa(messages), "--database-url", postgresURL, "--nats-url", natsURL)
	checkDemo(t, r, messages)
}

// TestDemoFromEnvironment sets everything through RELIAR_* variables.
func TestDemoFromEnvironment(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r := command(t, ctx, t.TempDir(), t.TempDir(), []string{
		"RELIAR_MESSAGES=300", "RELIAR_DATABASE_URL=" + postgresURL, "RELIAR_PRODUCERS=2",
	}, binary, "demo")
	checkDemo(t, r, 300)
}

// TestDemoInterrupted stops a long demo with SIGINT: it cleans up, says so
// on stderr and exits 1, leaving nothing behind.
func TestDemoInterrupted(t *testing.T) {
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "demo", "--messages", "1000000")
	cmd.Env = []string{"HOME=" + t.TempDir(), "TMPDIR=" + tmp}
	var stdout syncBuffer
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the demo announced its setup, so that it is mid-run.
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(stdout.String(), "dispatcher") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	exitErr, ok := err.(*exec.ExitError)
	if !ok || exitErr.ExitCode() != 1 {
		t.Fatalf("Wait = %v, want exit status 1; stderr %q", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "context canceled") || strings.Count(stderr.String(), "\n") != 1 {
		t.Fatalf("stderr %q, want one line about the cancellation", stderr.String())
	}
	emptyDir(t, tmp)
}

func TestMigrateBadURLAsSubprocess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tests := []struct {
		name string
		url  string
		code int
	}{
		{"unknown scheme", "redis://u:hunter2@127.0.0.1:6379", 2},
		{"malformed", "postgres://u:hunter2@127.0.0.1:notaport/x", 2},
		{"unreachable", "postgres://u:hunter2@127.0.0.1:1/x?connect_timeout=2", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := command(t, ctx, t.TempDir(), t.TempDir(), nil, binary, "migrate", "--database-url", tt.url)
			if r.code != tt.code || r.stdout != "" || strings.Count(r.stderr, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, nothing, one line", r.code, r.stdout, r.stderr, tt.code)
			}
			if strings.Contains(r.stderr, "hunter2") || !strings.Contains(r.stderr, "xxxxx") {
				t.Fatalf("stderr %q does not redact the password", r.stderr)
			}
		})
	}
}

// TestGoRunFromRepositoryRoot checks that `go run ./cmd/reliar demo` works
// from the root of the repository, through its go.work.
func TestGoRunFromRepositoryRoot(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("no go.work at the repository root: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	r := command(t, ctx, root, t.TempDir(), nil, "go", "run", "./cmd/reliar", "demo", "--messages", "200")
	checkDemo(t, r, 200)
}

// syncBuffer is a bytes.Buffer that a test may read while a process writes
// into it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
