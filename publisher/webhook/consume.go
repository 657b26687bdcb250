package webhook

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/reliar/reliar"
)

var (
	// ErrNoMessageID is returned by [MessageID] and [Envelope] for a
	// request with neither a webhook-id nor a ce-id header.
	ErrNoMessageID = errors.New("webhook: request has no message id (webhook-id or ce-id header)")
	// ErrInvalidMessageID is wrapped by the error of [MessageID] and
	// [Envelope] for a message id that is not a UUID, or is the nil UUID.
	ErrInvalidMessageID = errors.New("webhook: invalid message id")
)

// MessageID reads the message id of a received request, the key a
// receiver deduplicates by (see package inbox): its webhook-id header,
// else its ce-id header. The publisher sets both to the message id, and
// they stay the same on every retry. Check the request with [Verify]
// first: until then its headers are whatever the sender chose.
func MessageID(h http.Header) (reliar.MessageID, error) {
	for _, name := range []string{HeaderWebhookID, reliar.HeaderID} {
		v := lookup(h, name)
		if v == "" {
			continue
		}
		id, err := reliar.ParseMessageID(v)
		if err != nil {
			return reliar.MessageID{}, fmt.Errorf("%w in %s: %w", ErrInvalidMessageID, name, err)
		}
		if id == (reliar.MessageID{}) {
			return reliar.MessageID{}, fmt.Errorf("%w in %s: the nil UUID", ErrInvalidMessageID, name)
		}
		return id, nil
	}
	return reliar.MessageID{}, ErrNoMessageID
}

// Envelope rebuilds the envelope of a received request, for receivers
// written in Go: reliar.EnvelopeFromHeaders over the request headers, the
// ce- ones percent-decoded as the CloudEvents HTTP binding's receive rule
// says, with body (the request body, as read for [Verify]) as the payload
// and the id [MessageID] reads. Of a repeated header the first value counts. The
// Standard Webhooks headers and HTTP's own request headers (Authorization,
// Cookie, User-Agent, Accept-*, Content-Length, Connection, Via,
// X-Forwarded-For, …) are not part of the message and are left out, so a
// user header of the same name does not come back.
//
// [WithHeader]'s headers come back as user headers unless listed there. Call Verify first: an unverified request's headers are
// whatever the sender chose. It fails like MessageID, and when an
// attribute header does not parse.
func Envelope(r *http.Request, body []byte) (*reliar.SerializedEnvelope, error) {
	if r == nil {
		return nil, errors.New("webhook: nil request")
	}
	id, err := MessageID(r.Header)
	if err != nil {
		return nil, err
	}
	h := make(map[string]string, len(r.Header))
	for k, vs := range r.Header {
		name := strings.ToLower(k)
		if len(vs) == 0 || httpHeaders[name] || strings.HasPrefix(name, "webhook-") {
			continue
		}
		v := vs[0]
		if strings.HasPrefix(name, "ce-") {
			// The HTTP binding's receive rule: unquote, then one round
			// of percent-decoding.
			if v, err = percentDecode(v); err != nil {
				return nil, fmt.Errorf("webhook: decode request %s: header %s: %w", id, name, err)
			}
		}
		h[name] = v
	}
	h[reliar.HeaderID] = id.String()
	env, err := reliar.EnvelopeFromHeaders(h, body)
	if err != nil {
		return nil, fmt.Errorf("webhook: decode request %s: %w", id, err)
	}
	return env, nil
}

// lookup returns the first value of header name, also when h was built
// without canonical names.
func lookup(h http.Header, name string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	for k, vs := range h {
		if len(vs) > 0 && vs[0] != "" && strings.EqualFold(k, name) {
			return vs[0]
		}
	}
	return ""
}

// httpHeaders are the request headers HTTP clients, proxies and
// [WithHeader] add for the transport or for authentication, by
// lower-case name. [Envelope] leaves them out of the message.
var httpHeaders = map[string]bool{
	"accept": true, "accept-charset": true, "accept-encoding": true, "accept-language": true,
	"authorization": true, "cache-control": true, "connection": true, "content-encoding": true,
	"content-length": true, "cookie": true, "expect": true, "forwarded": true, "host": true,
	"keep-alive": true, "pragma": true, "proxy-authorization": true, "proxy-connection": true,
	"te": true, "trailer": true, "transfer-encoding": true, "upgrade": true, "user-agent": true,
	"via": true, "x-forwarded-for": true, "x-forwarded-host": true, "x-forwarded-proto": true,
	"x-real-ip": true,
}
