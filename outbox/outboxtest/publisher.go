package outboxtest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/reliar/reliar"
)

// ErrInjected is matched (with errors.Is) by every failure a
// RecordingPublisher was told to return.
var ErrInjected = errors.New("outboxtest: injected publish failure")

// Attempt is one call of RecordingPublisher.Publish.
type Attempt struct {
	// Envelope is what the dispatcher published, copied.
	Envelope reliar.SerializedEnvelope
	// Err is what Publish returned: nil, or a failure the publisher was
	// told to inject.
	Err error
}

// RecordingPublisher is a reliar.Publisher that records every envelope it
// is given and acknowledges it, unless told to fail it with FailWhen. It is
// safe for concurrent use; the zero value is ready.
type RecordingPublisher struct {
	mu       sync.Mutex
	attempts []Attempt
	rules    []failRule
}

type failRule struct {
	match func(*reliar.SerializedEnvelope) bool
	kind  reliar.FailureKind
	times int // failures left; negative: for ever
}

var _ reliar.Publisher = (*RecordingPublisher)(nil)

// FailWhen makes Publish fail the envelopes match accepts with an error of
// the given kind (errors.Is ErrInjected; reliar.KindOf reports kind), at
// most times times in all, or every time when times is negative. Rules are
// tried in the order they were added; the first that accepts an envelope
// and has failures left decides.
func (p *RecordingPublisher) FailWhen(match func(env *reliar.SerializedEnvelope) bool, kind reliar.FailureKind, times int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.rules = append(p.rules, failRule{match: match, kind: kind, times: times})
}

// FailType is FailWhen for every envelope of one message type.
func (p *RecordingPublisher) FailType(messageType string, kind reliar.FailureKind, times int) {
	p.FailWhen(func(e *reliar.SerializedEnvelope) bool { return e.MessageType == messageType }, kind, times)
}

// Publish records env and returns nil, or the failure a FailWhen rule
// gives it, or the error of a context that already ended.
func (p *RecordingPublisher) Publish(ctx context.Context, env *reliar.SerializedEnvelope) error {
	a := Attempt{Envelope: *env, Err: ctx.Err()}
	a.Envelope.Payload = append([]byte(nil), env.Payload...)
	a.Envelope.Headers = maps.Clone(env.Headers)
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.rules {
		if a.Err != nil {
			break // the context ended: no broker would have taken it
		}
		r := &p.rules[i]
		if r.times == 0 || !r.match(env) {
			continue
		}
		if r.times > 0 {
			r.times--
		}
		a.Err = fmt.Errorf("%w: %s (attempt %d, %s)", ErrInjected, env.ID, env.Attempt, r.kind)
		if r.kind == reliar.FailurePermanent {
			a.Err = reliar.Permanent(a.Err)
		}
		break
	}
	p.attempts = append(p.attempts, a)
	return a.Err
}

// Attempts returns every call of Publish so far, failed ones included, in
// the order they happened.
func (p *RecordingPublisher) Attempts() []Attempt {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Attempt(nil), p.attempts...)
}

// Published returns the envelopes acknowledged so far, in the order they
// were published; a message retried after a failure appears once per
// successful publish.
func (p *RecordingPublisher) Published() []reliar.SerializedEnvelope {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []reliar.SerializedEnvelope
	for _, a := range p.attempts {
		if a.Err == nil {
			out = append(out, a.Envelope)
		}
	}
	return out
}

// Reset forgets the recorded calls; the FailWhen rules stay.
func (p *RecordingPublisher) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.attempts = nil
}
