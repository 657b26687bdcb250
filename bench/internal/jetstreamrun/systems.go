package jetstreamrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/bench/internal/harness"
	"github.com/reliar/reliar/bench/internal/pgenv"
	"github.com/reliar/reliar/bench/internal/rawsql"
	"github.com/reliar/reliar/bench/internal/reliarrun"
	"github.com/reliar/reliar/bench/internal/sink"
	natspub "github.com/reliar/reliar/publisher/nats"
)

// Reliar is Reliar variant v publishing through publisher/nats.
func Reliar(url string, v reliarrun.Variant) harness.System {
	name := v.Name + " → jetstream"
	return harness.System{Name: name, Open: func(ctx context.Context, env pgenv.Env) (harness.Target, error) {
		st, err := newStream(ctx, url)
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

// HandWritten is the raw SQL loop publishing every claimed batch to
// JetStream asynchronously, with the row id as Nats-Msg-Id, and marking it
// published once every message of the batch is acknowledged.
func HandWritten(url string) harness.System {
	return harness.System{Name: "pg → jetstream by hand", Open: func(ctx context.Context, env pgenv.Env) (harness.Target, error) {
		st, err := newStream(ctx, url)
		if err != nil {
			return nil, err
		}
		subject := st.prefix + ".bench.message"
		deliver := func(ctx context.Context, _ *sink.Sink, batch []rawsql.Claimed) error {
			futures := make([]jetstream.PubAckFuture, len(batch))
			for i, c := range batch {
				m := &nats.Msg{Subject: subject, Data: c.Payload, Header: nats.Header{}}
				m.Header.Set(jetstream.MsgIDHeader, c.ID.String())
				f, err := st.js.PublishMsgAsync(m)
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
		inner, err := rawsql.Open(ctx, env, deliver)
		if err != nil {
			return nil, errors.Join(err, st.close(ctx))
		}
		return &target{Target: inner, st: st}, nil
	}}
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
