package rig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/reliar/reliar/outbox"
)

// RelayArgs are the relay flags a scenario varies. Zero values take the
// suite's short defaults (see defaults).
type RelayArgs struct {
	// Broker is the NATS URL; defaults to the shared server. Point it at a
	// proxy to inject broker faults.
	Broker string
	// DatabaseURL defaults to the run's; point it at a proxy to slow the
	// relay's store path.
	DatabaseURL string
	// AppName is the PostgreSQL application_name of the relay's
	// connections, for pg_terminate_backend; defaults to the relay's name.
	AppName                                      string
	Dispatchers, BatchSize, MaxInFlight          int
	Lease, PublishTimeout, StoreTimeout          time.Duration
	DrainTimeout, PollInterval, IdlePollInterval time.Duration
	PerKey, NoListen                             bool
}

func (a RelayArgs) withDefaults(dbURL string) RelayArgs {
	set := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	seti := func(n *int, v int) {
		if *n == 0 {
			*n = v
		}
	}
	if a.Broker == "" {
		a.Broker = NATSURL
	}
	if a.DatabaseURL == "" {
		a.DatabaseURL = dbURL
	}
	seti(&a.Dispatchers, 2)
	seti(&a.BatchSize, 20)
	seti(&a.MaxInFlight, 20)
	set(&a.Lease, 3*time.Second)
	set(&a.PublishTimeout, time.Second)
	set(&a.StoreTimeout, 500*time.Millisecond)
	set(&a.DrainTimeout, 2*time.Second)
	set(&a.PollInterval, 50*time.Millisecond)
	set(&a.IdlePollInterval, 200*time.Millisecond)
	return a
}

func (a RelayArgs) flags(r *Run, dbURL, events string) []string {
	d := func(v time.Duration) string { return v.String() }
	f := []string{
		"--database-url", dbURL, "--schema", r.Name, "--broker", a.Broker, "--subject-prefix", r.Name,
		"--metrics-addr", "127.0.0.1:0", "--events-file", events,
		"--dispatchers", strconv.Itoa(a.Dispatchers), "--batch-size", strconv.Itoa(a.BatchSize),
		"--max-in-flight", strconv.Itoa(a.MaxInFlight), "--lease", d(a.Lease),
		"--publish-timeout", d(a.PublishTimeout), "--store-timeout", d(a.StoreTimeout),
		"--drain-timeout", d(a.DrainTimeout), "--poll-interval", d(a.PollInterval),
		"--idle-poll-interval", d(a.IdlePollInterval),
	}
	if a.PerKey {
		f = append(f, "--ordering", "per-key")
	}
	if a.NoListen {
		f = append(f, "--no-listen")
	}
	return f
}

// Relay is one relay child process.
type Relay struct {
	Name   string
	Args   RelayArgs
	events string
	stderr string
	cmd    *exec.Cmd
	done   chan struct{}
	err    error // the exit, once done is closed
	// killed marks a relay the scenario killed on purpose: its exit
	// status is not checked.
	killed atomic.Bool
}

// StartRelay starts a relay named name (unique within the run).
func (r *Run) StartRelay(name string, a RelayArgs) *Relay {
	r.t.Helper()
	a = a.withDefaults(r.dbURL)
	if a.AppName == "" {
		a.AppName = r.Name + "_" + name
	}
	p := &Relay{
		Name:   name,
		Args:   a,
		events: filepath.Join(r.dir, name+".events.jsonl"),
		stderr: filepath.Join(r.dir, name+".stderr"),
		done:   make(chan struct{}),
	}
	errFile, err := os.OpenFile(p.stderr, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		r.t.Fatalf("relay %s: %v", name, err)
	}
	p.cmd = exec.Command(r.bin.Path, r.bin.args(a.flags(r, withAppName(a.DatabaseURL, a.AppName), p.events))...)
	p.cmd.Stderr = errFile
	p.cmd.Stdout = errFile
	if err := p.cmd.Start(); err != nil {
		_ = errFile.Close()
		r.t.Fatalf("relay %s: start: %v", name, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		_ = errFile.Close()
		close(p.done)
	}()
	r.mu.Lock()
	r.relays = append(r.relays, p)
	r.mu.Unlock()
	return p
}

// Signal sends sig to the relay.
func (p *Relay) Signal(sig syscall.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("relay %s: signal %v: %w", p.Name, sig, err)
	}
	return nil
}

// Kill kills the relay with SIGKILL and waits for it to be gone.
func (p *Relay) Kill() {
	p.killed.Store(true)
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// Stop sends SIGTERM and waits, at most until ctx ends (then kills it). It
// returns the time the relay took to exit and its exit error.
func (p *Relay) Stop(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	if err := p.Signal(syscall.SIGTERM); err != nil && !p.exited() {
		return 0, err
	}
	select {
	case <-p.done:
		return time.Since(start), p.err
	case <-ctx.Done():
		p.Kill()
		return time.Since(start), fmt.Errorf("relay %s: no exit after SIGTERM: %w", p.Name, ctx.Err())
	}
}

// WaitStarted waits, at most until ctx ends, for the relay to have started:
// its first log line on stderr, written after the process installed its
// signal handlers. A SIGTERM sent earlier would kill it with the signal's
// default action instead of draining it. It returns false when ctx ended
// or the process exited first.
func (p *Relay) WaitStarted(ctx context.Context) bool {
	for {
		if p.exited() {
			return false
		}
		if fi, err := os.Stat(p.stderr); err == nil && fi.Size() > 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (p *Relay) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Exited reports whether the process ended, and its exit error.
func (p *Relay) Exited() (bool, error) {
	if !p.exited() {
		return false, nil
	}
	return true, p.err
}

// Events reads the events the relay wrote so far.
func (p *Relay) Events() ([]outbox.Event, error) {
	f, err := os.Open(p.events)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("relay %s: events: %w", p.Name, err)
	}
	defer f.Close()
	evs, err := outbox.ReadEvents(f)
	if err != nil {
		return nil, fmt.Errorf("relay %s: events: %w", p.Name, err)
	}
	return evs, nil
}

// Stderr returns what the relay wrote to stderr and stdout.
func (p *Relay) Stderr() string {
	b, _ := os.ReadFile(p.stderr)
	return string(b)
}
