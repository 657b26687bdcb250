package broker

import (
	"context"

	"github.com/reliar/reliar/publisher/webhook"
)

// parseWebhook checks an http:// or https:// endpoint and its signing
// secrets. The publisher is built at once: it holds no connection.
func parseWebhook(raw string, o Options) (func(ctx context.Context) (*Broker, error), error) {
	var opts []webhook.Option
	if len(o.WebhookSecrets) > 0 {
		opts = append(opts, webhook.WithSecrets(o.WebhookSecrets...))
	}
	pub, err := webhook.New(raw, opts...)
	if err != nil {
		return nil, badOption(err)
	}
	// A webhook has no connection to watch: readiness relies on the
	// dispatcher's circuit breaker, which opens when the endpoint fails.
	return func(context.Context) (*Broker, error) {
		return &Broker{Publisher: pub, close: pub.Close}, nil
	}, nil
}
