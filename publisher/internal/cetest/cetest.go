// Package cetest checks, in the publishers' tests, a message parsed by the
// CloudEvents Go SDK against the envelope that was published: the SDK's
// bindings read the message, this package only compares what they found.
// It is a module of its own so that the SDK stays a test dependency of the
// publisher modules and never reaches the root module.
package cetest

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/reliar/reliar"
)

// core are the context attributes the SDK holds outside its extensions.
var core = map[string]bool{
	reliar.AttrID: true, reliar.AttrType: true, reliar.AttrSource: true, reliar.AttrSpecVersion: true,
	reliar.AttrTime: true, reliar.AttrDataContentType: true,
}

// Options adapt Check to a binding.
type Options struct {
	// Decode applies the binding's receive rule to a string attribute
	// value the SDK returns as it was on the wire: the HTTP binding's
	// percent-decoding, which the Go SDK leaves to the application. Nil
	// means the values are compared as they are.
	Decode func(string) (string, error)
	// Extra lists extensions the binding adds by itself (the Kafka
	// binding's kafkaoffset, …), which Check ignores.
	Extra []string
}

// Check validates ev and compares every attribute and extension with the
// envelope sent, and the data with its payload. It returns every
// difference, joined.
func Check(ev *event.Event, sent *reliar.SerializedEnvelope, o Options) error {
	if err := ev.Validate(); err != nil {
		return fmt.Errorf("the SDK finds the event invalid: %w", err)
	}
	decode := o.Decode
	if decode == nil {
		decode = func(s string) (string, error) { return s, nil }
	}
	var errs []error
	want := maps.Collect(reliar.CloudEventAttributes(sent))
	got := map[string]string{
		reliar.AttrID:          ev.ID(),
		reliar.AttrType:        ev.Type(),
		reliar.AttrSource:      ev.Source(),
		reliar.AttrSpecVersion: ev.SpecVersion(),
	}
	if ct := ev.DataContentType(); ct != "" {
		got[reliar.AttrDataContentType] = ct
	}
	for name, v := range ev.Extensions() {
		if slices.Contains(o.Extra, name) {
			continue
		}
		s, err := types.ToString(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("extension %s: %w", name, err))
			continue
		}
		got[name] = s
	}
	for name, w := range want {
		if name == reliar.AttrTime {
			if sentAt := sent.Metadata.Delivery.SentAt; sentAt != nil && !ev.Time().Equal(*sentAt) {
				errs = append(errs, fmt.Errorf("time: sent %v, the SDK read %v", *sentAt, ev.Time()))
			}
			continue
		}
		g, ok := got[name]
		if !ok {
			errs = append(errs, fmt.Errorf("attribute %s: sent, the SDK did not find it", name))
			continue
		}
		if !core[name] || name == reliar.AttrType || name == reliar.AttrSource {
			var err error
			if g, err = decode(g); err != nil {
				errs = append(errs, fmt.Errorf("attribute %s: %w", name, err))
				continue
			}
		}
		if name == reliar.AttrSource {
			// The SDK holds the source as a URI reference and writes
			// it back in its escaped form.
			w, g = uriForm(w), uriForm(g)
		}
		if g != w {
			errs = append(errs, fmt.Errorf("attribute %s: sent %q, the SDK read %q", name, w, g))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			errs = append(errs, fmt.Errorf("attribute %s: the SDK found it, it was not sent (a user header read as an attribute?)", name))
		}
	}
	if !bytes.Equal(ev.Data(), sent.Payload) {
		errs = append(errs, fmt.Errorf("data: sent %d bytes, the SDK read %d different ones", len(sent.Payload), len(ev.Data())))
	}
	return errors.Join(errs...)
}

// uriForm is a URI reference as the SDK writes it.
func uriForm(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return s
	}
	return u.String()
}
