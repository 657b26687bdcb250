package webhook_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/reliar/reliar/publisher/webhook"
)

// TestAttributesArePercentEncoded: the HTTP binding requires space,
// double quote, percent and every byte outside printable ASCII of an
// attribute value to travel as %XX, and Content-Type as it is; Envelope
// applies the receive rule and gets the values back.
func TestAttributesArePercentEncoded(t *testing.T) {
	type request struct {
		h    http.Header
		body []byte
	}
	got := make(chan request, 1)
	s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- request{r.Header.Clone(), body}
	})
	e := publishertest.Envelope(1)
	e.MessageType = `bestellung größe 100% "x"`
	e.Metadata.Routing.Source = "/zahlung/ä"
	e.ContentType = `application/json; charset="utf-8"`
	if err := newPublisher(t, s.URL).Publish(t.Context(), e); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	r := <-got
	for name, want := range map[string]string{
		"ce-type":      "bestellung%20gr%C3%B6%C3%9Fe%20100%25%20%22x%22",
		"ce-source":    "/zahlung/%C3%A4",
		"ce-id":        e.ID.String(),
		"content-type": `application/json; charset="utf-8"`,
		"traceparent":  e.Metadata.Trace.Traceparent,
	} {
		if v := r.h.Get(name); v != want {
			t.Errorf("header %s = %q on the wire, want %q", name, v, want)
		}
	}
	for k, vs := range r.h {
		for _, v := range vs {
			for i := range len(v) {
				if c := v[i]; len(k) > 3 && (k[:3] == "Ce-") && (c < 0x21 || c > 0x7e) {
					t.Errorf("header %s holds the byte %#x", k, c)
				}
			}
		}
	}
	env, err := webhook.Envelope(&http.Request{Header: r.h}, r.body)
	if err != nil {
		t.Fatalf("Envelope: %v", err)
	}
	if env.MessageType != e.MessageType || env.Metadata.Routing.Source != e.Metadata.Routing.Source || env.ContentType != e.ContentType {
		t.Errorf("Envelope read %q, %q, %q; want %q, %q, %q", env.MessageType, env.Metadata.Routing.Source, env.ContentType,
			e.MessageType, e.Metadata.Routing.Source, e.ContentType)
	}
}

// Envelope applies the binding's receive rule: a double-quoted value is
// unquoted first, then percent-decoded once; a broken escape is an error.
func TestEnvelopeDecodesHeaderValues(t *testing.T) {
	id := publishertest.Envelope(1).ID.String()
	for _, tt := range []struct {
		value, want string
		ok          bool
	}{
		{"plain", "plain", true},
		{"a%20b%25", "a b%", true},
		{"%C3%A4", "ä", true},
		{`"quoted \"x\" %41"`, `quoted "x" A`, true},
		{"%2541", "%41", true}, // one round only
		{"bad%2", "", false},
		{"bad%zz", "", false},
	} {
		h := http.Header{}
		h.Set("ce-id", id)
		h.Set("ce-type", tt.value)
		env, err := webhook.Envelope(&http.Request{Header: h}, nil)
		if tt.ok != (err == nil) || (err == nil && env.MessageType != tt.want) {
			t.Errorf("ce-type %q: Envelope = %v, %v; want %q (ok %v)", tt.value, env, err, tt.want, tt.ok)
		}
	}
}
