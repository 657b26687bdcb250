package jetstreamrun

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/rawsql"
	"github.com/reliar/reliar/bench/internal/reliarrun"
	"github.com/reliar/reliar/bench/internal/sink"
	"github.com/reliar/reliar/publisher/natspub"
)

// Reliar is Reliar variant v publishing through publisher/natspub to a stream
// of the given storage (File or Memory).
func Reliar(url string, v reliarrun.Variant, storage Storage) harness.System {
	name := v.Name + " → jetstream" + storage.suffix()
	return harness.System{Name: name, Open: func(ctx context.Context, env pgenv.Env) (harness.Target, error) {
		if storage == Core {
			return nil, errors.New("jetstreamrun: Reliar's NATS publisher needs a stream")
		}
		st, err := newStream(ctx, url, storage)
		if err != nil {
			return nil, err
		}
		pub, err := natspub.New(st.js, natspub.WithSubjectPrefix(st.prefix))
		if err != nil {
			return nil, errors.Join(fmt.Errorf("jetstreamrun: publisher: %w", err), st.close(ctx))
		}
		v.Name = name
		v.Publisher = func(*sink.Sink) reliar.Publisher { return pub }
		inner, err := v.System().Open(ctx, env)
		if err != nil {
			return nil, errors.Join(err, st.close(ctx))
		}
		return &target{Target: inner, st: st}, nil
	}}
}

// Headers is the header set the hand-written pipeline sends.
type Headers int

const (
	// MsgIDOnly sends Nats-Msg-Id alone.
	MsgIDOnly Headers = iota
	// CloudEvents sends what Reliar's NATS publisher sends: the
	// CloudEvents headers of the row's envelope (ceHeaders) and
	// Nats-Msg-Id.
	CloudEvents
)

// HandWritten is the pinned raw SQL loop (rawsql.Pinned) publishing every
// claimed batch asynchronously, with the row id as Nats-Msg-Id and the
// given header set, and marking it published once every message of the
// batch is acknowledged. With Core storage it publishes on core NATS and
// flushes the connection after each batch instead (the server has then
// read every message; nothing is stored).
func HandWritten(url string, headers Headers, storage Storage) harness.System {
	name := "pg → jetstream by hand 1 header"
	if headers == CloudEvents {
		name = "pg → jetstream by hand ce headers"
	}
	if storage == Core {
		name = "pg → core nats by hand"
		if headers == CloudEvents {
			name += " ce headers"
		} else {
			name += " 1 header"
		}
	}
	name += storage.suffix()
	loop := rawsql.Pinned()
	loop.Envelope = headers == CloudEvents
	return harness.System{Name: name, Open: func(ctx context.Context, env pgenv.Env) (harness.Target, error) {
		st, err := newStream(ctx, url, storage)
		if err != nil {
			return nil, err
		}
		subject := st.prefix + ".bench.message"
		message := func(c rawsql.Claimed) *nats.Msg {
			m := &nats.Msg{Subject: subject, Data: c.Payload}
			if headers == CloudEvents {
				m.Header = ceHeaders(c)
			} else {
				m.Header = nats.Header{jetstream.MsgIDHeader: {c.ID.String()}}
			}
			return m
		}
		deliver := func(ctx context.Context, _ *sink.Sink, batch []rawsql.Claimed) error {
			if storage == Core {
				return publishCore(ctx, st.pub, batch, message)
			}
			return publishAsync(ctx, st.js, batch, message)
		}
		inner, err := loop.Open(ctx, env, deliver)
		if err != nil {
			return nil, errors.Join(err, st.close(ctx))
		}
		return &target{Target: inner, st: st}, nil
	}}
}

// publishAsync publishes batch to JetStream asynchronously and waits for
// every acknowledgement.
func publishAsync(ctx context.Context, js jetstream.JetStream, batch []rawsql.Claimed, message func(rawsql.Claimed) *nats.Msg) error {
	futures := make([]jetstream.PubAckFuture, len(batch))
	for i, c := range batch {
		f, err := js.PublishMsgAsync(message(c))
		if err != nil {
			return fmt.Errorf("jetstreamrun: publish: %w", err)
		}
		futures[i] = f
	}
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return fmt.Errorf("jetstreamrun: publish ack: %w", err)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// flushTimeout bounds the flush after a batch of core publishes.
const flushTimeout = 10 * time.Second

// publishCore publishes batch on core NATS and flushes: when the flush
// returns, the server has processed every message of the batch.
func publishCore(ctx context.Context, nc *nats.Conn, batch []rawsql.Claimed, message func(rawsql.Claimed) *nats.Msg) error {
	for _, c := range batch {
		if err := nc.PublishMsg(message(c)); err != nil {
			return fmt.Errorf("jetstreamrun: publish: %w", err)
		}
	}
	fctx, cancel := context.WithTimeout(ctx, flushTimeout)
	defer cancel()
	if err := nc.FlushWithContext(fctx); err != nil {
		return fmt.Errorf("jetstreamrun: flush: %w", err)
	}
	return nil
}

// ceHeaders is the header block Reliar's NATS publisher sends for the row c:
// reliar.CloudEventHeadersSeq of the envelope the row's columns make, each
// under its name as it is (nats.Header is case-sensitive), and Nats-Msg-Id.
// Reliar's rows of the benchmark carry no metadata, user headers or
// ordering key, so these columns are all of their envelope; a row without a
// conversation id is its own conversation, as Reliar decodes it.
func ceHeaders(c rawsql.Claimed) nats.Header {
	env := reliar.SerializedEnvelope{
		ID:             c.ID,
		MessageType:    c.Type,
		MessageVersion: uint16(c.Version),
		ContentType:    c.ContentType,
		Sequence:       c.Sequence,
		CreatedAt:      c.CreatedAt,
	}
	env.Metadata.Correlation.ConversationID = c.ID
	if c.ConversationID != nil {
		env.Metadata.Correlation.ConversationID = *c.ConversationID
	}
	h := make(nats.Header, 12)
	for k, v := range reliar.CloudEventHeadersSeq(&env) {
		h[k] = []string{v}
	}
	h[jetstream.MsgIDHeader] = []string{c.ID.String()}
	return h
}

// target adds the run's stream to a PostgreSQL target: the subscription
// that feeds the sink, a check that the stream stored every message, and
// the stream's deletion.
type target struct {
	harness.Target
	st *stream
}

func (t *target) Start(ctx context.Context, s *sink.Sink) (func(context.Context) error, error) {
	if err := t.st.subscribe(s); err != nil {
		return nil, err
	}
	stop, err := t.Target.Start(ctx, s)
	if err != nil {
		return nil, errors.Join(err, t.st.unsubscribe())
	}
	return func(ctx context.Context) error {
		err := stop(ctx)
		return errors.Join(err, t.st.check(ctx, s.Size()), t.st.unsubscribe())
	}, nil
}

func (t *target) Close(ctx context.Context) error {
	return errors.Join(t.Target.Close(ctx), t.st.close(ctx))
}
