package redispub

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/reliar/reliar"
)

// Publisher adds messages to Redis streams. It is safe for concurrent use.
// The client belongs to the caller, who closes it.
type Publisher struct {
	client redis.UniversalClient
	opts   options
}

var _ reliar.BatchPublisher = (*Publisher)(nil)

// New returns a publisher over client.
func New(client redis.UniversalClient, opts ...Option) (*Publisher, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", ErrInvalidOption)
	}
	o, err := buildOptions(opts)
	if err != nil {
		return nil, err
	}
	return &Publisher{client: client, opts: o}, nil
}

// Publish adds env to its stream and returns nil once Redis acknowledged
// the XADD (see the package documentation on durability).
func (p *Publisher) Publish(ctx context.Context, env *reliar.SerializedEnvelope) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("redispub: publish %s: %w", env.ID, err)
	}
	args, err := p.args(env)
	if err != nil {
		return reliar.Permanent(fmt.Errorf("redispub: publish %s: %w", env.ID, err))
	}
	if err := p.client.XAdd(ctx, args).Err(); err != nil {
		return fmt.Errorf("redispub: publish %s: %w", env.ID, classify(err))
	}
	return nil
}

// PublishBatch pipelines one XADD per envelope in a single round trip and
// returns one result per envelope, in order. The pipeline is not a
// transaction: each entry succeeds or fails on its own.
func (p *Publisher) PublishBatch(ctx context.Context, envs []*reliar.SerializedEnvelope) []error {
	res := make([]error, len(envs))
	if err := ctx.Err(); err != nil {
		for i, env := range envs {
			res[i] = fmt.Errorf("redispub: publish %s: %w", env.ID, err)
		}
		return res
	}
	pipe := p.client.Pipeline()
	cmds := make([]*redis.StringCmd, len(envs))
	for i, env := range envs {
		args, err := p.args(env)
		if err != nil {
			res[i] = reliar.Permanent(fmt.Errorf("redispub: publish %s: %w", env.ID, err))
			continue
		}
		cmds[i] = pipe.XAdd(ctx, args)
	}
	if pipe.Len() == 0 {
		return res
	}
	_, execErr := pipe.Exec(ctx)
	for i, cmd := range cmds {
		if cmd == nil {
			continue
		}
		err := cmd.Err()
		if err == nil && cmd.Val() == "" {
			// No entry id: the pipeline failed before this command got
			// its reply.
			err = firstErr(execErr, errNoReply)
		}
		if err != nil {
			res[i] = fmt.Errorf("redispub: publish %s: %w", envs[i].ID, classify(err))
		}
	}
	return res
}

// errNoReply stands for a pipelined command left without a reply or an
// error of its own.
var errNoReply = errors.New("redispub: no reply to the pipelined XADD")

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
