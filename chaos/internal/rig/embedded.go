package rig

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/reliar/reliar"
)

// EmbeddedArgs configure the producer that embeds the dispatcher.
type EmbeddedArgs struct {
	// StoreURL is the database URL of the store's own pool (claims,
	// outcome writes, LISTEN); point it at a proxy to cut them. The
	// producer's commits use the run's URL.
	StoreURL string
	// Broker is the NATS URL; defaults to the shared server.
	Broker string
	// Before and After are the messages committed before the pause and
	// after it, before the producer kills itself.
	Before, After int
	// Lease is its dispatcher's lease; defaults to 3s.
	Lease time.Duration
	// MaxInFlight is its dispatcher's; defaults to 20.
	MaxInFlight int
}

// WorkerPrefix begins the dispatcher's worker id, in locked_by (the
// dispatcher adds a suffix of its own).
func (e *Embedded) WorkerPrefix(r *Run) string { return "embedded-" + r.Name }

// Embedded is a running producer that embeds the dispatcher: a relay for
// the checker (its dispatcher's events count) whose end is a SIGKILL it
// sends itself.
type Embedded struct {
	*Relay
	stdin  io.WriteCloser
	stdout *bufio.Reader
	acked  string
}

// StartEmbedded starts the embedded producer named name. It returns once the
// producer committed its first messages and paused.
func (r *Run) StartEmbedded(ctx context.Context, name string, a EmbeddedArgs) *Embedded {
	r.t.Helper()
	if a.Lease == 0 {
		a.Lease = 3 * time.Second
	}
	if a.MaxInFlight == 0 {
		a.MaxInFlight = 20
	}
	if a.Broker == "" {
		a.Broker = NATSURL
	}
	p := &Relay{
		Name:   name,
		Args:   RelayArgs{AppName: r.Name + "_" + name},
		events: filepath.Join(r.dir, name+".events.jsonl"),
		stderr: filepath.Join(r.dir, name+".stderr"),
		done:   make(chan struct{}),
	}
	p.killed.Store(true) // it ends with a SIGKILL by design
	e := &Embedded{Relay: p, acked: filepath.Join(r.dir, name+".acked")}
	errFile, err := os.OpenFile(p.stderr, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		r.t.Fatalf("embedded %s: %v", name, err)
	}
	p.cmd = exec.Command(r.bin.Embedded,
		"--database-url", withAppName(r.dbURL, p.Args.AppName+"_producer"),
		"--store-url", withAppName(a.StoreURL, p.Args.AppName),
		"--schema", r.Name, "--broker", a.Broker, "--subject-prefix", r.Name,
		"--events-file", p.events, "--acked-file", e.acked,
		"--before", strconv.Itoa(a.Before), "--after", strconv.Itoa(a.After), "--lease", a.Lease.String(),
		"--max-in-flight", strconv.Itoa(a.MaxInFlight))
	p.cmd.Stderr = errFile
	if e.stdin, err = p.cmd.StdinPipe(); err != nil {
		r.t.Fatalf("embedded %s: %v", name, err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		r.t.Fatalf("embedded %s: %v", name, err)
	}
	e.stdout = bufio.NewReader(out)
	if err := p.cmd.Start(); err != nil {
		_ = errFile.Close()
		r.t.Fatalf("embedded %s: start: %v", name, err)
	}
	r.mu.Lock()
	r.relays = append(r.relays, p)
	r.mu.Unlock()
	line := make(chan string, 1)
	go func() {
		// "paused" is the producer's only line on stdout: once it is read,
		// Wait may close the pipe.
		s, _ := e.stdout.ReadString('\n')
		line <- s
		p.err = p.cmd.Wait()
		_ = errFile.Close()
		close(p.done)
	}()
	select {
	case s := <-line:
		if strings.TrimSpace(s) != "paused" {
			<-p.done
			r.t.Fatalf("embedded %s: want paused, got %q (%v); stderr:\n%s", name, s, p.err, p.Stderr())
		}
	case <-ctx.Done():
		_ = p.cmd.Process.Kill()
		<-p.done
		r.t.Fatalf("embedded %s: no pause: %v; stderr:\n%s", name, ctx.Err(), p.Stderr())
	}
	return e
}

// Resume lets the producer commit its last messages and kill itself, and
// waits for it to be gone. It fails the run unless the producer died of
// its SIGKILL; the ids it committed join the run's acknowledged commits.
func (e *Embedded) Resume(r *Run, ctx context.Context) []reliar.MessageID {
	r.t.Helper()
	if _, err := io.WriteString(e.stdin, "go\n"); err != nil {
		r.t.Fatalf("embedded %s: resume: %v", e.Name, err)
	}
	select {
	case <-e.done:
	case <-ctx.Done():
		r.t.Fatalf("embedded %s: still running: %v", e.Name, ctx.Err())
	}
	var exit *exec.ExitError
	if !errors.As(e.err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		r.t.Fatalf("embedded %s: want death by SIGKILL, got %v; stderr:\n%s", e.Name, e.err, e.Stderr())
	}
	b, err := os.ReadFile(e.acked)
	if err != nil {
		r.t.Fatalf("embedded %s: %v", e.Name, err)
	}
	var ids []reliar.MessageID
	for line := range strings.Lines(string(b)) {
		id, err := reliar.ParseMessageID(strings.TrimSpace(line))
		if err != nil {
			r.t.Fatalf("embedded %s: acked file: %v", e.Name, err)
		}
		ids = append(ids, id)
	}
	r.mu.Lock()
	r.acked = append(r.acked, ids...)
	r.mu.Unlock()
	return ids
}
