package publishertest_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/publishertest"
)

// memBroker is an in-memory broker: a queue of delivered messages. It lets
// the suite be checked without a network, and can be told to misbehave in
// one way (fault) to prove that the suite notices.
type memBroker struct {
	fault  string
	fixed  atomic.Bool
	mu     sync.Mutex
	closed bool
	queue  chan publishertest.Received
}

// memLimit is the memory broker's limit on a payload.
const memLimit = 1 << 10

var (
	errNoRoute = errors.New("membroker: no route")
	errClosed  = errors.New("membroker: closed")
)

func newMemBroker(fault string) *memBroker {
	return &memBroker{fault: fault, queue: make(chan publishertest.Received, 2048)}
}

func (b *memBroker) Publish(ctx context.Context, e *reliar.SerializedEnvelope) error {
	if err := ctx.Err(); err != nil && b.fault != "ignores-context" {
		return fmt.Errorf("membroker: publish %s: %w", e.ID, err)
	}
	if e.MessageType == "misconfigured" && !b.fixed.Load() && b.fault != "misconfig-permanent" {
		return fmt.Errorf("membroker: publish %s: %w", e.ID, errNoRoute)
	}
	if len(e.Payload) > memLimit {
		err := fmt.Errorf("membroker: publish %s: %d bytes over the limit", e.ID, len(e.Payload))
		if b.fault == "too-large-transient" {
			return err
		}
		return reliar.Permanent(err)
	}
	if e.MessageType == "refused" {
		err := fmt.Errorf("membroker: publish %s: %w", e.ID, errNoRoute)
		if b.fault == "refused-is-transient" {
			return err
		}
		return reliar.Permanent(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errClosed
	}
	r := publishertest.Received{Headers: reliar.CloudEventHeaders(e), Payload: e.Payload, Key: e.PartitionKey()}
	switch b.fault {
	case "raw-reserved-headers":
		maps.Copy(r.Headers, e.Headers)
	case "drops-user-headers":
		delete(r.Headers, "x-user")
	case "wrong-key":
		r.Key = e.ID.String()
	case "mutates-headers":
		e.Headers["x-added"] = "1"
	case "acks-before-stored":
		time.AfterFunc(time.Second, func() { b.queue <- r })
		return nil
	case "duplicates":
		b.queue <- r
	}
	b.queue <- r
	return nil
}

func (b *memBroker) PublishBatch(ctx context.Context, envs []*reliar.SerializedEnvelope) []error {
	res := make([]error, len(envs))
	for i, e := range envs {
		res[i] = b.Publish(ctx, e)
	}
	if b.fault == "short-batch" && len(res) > 0 {
		return res[:len(res)-1]
	}
	return res
}

func (b *memBroker) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed && b.fault == "close-twice-fails" {
		return errClosed
	}
	b.closed = true
	return nil
}

func (b *memBroker) Receive(ctx context.Context, n int) ([]publishertest.Received, error) {
	var got []publishertest.Received
	for len(got) < n {
		select {
		case r := <-b.queue:
			got = append(got, publishertest.Received{Headers: maps.Clone(r.Headers), Payload: r.Payload, Key: r.Key})
		case <-ctx.Done():
			return got, fmt.Errorf("membroker: receive: %w", ctx.Err())
		}
	}
	return got, nil
}

// memHarness returns a harness over a fresh memBroker with the given fault.
func memHarness(fault string) func(t *testing.T) publishertest.Harness {
	return func(t *testing.T) publishertest.Harness {
		b := newMemBroker(fault)
		return publishertest.Harness{
			Publisher: b,
			Receive:   b.Receive,
			Unroutable: func(t *testing.T) reliar.Publisher {
				return reliar.PublisherFunc(func(ctx context.Context, e *reliar.SerializedEnvelope) error {
					if fault == "unroutable-permanent" {
						return reliar.Permanent(errNoRoute)
					}
					return errNoRoute
				})
			},
			Misconfigured: func(t *testing.T) (reliar.Publisher, func()) {
				p := reliar.PublisherFunc(func(ctx context.Context, e *reliar.SerializedEnvelope) error {
					c := *e
					c.MessageType = "misconfigured"
					return b.Publish(ctx, &c)
				})
				return p, func() { b.fixed.Store(true) }
			},
			TooLarge: func(t *testing.T) *reliar.SerializedEnvelope {
				e := publishertest.Envelope(7)
				e.Payload = make([]byte, memLimit+1)
				return e
			},
			Reference: memReference,
			Broken: func(t *testing.T) reliar.Publisher {
				return reliar.PublisherFunc(func(ctx context.Context, e *reliar.SerializedEnvelope) error {
					<-ctx.Done()
					return fmt.Errorf("membroker: unreachable: %w", ctx.Err())
				})
			},
			Refused: func(t *testing.T, seq int) *reliar.SerializedEnvelope {
				e := publishertest.Envelope(seq)
				e.MessageType = "refused"
				return e
			},
			Features: publishertest.Features{
				Batch:             true,
				KeyIsPartitionKey: true,
				DedupByID:         fault == "no-dedup",
				Timeout:           500 * time.Millisecond,
				Limitations:       "in memory: nothing is durable and nothing is deduplicated",
			},
		}
	}
}

// memReference stands in for a CloudEvents SDK: every ce- header must
// name a valid attribute (lower-case letters and digits), or the SDK
// refuses the whole event, and the id must be the one sent.
func memReference(r publishertest.Received, sent *reliar.SerializedEnvelope) error {
	for k := range r.Headers {
		name, ok := strings.CutPrefix(strings.ToLower(k), "ce-")
		if !ok {
			continue
		}
		for _, c := range name {
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
				return fmt.Errorf("bad key %q", k)
			}
		}
	}
	if r.Headers[reliar.HeaderID] != sent.ID.String() {
		return fmt.Errorf("id %q, want %s", r.Headers[reliar.HeaderID], sent.ID)
	}
	return nil
}

func TestSuiteOnMemoryBroker(t *testing.T) {
	publishertest.Run(t, memHarness(""))
}

// faultEnv tells the test binary, run again by TestSuiteCatchesFaults,
// which fault TestFaultyBroker injects.
const faultEnv = "PUBLISHERTEST_FAULT"

// TestFaultyBroker runs the suite against a misbehaving broker. It does
// something only in the child process started by TestSuiteCatchesFaults,
// where it is expected to fail.
func TestFaultyBroker(t *testing.T) {
	if fault := os.Getenv(faultEnv); fault != "" {
		publishertest.Run(t, memHarness(fault))
	}
}

func TestSuiteCatchesFaults(t *testing.T) {
	tests := map[string][]string{ // fault: the subtests that must fail
		"drops-user-headers":   {"MappingRoundTrip"},
		"mutates-headers":      {"MappingRoundTrip"},
		"wrong-key":            {"PartitionKey"},
		"acks-before-stored":   {"DurableOnReturn"},
		"no-dedup":             {"DedupByID"},
		"refused-is-transient": {"Refused", "BatchMixed"},
		"ignores-context":      {"DoneContext", "BatchDoneContext"},
		"duplicates":           {"Concurrent", "Batch"},
		"short-batch":          {"Batch"},
		"close-twice-fails":    {"Close"},
		"unroutable-permanent": {"Unroutable"},
		"misconfig-permanent":  {"Misconfigured"},
		"too-large-transient":  {"TooLarge"},
		"raw-reserved-headers": {"ReservedUserHeaders"},
	}
	// The children wait on timeouts, not on the CPU: run them all at once.
	outputs := make(map[string][]byte, len(tests))
	errs := make(map[string]error, len(tests))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for fault := range tests {
		wg.Go(func() {
			cmd := exec.CommandContext(t.Context(), os.Args[0],
				"-test.run=^TestFaultyBroker$", "-test.count=1", "-test.v", "-test.parallel=16")
			cmd.Env = append(os.Environ(), faultEnv+"="+fault)
			out, err := cmd.CombinedOutput()
			mu.Lock()
			defer mu.Unlock()
			outputs[fault], errs[fault] = out, err
		})
	}
	wg.Wait()
	for fault, failing := range tests {
		t.Run(fault, func(t *testing.T) {
			out := string(outputs[fault])
			var exit *exec.ExitError
			if !errors.As(errs[fault], &exit) {
				t.Fatalf("the suite passed a broker with fault %s (%v):\n%s", fault, errs[fault], out)
			}
			for _, name := range failing {
				if !strings.Contains(out, "--- FAIL: TestFaultyBroker/"+name+" ") {
					t.Errorf("subtest %s did not catch fault %s:\n%s", name, fault, out)
				}
			}
		})
	}
}
