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
	cfg    Config
	keys   [][]byte
	client *http.Client
	closed atomic.Bool
}

var _ reliar.Publisher = (*Publisher)(nil)

// New returns a publisher for cfg, or an error wrapping ErrInvalidConfig.
func New(cfg Config) (*Publisher, error) {
	keys, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	var client http.Client
	if cfg.Client != nil {
		client = *cfg.Client
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 64
		client.Transport = t
	}
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &Publisher{cfg: cfg, keys: keys, client: &client}, nil
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
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
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
	endpoint := p.cfg.URL
	if p.cfg.URLFunc != nil {
		endpoint = p.cfg.URLFunc(env)
	}
	u, err := parseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	if err := checkHost(p.cfg.AllowedHosts, endpoint); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(env.Payload))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	if p.cfg.Header != nil {
		p.cfg.Header(env, req.Header)
	}
	for k, v := range reliar.CloudEventHeaders(env) {
		if err := checkHeader(k, v); err != nil {
			return nil, err
		}
		req.Header.Set(k, v)
	}
	id := env.ID.String()
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set(HeaderWebhookID, id)
	req.Header.Set(HeaderWebhookTimestamp, ts)
	req.Header.Set(HeaderWebhookSignature, signatures(p.keys, id, ts, env.Payload))
	req.Header.Set("User-Agent", userAgent)
	return req, nil
}

// outcome drains and closes resp's body, bounded, and classifies its status.
func (p *Publisher) outcome(env *reliar.SerializedEnvelope, resp *http.Response) error {
	defer resp.Body.Close()
	head := make([]byte, maxErrorBody)
	n, _ := io.ReadFull(resp.Body, head)
	// Reading the rest lets the connection be reused; past the bound it is
	// cheaper to drop the connection than to read on.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, max(p.cfg.MaxResponseBytes-int64(n), 0)))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	return fmt.Errorf("webhook: publish %s: %w", env.ID, &StatusError{StatusCode: resp.StatusCode, Body: cleanBody(head[:n])})
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
