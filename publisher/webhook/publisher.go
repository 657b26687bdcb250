package webhook

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/reliar/reliar"
)

// userAgent identifies the publisher to receivers.
const userAgent = "reliar-webhook/1"

// Publisher posts each message to a webhook endpoint. It is safe for
// concurrent use.
type Publisher struct {
	url    string
	opts   options
	keys   [][]byte
	client *http.Client
	closed atomic.Bool
}

var _ reliar.Publisher = (*Publisher)(nil)

// New returns a publisher that posts every message to url (an absolute
// http or https URL; empty with [WithURLFunc]), signed with the secrets of
// [WithSecrets], which is required. It reports every problem of its
// arguments at once, in an error wrapping [ErrInvalidOption].
func New(url string, opts ...Option) (*Publisher, error) {
	o, err := newOptions(url, opts)
	if err != nil {
		return nil, err
	}
	keys := make([][]byte, len(o.secrets))
	for i, s := range o.secrets {
		keys[i], _ = ParseSecret(s) // checked by WithSecrets
	}
	var client http.Client
	if o.client != nil {
		client = *o.client
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		client.Transport = t
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Publisher{url: url, opts: o, keys: keys, client: &client}, nil
}

// Publish posts env and returns nil once the receiver answered 2xx. See the
// package documentation for how other outcomes are classified.
func (p *Publisher) Publish(ctx context.Context, env *reliar.SerializedEnvelope) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("webhook: publish %s: %w", env.ID, err)
	}
	if p.closed.Load() {
		return fmt.Errorf("webhook: publish %s: %w", env.ID, ErrClosed)
	}
	ctx, cancel := context.WithTimeout(ctx, p.opts.timeout)
	defer cancel()
	req, err := p.request(ctx, env)
	if err != nil {
		return reliar.Permanent(fmt.Errorf("webhook: publish %s: %w", env.ID, err))
	}
	resp, err := p.client.Do(req)
	if err != nil {
		// Network errors, timeouts and cancellations are transient; the
		// *url.Error keeps the context's error visible to errors.Is.
		return fmt.Errorf("webhook: publish %s: %w", env.ID, err)
	}
	return p.outcome(env, resp)
}

// request builds the signed POST for env.
func (p *Publisher) request(ctx context.Context, env *reliar.SerializedEnvelope) (*http.Request, error) {
	endpoint := p.url
	if p.opts.urlFunc != nil {
		endpoint = p.opts.urlFunc(env)
	}
	u, err := parseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	if err := checkHost(p.opts.allowedHosts, endpoint); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(env.Payload))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	if p.opts.header != nil {
		p.opts.header(env, req.Header)
	}
	for k, v := range reliar.UserHeaders(env) {
		if err := checkHeader(k, v); err != nil {
			return nil, err
		}
		req.Header.Set(k, v)
	}
	for k, v := range reliar.TraceHeaders(env) {
		// W3C Trace Context headers, not CloudEvents attributes: sent as
		// they are, for the propagators that read them.
		if err := checkHeader(k, v); err != nil {
			return nil, err
		}
		req.Header.Set(k, v)
	}
	for name, v := range reliar.CloudEventAttributes(env) {
		if name == reliar.AttrDataContentType {
			// Content-Type is HTTP's own header: never encoded.
			if err := checkHeader(reliar.HeaderContentType, v); err != nil {
				return nil, err
			}
			req.Header.Set(reliar.HeaderContentType, v)
			continue
		}
		req.Header.Set(reliar.HTTPHeaderName(name), percentEncode(v))
	}
	id := env.ID.String()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set(HeaderWebhookID, id)
	req.Header.Set(HeaderWebhookTimestamp, ts)
	req.Header.Set(HeaderWebhookSignature, signatures(p.keys, id, ts, env.Payload))
	req.Header.Set("User-Agent", userAgent)
	return req, nil
}

// outcome drains and closes resp's body, bounded, and classifies its
// status. No byte of the body is kept: a receiver may echo the request,
// payload and header values included, and errors end up in logs and in
// the row's last_error.
func (p *Publisher) outcome(env *reliar.SerializedEnvelope, resp *http.Response) error {
	defer resp.Body.Close()
	// Reading the body lets the connection be reused; past the bound it is
	// cheaper to drop the connection than to read on.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, max(p.opts.maxResponseBytes, 0)))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	return fmt.Errorf("webhook: publish %s: %w", env.ID, &StatusError{StatusCode: resp.StatusCode})
}

// Close makes later calls to Publish fail with ErrClosed and closes the idle
// connections of the publisher's client. It is idempotent and always
// returns nil.
func (p *Publisher) Close() error {
	p.closed.Store(true)
	p.client.CloseIdleConnections()
	return nil
}

// checkHeader refuses a header that HTTP cannot carry: a name that is not a
// token, or a value with a control character other than tab.
func checkHeader(name, value string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidHeader)
	}
	for i := range len(name) {
		if !isTokenChar(name[i]) {
			return fmt.Errorf("%w: name %q", ErrInvalidHeader, name)
		}
	}
	for i := range len(value) {
		if c := value[i]; (c < ' ' && c != '\t') || c == 0x7f {
			// The value itself is never printed: it may be sensitive.
			return fmt.Errorf("%w: value of %q has a control character", ErrInvalidHeader, name)
		}
	}
	return nil
}

// isTokenChar reports whether c may appear in an HTTP header name (RFC 9110
// tchar).
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return c < 0x80 && bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0
}
