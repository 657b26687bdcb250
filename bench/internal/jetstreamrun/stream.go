// Package jetstreamrun runs the drain scenario through NATS JetStream:
// Reliar's dispatcher with publisher/nats, and a hand-written PostgreSQL →
// JetStream loop (the raw SQL loop publishing asynchronously with
// Nats-Msg-Id and waiting for every acknowledgement). Each run gets its own
// stream; a plain NATS subscription on the stream's subjects feeds the sink.
package jetstreamrun

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar/bench/internal/sink"
)

// DefaultURL is the local NATS server.
const DefaultURL = "nats://127.0.0.1:4222"

// ErrIncomplete is returned when the stream holds fewer messages than were
// dispatched.
var ErrIncomplete = errors.New("jetstreamrun: stream is missing messages")

// stream is one run's JetStream stream and the connections that use it.
type stream struct {
	pub, sub *nats.Conn
	js       jetstream.JetStream
	name     string
	// prefix is the first two subject tokens; the stream takes prefix.>.
	prefix string
	s      *nats.Subscription
}

// newStream connects twice (publisher and subscriber) and creates a stream
// of unique name and subjects.
func newStream(ctx context.Context, url string) (*stream, error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("jetstreamrun: random stream name: %w", err)
	}
	suffix := hex.EncodeToString(rnd[:])
	st := &stream{name: "BENCH_" + strings.ToUpper(suffix), prefix: "bench." + suffix}
	var err error
	if st.pub, err = nats.Connect(url, nats.Name("reliar-bench-publisher")); err != nil {
		return nil, fmt.Errorf("jetstreamrun: connect: %w", err)
	}
	if st.sub, err = nats.Connect(url, nats.Name("reliar-bench-subscriber")); err != nil {
		st.pub.Close()
		return nil, fmt.Errorf("jetstreamrun: connect: %w", err)
	}
	if st.js, err = jetstream.New(st.pub); err == nil {
		_, err = st.js.CreateStream(ctx, jetstream.StreamConfig{
			Name:     st.name,
			Subjects: []string{st.prefix + ".>"},
			Storage:  jetstream.FileStorage,
		})
	}
	if err != nil {
		st.pub.Close()
		st.sub.Close()
		return nil, fmt.Errorf("jetstreamrun: create stream %s: %w", st.name, err)
	}
	return st, nil
}

// subscribe hands every message published on the stream's subjects to s.
func (st *stream) subscribe(s *sink.Sink) error {
	sub, err := st.sub.Subscribe(st.prefix+".>", func(m *nats.Msg) { _ = s.DeliverPayload(m.Data) })
	if err == nil {
		err = sub.SetPendingLimits(-1, -1)
	}
	if err == nil {
		err = st.sub.Flush()
	}
	if err != nil {
		return fmt.Errorf("jetstreamrun: subscribe: %w", err)
	}
	st.s = sub
	return nil
}

// unsubscribe ends the subscription, if any.
func (st *stream) unsubscribe() error {
	if st.s == nil {
		return nil
	}
	err := st.s.Unsubscribe()
	st.s = nil
	if err != nil {
		return fmt.Errorf("jetstreamrun: unsubscribe: %w", err)
	}
	return nil
}

// check fails unless the stream stores at least want messages.
func (st *stream) check(ctx context.Context, want int) error {
	s, err := st.js.Stream(ctx, st.name)
	if err != nil {
		return fmt.Errorf("jetstreamrun: stream %s: %w", st.name, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("jetstreamrun: stream %s info: %w", st.name, err)
	}
	if info.State.Msgs < uint64(want) {
		return fmt.Errorf("%w: %s holds %d of %d", ErrIncomplete, st.name, info.State.Msgs, want)
	}
	return nil
}

// close deletes the stream and closes both connections.
func (st *stream) close(ctx context.Context) error {
	err := st.js.DeleteStream(ctx, st.name)
	st.pub.Close()
	st.sub.Close()
	if err != nil {
		return fmt.Errorf("jetstreamrun: delete stream %s: %w", st.name, err)
	}
	return nil
}
