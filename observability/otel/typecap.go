package otel

import (
	"strings"
	"sync"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
)

// OtherMessageType is the reliar.message_type of the types past the cap set
// by WithMaxMessageTypes.
const OtherMessageType = "other"

// typeCap maps message types to attribute values, giving at most max types
// their own value.
type typeCap struct {
	max   int
	mu    sync.RWMutex
	known map[string]attribute.KeyValue
	other attribute.KeyValue
}

func newTypeCap(max int) *typeCap {
	return &typeCap{max: max, known: make(map[string]attribute.KeyValue), other: keyMessageType.String(OtherMessageType)}
}

// attr returns the reliar.message_type attribute for messageType.
func (c *typeCap) attr(messageType string) attribute.KeyValue {
	c.mu.RLock()
	kv, ok := c.known[messageType]
	full := len(c.known) >= c.max
	c.mu.RUnlock()
	if ok {
		return kv
	}
	if full {
		return c.other
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kv, ok := c.known[messageType]; ok {
		return kv
	}
	if len(c.known) >= c.max {
		return c.other
	}
	kv = keyMessageType.String(validUTF8(messageType))
	c.known[messageType] = kv
	return kv
}

// validUTF8 repairs s: a message type comes from a stored row, and
// exporters reject invalid UTF-8.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
