package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
	t        *testing.T
	secret   string
	received chan publishertest.Received
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
	if r.Header.Get("x-refuse") != "" {
		w.WriteHeader(http.StatusUnprocessableEntity)
		return
	}
	h := make(map[string]string, len(r.Header))
	for k, v := range r.Header {
		if k = strings.ToLower(k); !transportHeaders[k] {
			h[k] = v[0]
		}
	}
	rc.received <- publishertest.Received{Headers: h, Payload: body}
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
		rc := &receiver{t: t, secret: webhook.NewSecret(), received: make(chan publishertest.Received, 1024)}
		s := httptest.NewServer(rc)
		t.Cleanup(s.Close)
		return publishertest.Harness{
			Publisher: newPublisher(t, webhook.Config{URL: s.URL, Secrets: []string{rc.secret}}),
			Receive:   rc.Receive,
			Unroutable: func(t *testing.T) reliar.Publisher {
				nowhere := httptest.NewServer(http.NotFoundHandler())
				t.Cleanup(nowhere.Close)
				return newPublisher(t, webhook.Config{URL: nowhere.URL})
			},
			Broken: func(t *testing.T) reliar.Publisher {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := l.Addr().String()
				_ = l.Close()
				return newPublisher(t, webhook.Config{URL: "http://" + addr})
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
