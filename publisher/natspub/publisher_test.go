package natspub_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/natspub"
	"github.com/reliar/reliar/publisher/publishertest"
)

// keyedSubject routes by partition key: "<prefix>.<type>.<key>".
func keyedSubject(prefix string) func(*reliar.SerializedEnvelope) string {
	return func(e *reliar.SerializedEnvelope) string {
		return prefix + "." + e.MessageType + "." + e.PartitionKey()
	}
}

func newPublisher(t testing.TB, js jetstream.JetStream, opts ...natspub.Option) *natspub.Publisher {
	t.Helper()
	p, err := natspub.New(js, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func TestPublisherSuite(t *testing.T) {
	publishertest.Run(t, func(t *testing.T) publishertest.Harness {
		js := connect(t)
		stream, prefix := testStream(t, js)
		return publishertest.Harness{
			Publisher: newPublisher(t, js, natspub.WithSubjectFunc(keyedSubject(prefix))),
			Receive:   newStreamReader(stream).Receive,
			Decode: func(r publishertest.Received) (*reliar.SerializedEnvelope, error) {
				m := r.Message.(*nats.Msg)
				return natspub.Envelope(m.Header, m.Data)
			},
			Reference: sdkReference,
			Unroutable: func(t *testing.T) reliar.Publisher {
				return newPublisher(t, js, natspub.WithSubjectPrefix(uniqueName("nostream")))
			},
			Misconfigured: func(t *testing.T) (reliar.Publisher, func()) {
				later := uniqueName("later")
				p := newPublisher(t, js, natspub.WithSubjectPrefix(later))
				return p, func() {
					// The stream of the harness takes the new subjects
					// too, as an operator would add them.
					cfg := stream.CachedInfo().Config
					cfg.Subjects = append(cfg.Subjects, later+".>")
					if _, err := js.UpdateStream(t.Context(), cfg); err != nil {
						t.Fatalf("add the subjects to the stream: %v", err)
					}
				}
			},
			TooLarge: func(t *testing.T) *reliar.SerializedEnvelope {
				e := publishertest.Envelope(7)
				e.Payload = bytes.Repeat([]byte("x"), maxMsgSize+1)
				return e
			},
			Broken: brokenPublisher,
			Refused: func(t *testing.T, seq int) *reliar.SerializedEnvelope {
				e := publishertest.Envelope(seq)
				e.Payload = bytes.Repeat([]byte("x"), maxMsgSize+1)
				return e
			},
			Features: publishertest.Features{
				Batch:             true,
				KeyIsPartitionKey: true, // through the subject, see keyedSubject
				DedupByID:         true,
				Limitations: "one NATS server: the stream has one replica, so the publish ack proves " +
					"storage but not replication; the partition key is observed through a subject " +
					"mapping of the test's own (WithSubjectFunc)",
			},
		}
	})
}

// brokenPublisher returns a publisher whose live connection to the broker
// has just been cut: the client keeps reconnecting to an address that no
// longer answers, as during a broker crash or a network partition.
func brokenPublisher(t *testing.T) reliar.Publisher {
	px := startProxy(t, strings.TrimPrefix(natsURL, "nats://"))
	p, err := natspub.Connect(t.Context(), "nats://"+px.addr(), natspub.WithConnOptions(
		nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond)))
	if err != nil {
		t.Fatalf("Connect through the proxy: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	px.stop()
	return p
}

func TestNeverConnected(t *testing.T) {
	// A client still retrying its first connection knows nothing of the
	// server yet: its publishes fail fast, and transiently.
	p, err := natspub.Connect(t.Context(), "nats://"+closedAddr(t), natspub.WithConnOptions(
		nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond)))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer p.Close()
	errs := append(p.PublishBatch(t.Context(), []*reliar.SerializedEnvelope{publishertest.Envelope(1)}),
		p.Publish(t.Context(), publishertest.Envelope(2)))
	for _, err := range errs {
		if err == nil || reliar.IsPermanent(err) {
			t.Errorf("publish before the first connection: %v, want a transient error", err)
		}
	}
}

func TestDefaultSubject(t *testing.T) {
	js := connect(t)
	stream, prefix := testStream(t, js)
	p := newPublisher(t, js, natspub.WithSubjectPrefix(prefix))
	e := publishertest.Envelope(1)
	if err := p.Publish(t.Context(), e); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	m, err := stream.GetMsg(t.Context(), 1)
	if err != nil {
		t.Fatalf("GetMsg: %v", err)
	}
	if want := prefix + "." + e.MessageType; m.Subject != want {
		t.Errorf("subject %q, want %q", m.Subject, want)
	}
	if got := m.Header.Get(jetstream.MsgIDHeader); got != e.ID.String() {
		t.Errorf("Nats-Msg-Id %q, want the message id %s", got, e.ID)
	}
	d, err := natspub.Envelope(m.Header, m.Data)
	if err != nil {
		t.Fatalf("Envelope: %v", err)
	}
	if err := publishertest.Compare(e, d); err != nil {
		t.Error(err)
	}
}

func TestPublishRefusesBadMessages(t *testing.T) {
	js := connect(t)
	stream, prefix := testStream(t, js)
	p := newPublisher(t, js, natspub.WithSubjectPrefix(prefix))
	tests := []struct {
		name  string
		edit  func(e *reliar.SerializedEnvelope)
		want  error
		check func(err error) bool
	}{
		{"reserved header", func(e *reliar.SerializedEnvelope) { e.Headers["Nats-Rollup"] = "all" }, natspub.ErrInvalidHeader, nil},
		{"header value with a line break", func(e *reliar.SerializedEnvelope) { e.Headers["x-a"] = "a\r\nb" }, natspub.ErrInvalidHeader, nil},
		{"header name with a colon", func(e *reliar.SerializedEnvelope) { e.Headers["x:a"] = "v" }, natspub.ErrInvalidHeader, nil},
		{"type with a space", func(e *reliar.SerializedEnvelope) { e.MessageType = "orders placed" }, natspub.ErrInvalidSubject, nil},
		{"type with a wildcard", func(e *reliar.SerializedEnvelope) { e.MessageType = "orders.*" }, natspub.ErrInvalidSubject, nil},
		{"empty type", func(e *reliar.SerializedEnvelope) { e.MessageType = "" }, natspub.ErrInvalidSubject, nil},
		{"over the server's max payload", func(e *reliar.SerializedEnvelope) { e.Payload = make([]byte, 2<<20) }, natspub.ErrTooLarge, nil},
		{"over the stream's max message size", func(e *reliar.SerializedEnvelope) { e.Payload = make([]byte, maxMsgSize+1) }, nil,
			func(err error) bool {
				var apiErr *jetstream.APIError
				return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := publishertest.Envelope(1)
			tt.edit(e)
			err := p.Publish(t.Context(), e)
			if !reliar.IsPermanent(err) {
				t.Fatalf("Publish: %v, want a permanent error", err)
			}
			if tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Publish: %v, want %v", err, tt.want)
			}
			if tt.check != nil && !tt.check(err) {
				t.Fatalf("Publish: unexpected error %v", err)
			}
			res := p.PublishBatch(t.Context(), []*reliar.SerializedEnvelope{publishertest.Envelope(2), e})
			if res[0] != nil || !reliar.IsPermanent(res[1]) {
				t.Fatalf("PublishBatch: %v, want success then a permanent error", res)
			}
		})
	}
	info, err := stream.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Msgs; n != uint64(len(tests)) {
		t.Fatalf("the stream holds %d messages, want only the %d good ones", n, len(tests))
	}
}

// TestNoStream: a subject no stream listens on fails every publish
// transiently, one by one and in batches; once the operator creates the
// stream, the same publisher delivers.
func TestNoStream(t *testing.T) {
	js := connect(t)
	prefix := uniqueName("nostream")
	p := newPublisher(t, js, natspub.WithSubjectPrefix(prefix))
	errs := append(p.PublishBatch(t.Context(), []*reliar.SerializedEnvelope{publishertest.Envelope(1), publishertest.Envelope(2)}),
		p.Publish(t.Context(), publishertest.Envelope(3)))
	for _, err := range errs {
		if !errors.Is(err, natspub.ErrNoStream) || reliar.IsPermanent(err) {
			t.Errorf("publish: %v, want a transient ErrNoStream", err)
		}
	}
	createStream(t, js, prefix, 0)
	if err := p.Publish(t.Context(), publishertest.Envelope(4)); err != nil {
		t.Fatalf("publish once the stream exists: %v", err)
	}
}

// TestMaxPayloadCountsHeaders: the server's max_payload counts the header
// block, so a payload of exactly max_payload fails permanently, before it
// is sent, with that reason; one that fits with its headers is stored.
func TestMaxPayloadCountsHeaders(t *testing.T) {
	js := connect(t)
	prefix := uniqueName("big")
	createStream(t, js, prefix, 0)
	p := newPublisher(t, js, natspub.WithSubjectPrefix(prefix))
	limit := int(js.Conn().MaxPayload())
	e := publishertest.Envelope(1)
	e.Payload = make([]byte, limit)
	err := p.Publish(t.Context(), e)
	if !errors.Is(err, natspub.ErrTooLarge) || !reliar.IsPermanent(err) || !strings.Contains(err.Error(), strconv.Itoa(limit)) {
		t.Fatalf("Publish of a payload of max_payload: %v, want a permanent ErrTooLarge naming %d", err, limit)
	}
	res := p.PublishBatch(t.Context(), []*reliar.SerializedEnvelope{e})
	if !errors.Is(res[0], natspub.ErrTooLarge) || !reliar.IsPermanent(res[0]) {
		t.Fatalf("PublishBatch of a payload of max_payload: %v, want a permanent ErrTooLarge", res[0])
	}
	e.Payload = make([]byte, limit-4096)
	if err := p.Publish(t.Context(), e); err != nil {
		t.Fatalf("Publish of a message that fits with its headers: %v", err)
	}
}

func TestConnectOwnsItsConnection(t *testing.T) {
	_, prefix := testStream(t, connect(t))
	p, err := natspub.Connect(t.Context(), natsURL, natspub.WithSubjectPrefix(prefix))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if err := p.Publish(t.Context(), publishertest.Envelope(1)); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	_ = p.Close()
	_ = p.Close()
	err = p.Publish(t.Context(), publishertest.Envelope(2))
	if !errors.Is(err, natspub.ErrClosed) || reliar.IsPermanent(err) {
		t.Fatalf("Publish after Close: %v, want a transient ErrClosed", err)
	}
	for i, err := range p.PublishBatch(t.Context(), []*reliar.SerializedEnvelope{publishertest.Envelope(3)}) {
		if !errors.Is(err, natspub.ErrClosed) {
			t.Fatalf("PublishBatch result %d after Close: %v, want ErrClosed", i, err)
		}
	}
}

func TestConnectFails(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	short, cancel2 := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel2()
	tests := []struct {
		name string
		ctx  context.Context
		url  string
		opts []natspub.Option
		want error
	}{
		{"unreachable", short, "nats://" + closedAddr(t), nil, nats.ErrNoServers},
		{"cancelled", cancelled, natsURL, nil, context.Canceled},
		{"bad option", t.Context(), natsURL, []natspub.Option{natspub.WithSubjectPrefix("a b")}, natspub.ErrInvalidOption},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := natspub.Connect(tt.ctx, tt.url, tt.opts...)
			if p != nil || !errors.Is(err, tt.want) {
				t.Fatalf("Connect: %v, %v; want %v", p, err, tt.want)
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	js := connect(t)
	subject := func(*reliar.SerializedEnvelope) string { return "x" }
	tests := []struct {
		name string
		js   jetstream.JetStream
		opts []natspub.Option
	}{
		{"nil JetStream", nil, nil},
		{"empty prefix", js, []natspub.Option{natspub.WithSubjectPrefix("")}},
		{"prefix with a wildcard", js, []natspub.Option{natspub.WithSubjectPrefix("a.>")}},
		{"nil subject func", js, []natspub.Option{natspub.WithSubjectFunc(nil)}},
		{"prefix and func", js, []natspub.Option{natspub.WithSubjectPrefix("a"), natspub.WithSubjectFunc(subject)}},
		{"connection options", js, []natspub.Option{natspub.WithConnOptions(nats.Name("x"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := natspub.New(tt.js, tt.opts...); !errors.Is(err, natspub.ErrInvalidOption) {
				t.Fatalf("New: %v, want ErrInvalidOption", err)
			}
		})
	}
}

func TestEnvelopeRefusesBadHeaders(t *testing.T) {
	h := nats.Header{}
	h.Set("ce-id", "not a uuid")
	if _, err := natspub.Envelope(h, nil); err == nil {
		t.Fatal("Envelope accepted a bad ce-id")
	}
}
