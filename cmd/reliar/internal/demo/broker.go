package demo

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar/cmd/reliar/internal/redact"
)

// embeddedStartTimeout bounds the start of the embedded NATS server.
const embeddedStartTimeout = 10 * time.Second

// broker is the NATS connection the demo publishes and consumes through,
// with the stream it created; close removes the stream and, for an
// embedded server, shuts the server down.
type broker struct {
	// describe names the broker for the summary, secrets redacted.
	describe string
	nc       *nats.Conn
	js       jetstream.JetStream
	stream   jetstream.Stream
	// subject is the prefix of every subject the demo publishes on; the
	// stream captures subject + ".>".
	subject  string
	embedded *server.Server
}

// startBroker connects to the NATS server at natsURL, or starts an
// embedded one with its storage under dir when natsURL is empty, and
// creates a stream of its own named after id.
func startBroker(ctx context.Context, natsURL, dir, id string) (*broker, error) {
	b := &broker{subject: "reliar.demo." + id}
	var err error
	if natsURL == "" {
		b.embedded, b.nc, err = startEmbedded(filepath.Join(dir, "jetstream"))
		b.describe = "embedded NATS JetStream"
	} else {
		b.nc, err = nats.Connect(natsURL, nats.Name("reliar demo"), nats.Timeout(10*time.Second))
		if err != nil {
			err = fmt.Errorf("connect to NATS at %s: %w", redact.URL(natsURL), err)
		}
		b.describe = "NATS JetStream at " + redact.URL(natsURL)
	}
	if err != nil {
		return nil, err
	}
	if b.js, err = jetstream.New(b.nc); err != nil {
		b.close(ctx)
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	b.stream, err = b.js.CreateStream(ctx, jetstream.StreamConfig{
		Name:     "RELIAR_DEMO_" + strings.ToUpper(id),
		Subjects: []string{b.subject + ".>"},
		Storage:  jetstream.FileStorage,
	})
	if err != nil {
		b.close(ctx)
		return nil, fmt.Errorf("create stream on %s: %w", b.describe, err)
	}
	b.describe += " stream " + b.stream.CachedInfo().Config.Name
	return b, nil
}

// startEmbedded starts a NATS server inside the process, with JetStream
// storing under storeDir, listening on no port and handling no signals, and
// connects to it in-process.
func startEmbedded(storeDir string) (*server.Server, *nats.Conn, error) {
	ns, err := server.NewServer(&server.Options{
		ServerName: "reliar-demo",
		DontListen: true,
		NoSigs:     true,
		NoLog:      true,
		JetStream:  true,
		StoreDir:   storeDir,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("embedded NATS server: %w", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(embeddedStartTimeout) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, nil, errors.New("embedded NATS server: not ready in time")
	}
	nc, err := nats.Connect("", nats.InProcessServer(ns), nats.Name("reliar demo"))
	if err != nil {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, nil, fmt.Errorf("connect to the embedded NATS server: %w", err)
	}
	return ns, nc, nil
}

// close deletes the stream, closes the connection and stops an embedded
// server. It returns the first error; everything is attempted.
func (b *broker) close(ctx context.Context) error {
	var err error
	if b.stream != nil && b.js != nil {
		name := b.stream.CachedInfo().Config.Name
		if delErr := b.js.DeleteStream(ctx, name); delErr != nil {
			err = fmt.Errorf("delete stream %s: %w", name, delErr)
		}
	}
	if b.nc != nil {
		b.nc.Close()
	}
	if b.embedded != nil {
		b.embedded.Shutdown()
		b.embedded.WaitForShutdown()
	}
	return err
}
