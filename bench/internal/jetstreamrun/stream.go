// Package jetstreamrun runs the drain scenario through NATS JetStream:
// Reliar's dispatcher with publisher/natspub, and a hand-written PostgreSQL →
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

// Storage is where a run's messages go on the server.
type Storage int

const (
	// File is a JetStream stream on disk, the server's default.
	File Storage = iota
	// Memory is a JetStream stream in memory: the same JetStream work
	// without the writes to disk.
	Memory
	// Core is no stream at all: core NATS publishes, which the server only
	// routes to the subscriber. Only the hand-written pipeline can use it
	// (Reliar's NATS publisher publishes to JetStream).
	Core
)

// suffix is what the storage adds to a system's name.
func (s Storage) suffix() string {
	switch s {
	case Memory:
		return " memory"
	default:
		return ""
	}
}

// stream is one run's JetStream stream (none for Core) and the connections
// that use it.
type stream struct {
	storage  Storage
	pub, sub *nats.Conn
	js       jetstream.JetStream
	name     string
	// prefix is the first two subject tokens; the stream takes prefix.>.
	prefix string
	s      *nats.Subscription
}

// newStream connects twice (publisher and subscriber) and, unless storage
// is Core, creates a stream of unique name and subjects.
func newStream(ctx context.Context, url string, storage Storage) (*stream, error) {
	var rnd [6]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return nil, fmt.Errorf("jetstreamrun: random stream name: %w", err)
	}
	suffix := hex.EncodeToString(rnd[:])
	st := &stream{storage: storage, name: "BENCH_" + strings.ToUpper(suffix), prefix: "bench." + suffix}
	var err error
	if st.pub, err = nats.Connect(url, nats.Name("reliar-bench-publisher")); err != nil {
		return nil, fmt.Errorf("jetstreamrun: connect: %w", err)
	}
	if st.sub, err = nats.Connect(url, nats.Name("reliar-bench-subscriber")); err != nil {
		st.pub.Close()
		return nil, fmt.Errorf("jetstreamrun: connect: %w", err)
	}
	if st.js, err = jetstream.New(st.pub); err == nil && storage != Core {
		kind := jetstream.FileStorage
		if storage == Memory {
			kind = jetstream.MemoryStorage
		}
		_, err = st.js.CreateStream(ctx, jetstream.StreamConfig{
			Name:     st.name,
			Subjects: []string{st.prefix + ".>"},
			Storage:  kind,
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

// check fails unless the stream stores at least want messages; without a
// stream there is nothing to check.
func (st *stream) check(ctx context.Context, want int) error {
	if st.storage == Core {
		return nil
	}
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
	var err error
	if st.storage != Core {
		err = st.js.DeleteStream(ctx, st.name)
	}
	st.pub.Close()
	st.sub.Close()
	if err != nil {
		return fmt.Errorf("jetstreamrun: delete stream %s: %w", st.name, err)
	}
	return nil
}
