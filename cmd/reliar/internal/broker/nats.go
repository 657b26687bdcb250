package broker

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/natspub"
)

// NATS connection settings: reconnect forever, so that a broker outage of
// any length is ridden out (the dispatcher's breaker holds rows back
// meanwhile).
const (
	natsReconnectWait = 250 * time.Millisecond
	natsDialTimeout   = 5 * time.Second
)

// parseNATS checks a nats:// URL, or a comma-separated list of server URLs.
func parseNATS(raw string, o Options) (func(ctx context.Context) (*Broker, error), error) {
	for server := range strings.SplitSeq(raw, ",") {
		u, err := url.Parse(strings.TrimSpace(server))
		if err != nil || u.Host == "" || (u.Scheme != "nats" && u.Scheme != "tls") {
			return nil, badURL(raw, "want nats://host:port, or several separated by commas")
		}
	}
	prefix := o.SubjectPrefix
	if prefix == "" {
		prefix = natspub.DefaultSubjectPrefix
	}
	if err := checkSubjectPrefix(prefix); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (*Broker, error) {
		return openNATS(ctx, raw, prefix, o.CreateStream, o.logger())
	}, nil
}

// openNATS connects to NATS, retrying in the background while no server
// answers, and returns a JetStream publisher over the connection. With
// create, it first makes sure a stream captures the prefix's subjects.
func openNATS(ctx context.Context, raw, prefix string, create bool, log *slog.Logger) (*Broker, error) {
	// The handlers run on the connection's goroutine, possibly after Close:
	// they stay quiet then, so that nothing is logged after the relay's
	// last line. The check and the log hold mu, so that once shut has
	// marked the connection closed no handler is still writing (a handler
	// that had checked just before could otherwise log after Run returned).
	var (
		mu     sync.Mutex
		closed bool
	)
	logIfOpen := func(level slog.Level, msg string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !closed {
			log.Log(context.Background(), level, msg, args...)
		}
	}
	shut := func(nc *nats.Conn) {
		mu.Lock()
		closed = true
		mu.Unlock()
		nc.Close()
	}
	nc, err := nats.Connect(raw,
		nats.Name("reliar relay"),
		nats.Timeout(natsDialTimeout),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(natsReconnectWait),
		nats.ConnectHandler(func(*nats.Conn) { logIfOpen(slog.LevelInfo, "nats connected") }),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				logIfOpen(slog.LevelWarn, "nats disconnected; reconnecting", "error", err)
			}
		}),
		nats.ReconnectHandler(func(*nats.Conn) { logIfOpen(slog.LevelInfo, "nats reconnected") }),
	)
	if err != nil {
		return nil, fmt.Errorf("natspub: connect: %w", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		shut(nc)
		return nil, fmt.Errorf("natspub: jetstream: %w", err)
	}
	if create {
		if err := ensureStream(ctx, js, prefix, log); err != nil {
			shut(nc)
			return nil, err
		}
	}
	pub, err := natspub.New(js, natspub.WithSubjectPrefix(prefix))
	if err != nil {
		shut(nc)
		return nil, badOption(err)
	}
	return &Broker{
		Publisher: pub,
		diagnose:  natsDiagnose(js, prefix, create, log),
		dest:      func(env *reliar.SerializedEnvelope) string { return natsDestination(prefix + "." + env.MessageType) },
		check: func(context.Context) error {
			if !nc.IsConnected() {
				return fmt.Errorf("natspub: not connected (%s)", strings.ToLower(nc.Status().String()))
			}
			return nil
		},
		close: func() error {
			_ = pub.Close()
			shut(nc)
			return nil
		},
	}, nil
}

// checkSubjectPrefix refuses, before anything connects, a subject prefix
// NATS would refuse: it must be dot-separated tokens, none empty, without
// whitespace, control characters or wildcards (* and >).
func checkSubjectPrefix(prefix string) error {
	for tok := range strings.SplitSeq(prefix, ".") {
		bad := tok == "" || tok == "*" || tok == ">"
		for i := 0; i < len(tok) && !bad; i++ {
			bad = tok[i] <= ' ' || tok[i] == 0x7f
		}
		if bad {
			return fmt.Errorf("%w: --subject-prefix %q is not a valid subject prefix: dot-separated tokens, none empty, without spaces or the wildcards * and >", ErrBadOption, prefix)
		}
	}
	return nil
}
