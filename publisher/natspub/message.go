package natspub

import (
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
)

// reservedPrefix is the header namespace JetStream acts on.
const reservedPrefix = "nats-"

// message maps env to the NATS message published for it.
func (p *Publisher) message(env *reliar.SerializedEnvelope) (*nats.Msg, error) {
	subject := p.opts.subject(env)
	if err := validSubject(subject); err != nil {
		return nil, err
	}
	for k := range env.Headers {
		if strings.HasPrefix(strings.ToLower(k), reservedPrefix) {
			return nil, fmt.Errorf("%w: user header %q is in the reserved Nats- namespace", ErrInvalidHeader, k)
		}
	}
	// One map and one backing array of values per message: the header
	// block is built for every message published.
	n := len(env.Headers) + 16
	h := make(nats.Header, n)
	vals := make([]string, 0, n)
	add := func(k, v string) {
		vals = append(vals, v)
		h[k] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
	for k, v := range reliar.CloudEventHeadersSeq(env) {
		if err := validHeader(k, v); err != nil {
			return nil, err
		}
		add(k, v)
	}
	add(jetstream.MsgIDHeader, h[reliar.HeaderID][0])
	msg := &nats.Msg{Subject: subject, Header: h, Data: env.Payload}
	if err := p.checkSize(env, msg); err != nil {
		return nil, err
	}
	return msg, nil
}

// checkSize fails msg when its headers and data together exceed the
// max_payload the server announced, which counts both.
func (p *Publisher) checkSize(env *reliar.SerializedEnvelope, msg *nats.Msg) error {
	limit := p.maxPayload()
	if limit <= 0 {
		return nil
	}
	if size := headerSize(msg.Header) + len(msg.Data); int64(size) > limit {
		return fmt.Errorf("%w: message %s is %d bytes with its headers (%d of payload), and the server's max_payload is %d",
			ErrTooLarge, env.ID, size, len(msg.Data), limit)
	}
	return nil
}

// maxPayload is the server's announced max_payload, or 0 when unknown (no
// connection yet).
func (p *Publisher) maxPayload() int64 {
	if nc := p.js.Conn(); nc != nil && nc.IsConnected() {
		return nc.MaxPayload()
	}
	return 0
}

// headerSize is the size of h's header block on the wire: the version
// line, one "name: value" line per value, and the blank line.
func headerSize(h nats.Header) int {
	n := len("NATS/1.0\r\n") + len("\r\n")
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(": ") + len(v) + len("\r\n")
		}
	}
	return n
}

// validSubject accepts a publish subject: dot-separated non-empty tokens
// of printable characters, without whitespace or wildcards. It checks
// bytes: every byte of a multi-byte character is above 0x7f, so only ASCII
// can be refused, as with a check of runes.
func validSubject(s string) error {
	if s == "" {
		return fmt.Errorf("%w: empty", ErrInvalidSubject)
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] != '.' {
			if c := s[i]; c <= ' ' || c == 0x7f {
				return fmt.Errorf("%w: %q", ErrInvalidSubject, s)
			}
			continue
		}
		if tok := s[start:i]; tok == "" || tok == "*" || tok == ">" {
			return fmt.Errorf("%w: %q", ErrInvalidSubject, s)
		}
		start = i + 1
	}
	return nil
}

// validHeader refuses what the NATS header block cannot carry: a name with
// a separator or control character, a value with a line break or other
// control character. Values are never printed: they may be sensitive. Like
// validSubject it checks bytes, which refuses exactly what a check of runes
// would: it runs for every header of every message.
func validHeader(name, value string) error {
	if name == "" {
		return fmt.Errorf("%w: name %q", ErrInvalidHeader, name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c == ':' || c == 0x7f {
			return fmt.Errorf("%w: name %q", ErrInvalidHeader, name)
		}
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return fmt.Errorf("%w: value of %q has a control character", ErrInvalidHeader, name)
		}
	}
	return nil
}
