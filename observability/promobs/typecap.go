package promobs

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// OtherMessageType is the message_type label value of the types past the cap
// set by WithMaxMessageTypes.
const OtherMessageType = "other"

// typeCap maps message types to label values, giving at most max types their
// own value; declared types always keep theirs.
type typeCap struct {
	max   int
	mu    sync.RWMutex
	known map[string]struct{}
}

func newTypeCap(max int, declared []string) *typeCap {
	c := &typeCap{max: max, known: make(map[string]struct{}, len(declared))}
	for _, t := range declared {
		c.known[labelValue(t)] = struct{}{}
	}
	return c
}

// label returns the label value for messageType.
func (c *typeCap) label(messageType string) string {
	t := labelValue(messageType)
	c.mu.RLock()
	_, ok := c.known[t]
	full := len(c.known) >= c.max
	c.mu.RUnlock()
	if ok {
		return t
	}
	if full {
		return OtherMessageType
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.known[t]; ok {
		return t
	}
	if len(c.known) >= c.max {
		return OtherMessageType
	}
	c.known[t] = struct{}{}
	return t
}

// labelValue makes s a valid label value: Prometheus panics on invalid UTF-8,
// and a message type comes from a stored row.
func labelValue(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
