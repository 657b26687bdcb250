package publishertest

import (
	"context"
	"errors"
	"maps"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar"
)

// cases are the suite's subtests, in the order Run starts them.
var cases = []testCase{
	{"MappingRoundTrip", testMappingRoundTrip},
	{"PartitionKey", testPartitionKey},
	{"DurableOnReturn", testDurableOnReturn},
	{"DedupByID", testDedupByID},
	{"Unroutable", testUnroutable},
	{"Misconfigured", testMisconfigured},
	{"TooLarge", testTooLarge},
	{"ReservedUserHeaders", testReservedUserHeaders},
	{"NonASCIIAttributes", testNonASCIIAttributes},
	{"Broken", testBroken},
	{"Refused", testRefused},
	{"DoneContext", testDoneContext},
	{"Concurrent", testConcurrent},
	{"Batch", testBatch},
	{"BatchMixed", testBatchMixed},
	{"BatchDoneContext", testBatchDoneContext},
	{"Close", testClose},
}

const (
	concurrentPublishers = 50
	publishesEach        = 10
	batchSize            = 20
)

func testMappingRoundTrip(t *testing.T, h Harness) {
	sent := []*reliar.SerializedEnvelope{Envelope(1), Unkeyed(2)}
	for _, e := range sent {
		before := maps.Clone(e.Headers)
		publish(t, h, e)
		if !maps.Equal(before, e.Headers) {
			t.Errorf("Publish modified the envelope's headers")
		}
	}
	// The two messages may arrive in either order: on a partitioned broker
	// they take different partitions. Pair them by id.
	byID := make(map[reliar.MessageID]*reliar.SerializedEnvelope, len(sent))
	for _, e := range sent {
		byID[e.ID] = e
	}
	got := receive(t, h, len(sent))
	for i, r := range got {
		d, err := h.decode(r)
		if err != nil {
			t.Fatalf("message %d: decode the received message: %v", i, err)
		}
		want, ok := byID[d.ID]
		if !ok {
			t.Errorf("message %d: id %s was not sent, or arrived twice", i, d.ID)
			continue
		}
		delete(byID, d.ID)
		if err := Compare(want, d); err != nil {
			t.Errorf("message %d: %v", i, err)
		}
		reference(t, h, r, want)
	}
	expectNothing(t, h)
}

func testPartitionKey(t *testing.T, h Harness) {
	if !h.Features.KeyIsPartitionKey {
		t.Skip("the broker has no partition or routing key to observe (Features.KeyIsPartitionKey)")
	}
	noConversation := Unkeyed(3)
	noConversation.Metadata.Correlation.ConversationID = reliar.MessageID{}
	tests := []struct {
		name string
		env  *reliar.SerializedEnvelope
		want func(e *reliar.SerializedEnvelope) string
	}{
		{"ordering key", Envelope(1), func(e *reliar.SerializedEnvelope) string { return e.OrderingKey }},
		{"conversation id", Unkeyed(2), func(e *reliar.SerializedEnvelope) string {
			return e.Metadata.Correlation.ConversationID.String()
		}},
		{"message id", noConversation, func(e *reliar.SerializedEnvelope) string { return e.ID.String() }},
	}
	for _, tt := range tests {
		publish(t, h, tt.env)
		r := receive(t, h, 1)[0]
		if want := tt.want(tt.env); r.Key != want || r.Key != tt.env.PartitionKey() {
			t.Errorf("%s: broker key %q, want %q", tt.name, r.Key, want)
		}
	}
}

func testDurableOnReturn(t *testing.T, h Harness) {
	for i := range 5 {
		e := Envelope(i)
		publish(t, h, e)
		// Publish returned: the broker must already hold the message.
		r := receive(t, h, 1)[0]
		if d := decode(t, h, r); d.ID != e.ID {
			t.Fatalf("publish %d: received %s, want %s", i, d.ID, e.ID)
		}
	}
}

func testDedupByID(t *testing.T, h Harness) {
	if !h.Features.DedupByID {
		t.Skip("the broker does not deduplicate by message id (Features.DedupByID)")
	}
	e := Envelope(1)
	publish(t, h, e)
	publish(t, h, e)
	if d := decode(t, h, receive(t, h, 1)[0]); d.ID != e.ID {
		t.Fatalf("received %s, want %s", d.ID, e.ID)
	}
	expectNothing(t, h)
}

func testUnroutable(t *testing.T, h Harness) {
	if h.Unroutable == nil {
		t.Skip("the harness cannot aim a publisher at a refused destination (Harness.Unroutable)")
	}
	p := h.Unroutable(t)
	ctx := timeoutContext(t, h)
	checkKind(t, p.Publish(ctx, Envelope(1)), true, "Publish to an unroutable destination")
	if bp, ok := p.(reliar.BatchPublisher); ok {
		for i, err := range publishBatch(t, bp, ctx, 3) {
			checkKind(t, err, true, "PublishBatch result "+itoa(i))
		}
	}
}

func testBroken(t *testing.T, h Harness) {
	if h.Broken == nil {
		t.Skip("the harness cannot aim a publisher at an unreachable broker (Harness.Broken)")
	}
	p := h.Broken(t)
	const deadline = 2 * time.Second
	ctx, cancel := context.WithTimeout(t.Context(), deadline)
	defer cancel()
	start := time.Now()
	checkKind(t, p.Publish(ctx, Envelope(1)), true, "Publish to an unreachable broker")
	if bp, ok := p.(reliar.BatchPublisher); ok {
		for i, err := range publishBatch(t, bp, ctx, 3) {
			checkKind(t, err, true, "PublishBatch result "+itoa(i))
		}
	}
	if took := time.Since(start); took > deadline+time.Second {
		t.Errorf("an unreachable broker held Publish for %v, past its context's deadline of %v", took, deadline)
	}
}

func testRefused(t *testing.T, h Harness) {
	if h.Refused == nil {
		t.Skip("the harness cannot build an envelope the publisher refuses (Harness.Refused)")
	}
	ctx := timeoutContext(t, h)
	checkKind(t, h.Publisher.Publish(ctx, h.Refused(t, 1)), h.Features.RefusedTransient, "Publish of a refused envelope")
	expectNothing(t, h)
}

func testDoneContext(t *testing.T, h Harness) {
	for _, tt := range doneContexts(t) {
		start := time.Now()
		err := h.Publisher.Publish(tt.ctx, Envelope(1))
		if !errors.Is(err, tt.want) {
			t.Errorf("%s context: Publish returned %v, want an error wrapping %v", tt.name, err, tt.want)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s context: Publish took %v to return", tt.name, took)
		}
	}
}

func testConcurrent(t *testing.T, h Harness) {
	ctx := timeoutContext(t, h)
	sent := make(map[reliar.MessageID]*reliar.SerializedEnvelope)
	envs := make([][]*reliar.SerializedEnvelope, concurrentPublishers)
	for g := range envs {
		for i := range publishesEach {
			e := Envelope(g*publishesEach + i)
			envs[g] = append(envs[g], e)
			sent[e.ID] = e
		}
	}
	errs := make(chan error, len(sent))
	var wg sync.WaitGroup
	for _, batch := range envs {
		wg.Go(func() {
			for _, e := range batch {
				errs <- h.Publisher.Publish(ctx, e)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent Publish: %v", err)
		}
	}
	expectExactly(t, h, sent)
}

func testBatch(t *testing.T, h Harness) {
	bp := batchPublisher(t, h)
	ctx := timeoutContext(t, h)
	if res := bp.PublishBatch(ctx, nil); len(res) != 0 {
		t.Errorf("PublishBatch of no envelopes returned %d results", len(res))
	}
	sent := make(map[reliar.MessageID]*reliar.SerializedEnvelope)
	envs := make([]*reliar.SerializedEnvelope, batchSize)
	for i := range envs {
		envs[i] = Envelope(i)
		sent[envs[i].ID] = envs[i]
	}
	res := bp.PublishBatch(ctx, envs)
	if len(res) != len(envs) {
		t.Fatalf("PublishBatch returned %d results for %d envelopes", len(res), len(envs))
	}
	for i, err := range res {
		if err != nil {
			t.Errorf("PublishBatch result %d: %v", i, err)
		}
	}
	expectExactly(t, h, sent)
}

func testBatchMixed(t *testing.T, h Harness) {
	bp := batchPublisher(t, h)
	if h.Refused == nil {
		t.Skip("the harness cannot build an envelope the publisher refuses (Harness.Refused)")
	}
	const bad = 2
	envs := make([]*reliar.SerializedEnvelope, 5)
	sent := make(map[reliar.MessageID]*reliar.SerializedEnvelope)
	for i := range envs {
		if i == bad {
			envs[i] = h.Refused(t, i)
			continue
		}
		envs[i] = Envelope(i)
		sent[envs[i].ID] = envs[i]
	}
	res := bp.PublishBatch(timeoutContext(t, h), envs)
	if len(res) != len(envs) {
		t.Fatalf("PublishBatch returned %d results for %d envelopes", len(res), len(envs))
	}
	for i, err := range res {
		if i == bad {
			checkKind(t, err, h.Features.RefusedTransient, "PublishBatch result of the refused envelope")
		} else if err != nil {
			t.Errorf("PublishBatch result %d: %v", i, err)
		}
	}
	expectExactly(t, h, sent)
}

func testBatchDoneContext(t *testing.T, h Harness) {
	bp := batchPublisher(t, h)
	for _, tt := range doneContexts(t) {
		start := time.Now()
		for i, err := range publishBatch(t, bp, tt.ctx, 3) {
			if !errors.Is(err, tt.want) {
				t.Errorf("%s context: PublishBatch result %d is %v, want an error wrapping %v", tt.name, i, err, tt.want)
			}
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("%s context: PublishBatch took %v to return", tt.name, took)
		}
	}
}

func testClose(t *testing.T, h Harness) {
	var closeFn func() error
	switch c := h.Publisher.(type) {
	case interface{ Close() error }:
		closeFn = c.Close
	case interface{ Close() }:
		closeFn = func() error { c.Close(); return nil }
	default:
		t.Skip("the publisher has no Close method")
	}
	for i := range 2 {
		if err := closeFn(); err != nil {
			t.Errorf("Close call %d: %v", i+1, err)
		}
	}
	if err := h.Publisher.Publish(timeoutContext(t, h), Envelope(1)); err == nil {
		t.Error("Publish after Close returned nil")
	}
}
