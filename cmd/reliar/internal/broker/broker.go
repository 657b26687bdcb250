// Package broker turns a broker URL into a publisher for the relay: the
// URL's scheme picks the broker (nats:// or tls:// for NATS JetStream,
// kafka:// for Kafka, amqp:// or amqps:// for RabbitMQ, redis:// or
// rediss:// for Redis streams, http:// or https:// for a webhook), and
// Options carry the few settings each broker takes.
//
// [Parse] checks the URL and the options without connecting, so bad input
// is found at once; [Location.Open] connects. The returned [Broker] also
// reports whether the connection is up, for the relay's readiness.
package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/cmd/reliar/internal/redact"
)

// ErrBadURL is matched (with errors.Is) by every error about a broker URL
// that cannot be used: malformed, or of an unknown scheme.
var ErrBadURL = errors.New("bad broker URL")

// ErrBadOption is matched (with errors.Is) by every error about an option
// the broker refuses, or that belongs to another broker.
var ErrBadOption = errors.New("bad broker option")

// Options are the broker settings of the relay's flags. An empty field takes
// the broker's default; a field set for a broker that does not use it is
// refused.
type Options struct {
	// SubjectPrefix is the first token of every NATS subject:
	// "<prefix>.<message type>". Defaults to "reliar".
	SubjectPrefix string
	// Topics are Kafka topics: a bare name is the topic of every message,
	// "type=name" the topic of one message type. Defaults to "reliar".
	Topics []string
	// Exchange is the RabbitMQ exchange messages go to. Defaults to
	// "reliar"; "-" names the broker's default exchange.
	Exchange string
	// RoutingKey is the RabbitMQ routing key, in which {type} stands for
	// the message type and {key} for the partition key (the ordering key,
	// else the conversation id). Defaults to "{key}".
	RoutingKey string
	// Stream is the Redis stream messages are added to. Defaults to
	// "reliar".
	Stream string
	// WebhookSecrets are the webhook's Standard Webhooks signing secrets;
	// at least one is required for http:// and https:// URLs.
	WebhookSecrets []string
	// Concurrency is how many publishes may run at once; it sizes the
	// RabbitMQ channel pool. Defaults to 16.
	Concurrency int
	// CreateStream makes the NATS broker create a JetStream stream on
	// "<prefix>.>" when no stream captures any subject under the prefix:
	// at start-up, and again when a publish finds no stream.
	CreateStream bool
	// Logger receives the connection's life events. Defaults to
	// slog.Default().
	Logger *slog.Logger
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.Default()
	}
	return o.Logger
}

// given names the flags of the options that are set.
func (o Options) given() []string {
	var names []string
	add := func(set bool, name string) {
		if set {
			names = append(names, name)
		}
	}
	add(o.SubjectPrefix != "", "--subject-prefix")
	add(len(o.Topics) > 0, "--topic")
	add(o.Exchange != "", "--exchange")
	add(o.RoutingKey != "", "--routing-key")
	add(o.Stream != "", "--stream")
	add(len(o.WebhookSecrets) > 0, "--webhook-secret")
	add(o.CreateStream, "--create-stream")
	return names
}

// Broker is an open connection to a broker and the publisher that uses it.
type Broker struct {
	// Publisher publishes the relay's messages.
	Publisher reliar.Publisher
	check     func(ctx context.Context) error
	close     func() error
	diagnose  func(env *reliar.SerializedEnvelope, err error) *Problem
	dest      func(env *reliar.SerializedEnvelope) string
}

// Check returns nil while the broker is connected, else why not.
func (b *Broker) Check(ctx context.Context) error {
	if b.check == nil {
		return nil
	}
	return b.check(ctx)
}

// Close closes the publisher and the connection. Call it after the
// dispatchers stopped.
func (b *Broker) Close() error {
	if b.close == nil {
		return nil
	}
	return b.close()
}

// Location is a parsed broker URL with its options, ready to connect.
type Location struct {
	kind    string
	raw     string
	open    func(ctx context.Context) (*Broker, error)
	inspect func(ctx context.Context) ([]Finding, error)
}

// Kind names the broker: "nats", "kafka", "amqp", "redis" or "webhook".
func (l Location) Kind() string { return l.kind }

// String returns the URL with its secrets redacted.
func (l Location) String() string { return redact.URL(l.raw) }

// Open connects to the broker. A NATS connection is retried in the
// background when the server is down (Check reports it); the other brokers
// fail when they cannot be reached, and the relay tries again.
func (l Location) Open(ctx context.Context) (*Broker, error) {
	if l.open == nil {
		return nil, fmt.Errorf("%w: no broker URL", ErrBadURL)
	}
	return l.open(ctx)
}

// scheme is how one broker reads its URLs.
type scheme struct {
	kind    string
	schemes []string
	// flags lists the options the broker takes.
	flags []string
	parse func(raw string, o Options) (func(ctx context.Context) (*Broker, error), error)
	// inspect, when set, returns the broker's Location.Inspect.
	inspect func(raw string, o Options) func(ctx context.Context) ([]Finding, error)
}

// schemes lists every broker, in the order messages name them.
var schemes = []scheme{
	{"nats", []string{"nats", "tls"}, []string{"--subject-prefix", "--create-stream"}, parseNATS, inspectNATS},
	{"kafka", []string{"kafka"}, []string{"--topic"}, parseKafka, inspectKafka},
	{"amqp", []string{"amqp", "amqps"}, []string{"--exchange", "--routing-key"}, parseAMQP, inspectAMQP},
	{"redis", []string{"redis", "rediss"}, []string{"--stream"}, parseRedis, nil},
	{"webhook", []string{"http", "https"}, []string{"--webhook-secret"}, parseWebhook, nil},
}

// Parse checks a broker URL and its options without connecting. Errors
// match ErrBadURL or ErrBadOption.
func Parse(raw string, o Options) (Location, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return Location{}, fmt.Errorf("%w: empty (want %s)", ErrBadURL, schemeList())
	}
	name, rest, ok := strings.Cut(raw, "://")
	if !ok || name == "" {
		return Location{}, badURL(raw, "no scheme (want %s)", schemeList())
	}
	name = strings.ToLower(name)
	raw = name + "://" + rest
	if redact.Unparsable(raw) {
		return Location{}, badURL(raw, "it does not parse as its writer meant")
	}
	for _, s := range schemes {
		if !slices.Contains(s.schemes, name) {
			continue
		}
		for _, f := range o.given() {
			if !slices.Contains(s.flags, f) {
				return Location{}, fmt.Errorf("%w: %s does not apply to %s brokers (%s)", ErrBadOption, f, s.kind, redact.URL(raw))
			}
		}
		open, err := s.parse(raw, o)
		if err != nil {
			return Location{}, err
		}
		loc := Location{kind: s.kind, raw: raw, open: open}
		if s.inspect != nil {
			loc.inspect = s.inspect(raw, o)
		}
		return loc, nil
	}
	return Location{}, badURL(raw, "unknown scheme %q (want %s)", name, schemeList())
}

// schemeList names every supported scheme, for messages.
func schemeList() string {
	var all []string
	for _, s := range schemes {
		for _, n := range s.schemes {
			all = append(all, n+"://")
		}
	}
	return strings.Join(all, ", ")
}

// badURL builds an error matching ErrBadURL about raw, redacted: see
// redact.Reason.
func badURL(raw, format string, args ...any) error {
	return fmt.Errorf("%w %s: %s", ErrBadURL, redact.URL(raw), redact.Reason(raw, fmt.Sprintf(format, args...)))
}

// badOption wraps a publisher's refusal of an option so that it matches
// ErrBadOption.
func badOption(err error) error {
	return fmt.Errorf("%w: %w", ErrBadOption, err)
}
