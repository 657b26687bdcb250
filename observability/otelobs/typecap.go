package otelobs

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// OtherMessageType is the reliar.message_type of the types past the cap set
// by WithMaxMessageTypes.
const OtherMessageType = "other"

// typeCap maps message types to attribute values, giving at most max types
// their own value.
type typeCap struct {
	max    int
	common []attribute.KeyValue
	mu     sync.RWMutex
	known  map[string]typeAttr
	other  typeAttr
}

// typeAttr is a message type's attribute, and the measurement option of the
// common attributes with it, built once.
type typeAttr struct {
	kv  attribute.KeyValue
	opt metric.MeasurementOption
}

func newTypeCap(max int, common []attribute.KeyValue) *typeCap {
	c := &typeCap{max: max, common: common, known: make(map[string]typeAttr)}
	c.other = c.newAttr(OtherMessageType)
	return c
}

func (c *typeCap) newAttr(messageType string) typeAttr {
	kv := keyMessageType.String(validUTF8(messageType))
	return typeAttr{kv: kv, opt: metric.WithAttributeSet(attribute.NewSet(append(slices.Clip(c.common), kv)...))}
}

// attr returns the reliar.message_type attribute for messageType.
func (c *typeCap) attr(messageType string) typeAttr {
	c.mu.RLock()
	a, ok := c.known[messageType]
	full := len(c.known) >= c.max
	c.mu.RUnlock()
	if ok {
		return a
	}
	if full {
		return c.other
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.known[messageType]; ok {
		return a
	}
	if len(c.known) >= c.max {
		return c.other
	}
	a = c.newAttr(messageType)
	c.known[messageType] = a
	return a
}

// validUTF8 repairs s: a message type comes from a stored row, and
// exporters reject invalid UTF-8.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
