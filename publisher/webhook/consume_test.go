package webhook_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/reliar/reliar/publisher/webhook"
)

func TestMessageID(t *testing.T) {
	id, other := reliar.NewMessageID(), reliar.NewMessageID()
	for _, tt := range []struct {
		name    string
		header  http.Header
		want    reliar.MessageID
		wantErr error
	}{
		{"both", http.Header{"Webhook-Id": {id.String()}, "Ce-Id": {id.String()}}, id, nil},
		{"webhook-id only", http.Header{"Webhook-Id": {id.String()}}, id, nil},
		{"ce-id only", http.Header{"Ce-Id": {id.String()}}, id, nil},
		{"webhook-id wins", http.Header{"Webhook-Id": {id.String()}, "Ce-Id": {other.String()}}, id, nil},
		{"names not canonical", http.Header{"webhook-id": {id.String()}}, id, nil},
		{"empty webhook-id falls back", http.Header{"Webhook-Id": {""}, "Ce-Id": {id.String()}}, id, nil},
		{"none", http.Header{"X-Seq": {"1"}}, reliar.MessageID{}, webhook.ErrNoMessageID},
		{"nil header", nil, reliar.MessageID{}, webhook.ErrNoMessageID},
		{"webhook-id not a UUID", http.Header{"Webhook-Id": {"msg_1"}, "Ce-Id": {id.String()}}, reliar.MessageID{}, webhook.ErrInvalidMessageID},
		{"ce-id not a UUID", http.Header{"Ce-Id": {"nope"}}, reliar.MessageID{}, webhook.ErrInvalidMessageID},
		{"nil UUID", http.Header{"Webhook-Id": {"00000000-0000-0000-0000-000000000000"}}, reliar.MessageID{}, webhook.ErrInvalidMessageID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := webhook.MessageID(tt.header)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("MessageID = %v, %v; want %v, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestEnvelopeOfForeignRequests(t *testing.T) {
	id := reliar.NewMessageID()
	request := func(h map[string]string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/hook", strings.NewReader("body"))
		for k, v := range h {
			r.Header.Set(k, v)
		}
		return r
	}
	for _, tt := range []struct {
		name    string
		request *http.Request
		wantErr error // nil: any error
		ok      bool
		headers map[string]string // the envelope's user headers, when ok
	}{
		{"webhook-id only", request(map[string]string{"webhook-id": id.String(), "X-Tenant-Hint": "a"}), nil, true, map[string]string{"x-tenant-hint": "a"}},
		{"transport headers left out", request(map[string]string{"ce-id": id.String(), "Authorization": "Bearer secret", "Cookie": "c=1", "User-Agent": "ua", "X-Forwarded-For": "10.0.0.1"}), nil, true, map[string]string{}},
		{"no id", request(map[string]string{"ce-type": "t"}), webhook.ErrNoMessageID, false, nil},
		{"bad id", request(map[string]string{"webhook-id": "msg_1"}), webhook.ErrInvalidMessageID, false, nil},
		{"bad ce-time", request(map[string]string{"webhook-id": id.String(), "ce-time": "yesterday"}), nil, false, nil},
		{"nil request", nil, nil, false, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env, err := webhook.Envelope(tt.request, []byte("body"))
			if tt.ok {
				if err != nil {
					t.Fatalf("Envelope: %v", err)
				}
				if env.ID != id || string(env.Payload) != "body" {
					t.Errorf("envelope %v with payload %q, want %v and the body", env.ID, env.Payload, id)
				}
				if len(env.Headers) != len(tt.headers) {
					t.Errorf("user headers %v, want %v", env.Headers, tt.headers)
				}
				for k, v := range tt.headers {
					if env.Headers[k] != v {
						t.Errorf("user header %s = %q, want %q", k, env.Headers[k], v)
					}
				}
				return
			}
			if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) {
				t.Fatalf("Envelope error = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestEnvelopeRoundTrip rebuilds, in a receiver, every message the
// publisher posted, after checking its signature.
func TestEnvelopeRoundTrip(t *testing.T) {
	secret := webhook.NewSecret()
	type result struct {
		id  reliar.MessageID
		env *reliar.SerializedEnvelope
		err error
	}
	got := make(chan result, 2)
	s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = webhook.Verify(secret, r.Header, body, 0)
		}
		var res result
		if err == nil {
			res.id, err = webhook.MessageID(r.Header)
		}
		if err == nil {
			res.env, err = webhook.Envelope(r, body)
		}
		res.err = err
		got <- res
		w.WriteHeader(http.StatusNoContent)
	})
	p := newPublisher(t, s.URL, webhook.WithSecrets(secret),
		webhook.WithHeader(func(_ *reliar.SerializedEnvelope, h http.Header) { h.Set("Authorization", "Bearer token") }))
	for _, sent := range []*reliar.SerializedEnvelope{publishertest.Envelope(1), publishertest.Unkeyed(2)} {
		if err := p.Publish(t.Context(), sent); err != nil {
			t.Fatalf("Publish: %v", err)
		}
		r := <-got
		if r.err != nil {
			t.Fatalf("receiver: %v", r.err)
		}
		if r.id != sent.ID {
			t.Errorf("MessageID = %v, want %v", r.id, sent.ID)
		}
		if err := publishertest.Compare(sent, r.env); err != nil {
			t.Error(err)
		}
	}
}
