package outboxdriver

import (
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/reliar/reliar"
)

// Every claimed row carries a metadata document and often a headers object,
// decoded once per claim. encoding/json's reflection was the largest client
// cost of a PostgreSQL claim, so the two documents are read by the scanner
// below when they have the shape Reliar writes: objects of the known keys,
// strings without escapes, no nulls. Anything else (escapes, unknown or
// differently cased keys, nulls, numbers, malformed JSON) falls back to
// encoding/json, so the result is always exactly encoding/json's; a fuzz
// test holds the two to that.

// decodeMetadata decodes a metadata document into m.
func decodeMetadata(b []byte, m *reliar.Metadata) error {
	var fast reliar.Metadata
	if scanMetadata(b, &fast) {
		*m = fast
		return nil
	}
	return json.Unmarshal(b, m)
}

// decodeHeaders decodes a headers object.
func decodeHeaders(b []byte) (map[string]string, error) {
	if h, ok := scanHeaders(b); ok {
		return h, nil
	}
	var h map[string]string
	err := json.Unmarshal(b, &h)
	return h, err
}

// jsonScanner reads the restricted JSON subset; every method reports false
// on anything outside it.
type jsonScanner struct {
	b []byte
	i int
}

func (s *jsonScanner) skipSpace() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips whitespace and the byte c.
func (s *jsonScanner) consume(c byte) bool {
	s.skipSpace()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// peek skips whitespace and reports whether the next byte is c.
func (s *jsonScanner) peek(c byte) bool {
	s.skipSpace()
	return s.i < len(s.b) && s.b[s.i] == c
}

// str reads a string without escapes and returns its contents and the
// quoted form (what UnmarshalJSON methods receive).
func (s *jsonScanner) str() (contents, quoted []byte, ok bool) {
	if !s.consume('"') {
		return nil, nil, false
	}
	start := s.i
	ascii := true
	for ; s.i < len(s.b); s.i++ {
		c := s.b[s.i]
		switch {
		case c == '"':
			contents = s.b[start:s.i]
			s.i++
			if !ascii && !utf8.Valid(contents) {
				return nil, nil, false // encoding/json would replace bad bytes
			}
			return contents, s.b[start-1 : s.i], true
		case c == '\\' || c < 0x20:
			return nil, nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, nil, false
}

// object reads an object, calling field for each member with the scanner
// positioned at the member's value.
func (s *jsonScanner) object(field func(key []byte) bool) bool {
	if !s.consume('{') {
		return false
	}
	if s.consume('}') {
		return true
	}
	for {
		key, _, ok := s.str()
		if !ok || !s.consume(':') || !field(key) {
			return false
		}
		if s.consume('}') {
			return true
		}
		if !s.consume(',') {
			return false
		}
	}
}

// end reports whether only whitespace is left.
func (s *jsonScanner) end() bool {
	s.skipSpace()
	return s.i == len(s.b)
}

// stringInto reads a string value into *dst.
func (s *jsonScanner) stringInto(dst *string) bool {
	v, _, ok := s.str()
	if ok {
		*dst = string(v)
	}
	return ok
}

// uuidInto reads a uuid the way encoding/json does, through UnmarshalText.
func (s *jsonScanner) uuidInto(dst *uuid.UUID) bool {
	v, _, ok := s.str()
	return ok && dst.UnmarshalText(v) == nil
}

// timeInto reads a time the way encoding/json does, through UnmarshalJSON.
func (s *jsonScanner) timeInto(dst **time.Time) bool {
	_, quoted, ok := s.str()
	if !ok {
		return false
	}
	var t time.Time
	if t.UnmarshalJSON(quoted) != nil {
		return false
	}
	*dst = &t
	return true
}

func scanMetadata(b []byte, m *reliar.Metadata) bool {
	s := jsonScanner{b: b}
	ok := s.object(func(key []byte) bool {
		switch string(key) {
		case "correlation":
			c := &m.Correlation
			return s.object(func(key []byte) bool {
				switch string(key) {
				case "correlation_id":
					return s.stringInto(&c.CorrelationID)
				case "conversation_id":
					return s.uuidInto(&c.ConversationID)
				case "causation_id":
					var id uuid.UUID
					c.CausationID = &id
					return s.uuidInto(&id)
				case "request_id":
					var id uuid.UUID
					c.RequestID = &id
					return s.uuidInto(&id)
				}
				return false
			})
		case "trace":
			t := &m.Trace
			return s.object(func(key []byte) bool {
				switch string(key) {
				case "traceparent":
					return s.stringInto(&t.Traceparent)
				case "tracestate":
					return s.stringInto(&t.Tracestate)
				}
				return false
			})
		case "routing":
			r := &m.Routing
			return s.object(func(key []byte) bool {
				switch string(key) {
				case "source":
					return s.stringInto(&r.Source)
				case "destination":
					return s.stringInto(&r.Destination)
				case "reply_to":
					return s.stringInto(&r.ReplyTo)
				}
				return false
			})
		case "delivery":
			d := &m.Delivery
			return s.object(func(key []byte) bool {
				switch string(key) {
				case "sent_at":
					return s.timeInto(&d.SentAt)
				case "expires_at":
					return s.timeInto(&d.ExpiresAt)
				case "deduplication_id":
					return s.stringInto(&d.DeduplicationID)
				case "content_type":
					return s.stringInto(&d.ContentType)
				}
				return false
			})
		case "tenant_id":
			return s.stringInto(&m.TenantID)
		}
		return false
	})
	return ok && s.end()
}

func scanHeaders(b []byte) (map[string]string, bool) {
	s := jsonScanner{b: b}
	if !s.peek('{') {
		return nil, false
	}
	h := make(map[string]string)
	ok := s.object(func(key []byte) bool {
		v, _, ok := s.str()
		if ok {
			h[string(key)] = string(v)
		}
		return ok
	})
	if !ok || !s.end() {
		return nil, false
	}
	return h, true
}

// encodeMetadata encodes the metadata document of m exactly as
// json.Marshal(newMetadataDoc(m)) does, without reflection when every
// string is plain printable ASCII (nothing encoding/json would escape);
// anything else goes through encoding/json.
func encodeMetadata(m *reliar.Metadata) ([]byte, error) {
	if b, ok := appendMetadataDoc(make([]byte, 0, 96), m); ok {
		return b, nil
	}
	return json.Marshal(newMetadataDoc(m))
}

// appendMetadataDoc writes the document: members in declaration order, empty
// strings and nil times left out (omitempty), parts that would be empty
// left out (omitzero).
func appendMetadataDoc(b []byte, m *reliar.Metadata) ([]byte, bool) {
	w := docWriter{b: append(b, '{'), ok: true}
	if t := m.Trace; t != (reliar.Trace{}) {
		w.open("trace")
		w.str("traceparent", t.Traceparent)
		w.str("tracestate", t.Tracestate)
		w.close()
	}
	if r := m.Routing; r != (reliar.Routing{}) {
		w.open("routing")
		w.str("source", r.Source)
		w.str("destination", r.Destination)
		w.str("reply_to", r.ReplyTo)
		w.close()
	}
	if d := m.Delivery; d.SentAt != nil || d.DeduplicationID != "" {
		w.open("delivery")
		w.time("sent_at", d.SentAt)
		w.str("deduplication_id", d.DeduplicationID)
		w.close()
	}
	w.b = append(w.b, '}')
	return w.b, w.ok
}

// docWriter appends the members of nested objects; ok turns false on a
// value it cannot write exactly as encoding/json would.
type docWriter struct {
	b     []byte
	ok    bool
	first bool // no member written yet at the current level
	outer bool // a member written at the top level
}

func (w *docWriter) open(name string) {
	if w.outer {
		w.b = append(w.b, ',')
	}
	w.outer = true
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, `":{`...)
	w.first = true
}

func (w *docWriter) close() { w.b = append(w.b, '}') }

func (w *docWriter) key(name string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, `":`...)
}

func (w *docWriter) str(name, v string) {
	if v == "" {
		return
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			w.ok = false
			return
		}
	}
	w.key(name)
	w.b = append(w.b, '"')
	w.b = append(w.b, v...)
	w.b = append(w.b, '"')
}

func (w *docWriter) time(name string, t *time.Time) {
	if t == nil {
		return
	}
	w.key(name)
	w.b = append(w.b, '"')
	var err error
	if w.b, err = t.AppendText(w.b); err != nil {
		w.ok = false
		return
	}
	w.b = append(w.b, '"')
}
