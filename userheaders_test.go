package reliar_test

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/reliar/reliar"
)

type placed struct{}

func (placed) MessageType() string { return "orders.placed" }

func TestIsReservedHeader(t *testing.T) {
	for name, want := range map[string]bool{
		"ce-my-ext": true, "Ce-Id": true, "CE_ID": true, "ce_x": true,
		"cloudEvents:id": true, "CLOUDEVENTS:x": true, "cloudevents:": true,
		"x-ce-id": false, "ce": false, "cex": false, "cloudEvents_id": false,
		"traceparent": false, "content-type": false, "": false,
	} {
		if got := reliar.IsReservedHeader(name); got != want {
			t.Errorf("IsReservedHeader(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRenamedHeader(t *testing.T) {
	for name, want := range map[string]string{
		"ce-my-ext":       "x-ce-my-ext",
		"ce_my":           "x-ce_my",
		"cloudEvents:foo": "x-cloudEvents-foo",
		"x-user":          "x-user",
	} {
		if got := reliar.RenamedHeader(name); got != want {
			t.Errorf("RenamedHeader(%q) = %q, want %q", name, got, want)
		}
		if reliar.IsReservedHeader(reliar.RenamedHeader(name)) {
			t.Errorf("RenamedHeader(%q) is still reserved", name)
		}
	}
}

// Enqueue's shared check refuses a user header in any binding's
// namespace, whatever its case, with an error naming the header.
func TestPreparedRefusesReservedHeaders(t *testing.T) {
	for _, name := range []string{"ce-my-ext", "Ce-Type", "ce_id", "CE_X", "cloudEvents:id", "CloudEvents:x"} {
		o := reliar.NewMsg(placed{})
		o.Headers = map[string]string{"x-ok": "v", name: "v"}
		_, err := o.Prepared(time.Now())
		if !errors.Is(err, reliar.ErrReservedHeader) {
			t.Errorf("header %q: Prepared returned %v, want ErrReservedHeader", name, err)
		}
	}
	o := reliar.NewMsg(placed{})
	o.Headers = map[string]string{"x-ce-ok": "v", "traceparent-copy": "v"}
	if _, err := o.Prepared(time.Now()); err != nil {
		t.Fatalf("Prepared refused headers outside the namespaces: %v", err)
	}
}

// A row written by plain SQL can still carry such a header: publishers
// send it renamed, and the envelope's own content type and trace context
// win over user headers of those names.
func TestUserHeaders(t *testing.T) {
	env := &reliar.SerializedEnvelope{
		ID:          reliar.NewMessageID(),
		ContentType: "application/json",
		Headers: map[string]string{
			"ce-my-ext":       "a",
			"cloudEvents:foo": "b",
			"ce_bar":          "c",
			"x-ce_taken":      "mine",
			"ce_taken":        "dropped",
			"content-type":    "text/plain",
			"traceparent":     "kept: the envelope has no trace",
			"x-user":          "d",
		},
	}
	got := maps.Collect(reliar.UserHeaders(env))
	want := map[string]string{
		"x-ce-my-ext":       "a",
		"x-cloudEvents-foo": "b",
		"x-ce_bar":          "c",
		"x-ce_taken":        "mine",
		"traceparent":       "kept: the envelope has no trace",
		"x-user":            "d",
	}
	if !maps.Equal(got, want) {
		t.Fatalf("UserHeaders = %v\nwant %v", got, want)
	}
	for k := range reliar.CloudEventHeaders(env) {
		if k != reliar.HeaderContentType && k != reliar.HeaderTraceparent && reliar.IsReservedHeader(k) && !isAttribute(k) {
			t.Errorf("CloudEventHeaders sends the user header %q in the ce- namespace", k)
		}
	}
}

func isAttribute(header string) bool {
	switch header {
	case reliar.HeaderID, reliar.HeaderType, reliar.HeaderSource, reliar.HeaderSpecVersion, reliar.HeaderTime, reliar.HeaderVersion:
		return true
	}
	return false
}
