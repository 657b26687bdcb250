package natspub_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar/publisher/publishertest"
)

// natsURL is the NATS server (with JetStream) the tests run against. A
// test fails, never skips, when it is not there.
const natsURL = "nats://127.0.0.1:4222"

// maxMsgSize is the test streams' maximum message size: a larger message
// is refused by the server.
const maxMsgSize = 64 << 10

// connect opens a JetStream connection closed at the end of t.
func connect(t testing.TB) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(natsURL, nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatalf("connect to NATS at %s: %v", natsURL, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	return js
}

// uniqueName returns a name no other test uses, valid as a stream name
// and as a subject token.
func uniqueName(kind string) string {
	return kind + "_" + strings.ToLower(rand.Text()[:12])
}

// testStream creates a stream of its own listening on "<prefix>.>" and
// deletes it at the end of t.
func testStream(t testing.TB, js jetstream.JetStream) (jetstream.Stream, string) {
	t.Helper()
	name, prefix := uniqueName("reliartest"), uniqueName("rt")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name:       name,
		Subjects:   []string{prefix + ".>"},
		Storage:    jetstream.FileStorage,
		MaxMsgSize: maxMsgSize,
		Duplicates: 2 * time.Minute,
	})
	if err != nil {
		t.Fatalf("create stream %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := js.DeleteStream(ctx, name); err != nil {
			t.Errorf("delete stream %s: %v", name, err)
		}
	})
	return s, prefix
}

// streamReader reads a stream's stored messages in sequence order: what
// it returns is what JetStream stored, not merely what passed by.
type streamReader struct {
	stream jetstream.Stream
	next   uint64
}

func newStreamReader(s jetstream.Stream) *streamReader {
	return &streamReader{stream: s, next: 1}
}

// Receive returns the next n stored messages; the partition key is the
// last token of the subject.
func (r *streamReader) Receive(ctx context.Context, n int) ([]publishertest.Received, error) {
	var got []publishertest.Received
	for len(got) < n {
		m, err := r.stream.GetMsg(ctx, r.next)
		switch {
		case err == nil:
			r.next++
			got = append(got, received(m))
			continue
		case !errors.Is(err, jetstream.ErrMsgNotFound):
			if ctx.Err() != nil {
				return got, fmt.Errorf("read stream: %w", ctx.Err())
			}
			return got, fmt.Errorf("read stream message %d: %w", r.next, err)
		}
		select {
		case <-ctx.Done():
			return got, fmt.Errorf("read stream: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return got, nil
}

func received(m *jetstream.RawStreamMsg) publishertest.Received {
	h := make(map[string]string, len(m.Header))
	for k, v := range m.Header {
		if k != jetstream.MsgIDHeader {
			h[k] = v[0]
		}
	}
	return publishertest.Received{Headers: h, Payload: m.Data, Key: m.Subject[strings.LastIndexByte(m.Subject, '.')+1:],
		Message: &nats.Msg{Subject: m.Subject, Header: m.Header, Data: m.Data}}
}

// closedAddr returns a local address nothing listens on.
func closedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// createStream creates a stream of its own listening on "<prefix>.>", with
// a maximum message size when maxSize is positive, and deletes it at the
// end of t.
func createStream(t testing.TB, js jetstream.JetStream, prefix string, maxSize int32) {
	t.Helper()
	name := uniqueName("reliartest")
	cfg := jetstream.StreamConfig{Name: name, Subjects: []string{prefix + ".>"}, Storage: jetstream.MemoryStorage}
	if maxSize > 0 {
		cfg.MaxMsgSize = maxSize
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatalf("create stream %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := js.DeleteStream(ctx, name); err != nil {
			t.Errorf("delete stream %s: %v", name, err)
		}
	})
}
