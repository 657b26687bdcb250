package broker

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/reliar/reliar/publisher/redispub"
)

// parseRedis checks a redis:// or rediss:// URL and the stream option.
func parseRedis(raw string, o Options) (func(ctx context.Context) (*Broker, error), error) {
	ropts, err := redis.ParseURL(raw)
	if err != nil {
		return nil, badURL(raw, "%v", err)
	}
	var opts []redispub.Option
	if o.Stream != "" {
		opts = append(opts, redispub.WithStream(o.Stream))
	}
	// The options are checked now, before anything connects: a client
	// connects only when it is first used.
	client := redis.NewClient(ropts)
	_, err = redispub.New(client, opts...)
	_ = client.Close()
	if err != nil {
		return nil, badOption(err)
	}
	return func(context.Context) (*Broker, error) { return openRedis(ropts, opts) }, nil
}

// openRedis builds a client, which connects lazily, and its publisher;
// Check pings the server.
func openRedis(ropts *redis.Options, opts []redispub.Option) (*Broker, error) {
	client := redis.NewClient(ropts)
	pub, err := redispub.New(client, opts...)
	if err != nil {
		_ = client.Close()
		return nil, badOption(err)
	}
	return &Broker{
		Publisher: pub,
		check: func(ctx context.Context) error {
			if err := client.Ping(ctx).Err(); err != nil {
				return fmt.Errorf("redispub: %w", err)
			}
			return nil
		},
		close: client.Close,
	}, nil
}
