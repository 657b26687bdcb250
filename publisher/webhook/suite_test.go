package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/reliar/reliar/publisher/webhook"
)

// transportHeaders are added by HTTP or by the signing scheme, not by the
// envelope mapping; the harness hands the rest to the suite.
var transportHeaders = map[string]bool{
	"user-agent":        true,
	"content-length":    true,
	"accept-encoding":   true,
	"webhook-id":        true,
	"webhook-timestamp": true,
	"webhook-signature": true,
}

// receiver is an HTTP endpoint that verifies every request's signature
// with the independent implementation and queues what it accepted.
type receiver struct {
	t         *testing.T
	secret    string
	reference *standardwebhooks.Webhook
	received  chan publishertest.Received
}

// receiverLimit is the largest body the receiver takes; it answers 413
// to larger ones.
const receiverLimit = 64 << 10

// request is what the receiver got: the headers and the body.
type request struct {
	header http.Header
	body   []byte
}

// newReceiver returns a receiver checking signatures made with a fresh
// secret, with the independent implementation and the Standard Webhooks
// reference library.
func newReceiver(t *testing.T) *receiver {
	secret := webhook.NewSecret()
	ref, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatalf("the Standard Webhooks library refuses the secret: %v", err)
	}
	return &receiver{t: t, secret: secret, reference: ref, received: make(chan publishertest.Received, 1024)}
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if !independentVerify(rc.secret, r.Header, body) {
		rc.t.Errorf("receiver: request %s has no valid signature", r.Header.Get("webhook-id"))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if err := rc.reference.Verify(body, r.Header); err != nil {
		rc.t.Errorf("receiver: the Standard Webhooks library refuses request %s: %v", r.Header.Get("webhook-id"), err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.Header.Get("x-refuse") != "" {
		w.WriteHeader(http.StatusUnprocessableEntity)
		return
	}
	if len(body) > receiverLimit {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	h := make(map[string]string, len(r.Header))
	for k, v := range r.Header {
		if k = strings.ToLower(k); !transportHeaders[k] {
			h[k] = v[0]
		}
	}
	rc.received <- publishertest.Received{Headers: h, Payload: body, Message: &request{header: r.Header.Clone(), body: body}}
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) Receive(ctx context.Context, n int) ([]publishertest.Received, error) {
	var got []publishertest.Received
	for len(got) < n {
		select {
		case r := <-rc.received:
			got = append(got, r)
		case <-ctx.Done():
			return got, fmt.Errorf("receiver: %w", ctx.Err())
		}
	}
	return got, nil
}

func TestPublisherSuite(t *testing.T) {
	publishertest.Run(t, func(t *testing.T) publishertest.Harness {
		rc := newReceiver(t)
		s := httptest.NewServer(rc)
		t.Cleanup(s.Close)
		return publishertest.Harness{
			Publisher: newPublisher(t, s.URL, webhook.WithSecrets(rc.secret)),
			Receive:   rc.Receive,
			Decode: func(r publishertest.Received) (*reliar.SerializedEnvelope, error) {
				m := r.Message.(*request)
				return webhook.Envelope(&http.Request{Header: m.header}, m.body)
			},
			Reference: sdkReference,
			Unroutable: func(t *testing.T) reliar.Publisher {
				nowhere := httptest.NewServer(http.NotFoundHandler())
				t.Cleanup(nowhere.Close)
				return newPublisher(t, nowhere.URL)
			},
			Misconfigured: func(t *testing.T) (reliar.Publisher, func()) {
				var deployed atomic.Bool
				later := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if !deployed.Load() {
						http.Error(w, "no such hook", http.StatusNotFound)
						return
					}
					rc.ServeHTTP(w, r)
				}))
				t.Cleanup(later.Close)
				return newPublisher(t, later.URL, webhook.WithSecrets(rc.secret)), func() { deployed.Store(true) }
			},
			TooLarge: func(t *testing.T) *reliar.SerializedEnvelope {
				e := publishertest.Envelope(7)
				e.Payload = make([]byte, receiverLimit+1)
				return e
			},
			Broken: func(t *testing.T) reliar.Publisher {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := l.Addr().String()
				_ = l.Close()
				return newPublisher(t, "http://"+addr)
			},
			Refused: func(t *testing.T, seq int) *reliar.SerializedEnvelope {
				e := publishertest.Envelope(seq)
				e.Headers["x-refuse"] = "yes"
				return e
			},
			Features: publishertest.Features{
				Limitations: "an HTTP receiver has no partition key and does not deduplicate: " +
					"receivers deduplicate by webhook-id",
			},
		}
	})
}
