package reliar_test

import (
	"maps"
	"testing"

	"github.com/reliar/reliar"
)

// The pairs of CloudEventHeadersSeq are the map of CloudEventHeaders, each
// name once; user headers in a CloudEvents namespace are renamed out of it,
// so they never overwrite or pose as attributes.
func TestCloudEventHeadersSeq(t *testing.T) {
	env := &reliar.SerializedEnvelope{
		ID:          reliar.NewMessageID(),
		ContentType: "application/json",
		Headers: map[string]string{
			reliar.HeaderID:       "user id",
			reliar.HeaderType:     "user type",
			reliar.HeaderTenantID: "user tenant",
			"x-request":           "abc",
		},
		MessageVersion: 2,
	}
	seen := map[string]string{}
	for k, v := range reliar.CloudEventHeadersSeq(env) {
		if _, dup := seen[k]; dup {
			t.Fatalf("%s yielded twice", k)
		}
		seen[k] = v
	}
	h := reliar.CloudEventHeaders(env)
	if !maps.Equal(seen, h) {
		t.Fatalf("seq %v\nmap %v", seen, h)
	}
	want := map[string]string{
		reliar.HeaderID:              env.ID.String(),
		reliar.HeaderType:            "", // always the envelope's, even empty
		reliar.HeaderSpecVersion:     "1.0",
		reliar.HeaderSource:          reliar.DefaultSource,
		reliar.HeaderContentType:     "application/json",
		reliar.HeaderVersion:         "2",
		"x-" + reliar.HeaderID:       "user id",
		"x-" + reliar.HeaderType:     "user type",
		"x-" + reliar.HeaderTenantID: "user tenant",
		"x-request":                  "abc",
	}
	if !maps.Equal(h, want) {
		t.Fatalf("headers %v\nwant    %v", h, want)
	}

	n := 0
	for range reliar.CloudEventHeadersSeq(env) {
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("stopped after %d pairs, want 2", n)
	}
}

func BenchmarkCloudEventHeaders(b *testing.B) {
	env := &reliar.SerializedEnvelope{ID: reliar.NewMessageID(), MessageType: "orders.placed", ContentType: "application/json", Sequence: 7,
		Headers: map[string]string{"x-request": "abc"}}
	env.Metadata.Correlation.ConversationID = env.ID
	b.Run("map", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = reliar.CloudEventHeaders(env)
		}
	})
	b.Run("seq", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for k, v := range reliar.CloudEventHeadersSeq(env) {
				_, _ = k, v
			}
		}
	})
}
