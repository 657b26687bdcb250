package webhook

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/reliar/reliar"
)

// ErrInvalidOption is wrapped by every error of [New] about its URL or its
// options.
var ErrInvalidOption = errors.New("webhook: invalid option")

// Option configures a [Publisher]. Options validate their arguments and
// return an error wrapping [ErrInvalidOption].
type Option func(*options) error

type options struct {
	urlFunc          func(env *reliar.SerializedEnvelope) string
	secrets          []string
	timeout          time.Duration
	client           *http.Client
	allowedHosts     []string
	header           func(env *reliar.SerializedEnvelope, h http.Header)
	maxResponseBytes int64
}

const (
	defaultTimeout          = 10 * time.Second
	defaultMaxResponseBytes = 64 << 10
)

// WithSecrets sets the Standard Webhooks signing secrets: base64 keys,
// optionally prefixed with "whsec_" (see [NewSecret]). Every request
// carries one signature per secret; list the new secret next to the old
// one while receivers rotate. Required: at least one.
func WithSecrets(secrets ...string) Option {
	return func(o *options) error {
		if len(secrets) == 0 {
			return fmt.Errorf("%w: WithSecrets: no secret", ErrInvalidOption)
		}
		for i, s := range secrets {
			if _, err := ParseSecret(s); err != nil {
				return fmt.Errorf("%w: WithSecrets: secret %d: %w", ErrInvalidOption, i, err)
			}
		}
		o.secrets = slices.Clone(secrets)
		return nil
	}
}

// WithURLFunc chooses the endpoint of each message (for example by tenant
// or by Metadata.Routing.Destination) instead of the URL given to [New],
// which must then be empty. An empty or invalid URL fails that message
// permanently. Pair it with [WithAllowedHosts] when the URL comes from data.
func WithURLFunc(f func(env *reliar.SerializedEnvelope) string) Option {
	return func(o *options) error {
		if f == nil {
			return fmt.Errorf("%w: WithURLFunc: nil func", ErrInvalidOption)
		}
		o.urlFunc = f
		return nil
	}
}

// WithTimeout bounds each request, within the caller's context. Defaults
// to 10s.
func WithTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("%w: WithTimeout: %v, want > 0", ErrInvalidOption, d)
		}
		o.timeout = d
		return nil
	}
}

// WithHTTPClient sends the requests with c. Defaults to a client of the
// publisher's own. The client is copied, and the copy never follows
// redirects.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) error {
		if c == nil {
			return fmt.Errorf("%w: WithHTTPClient: nil client", ErrInvalidOption)
		}
		o.client = c
		return nil
	}
}

// WithAllowedHosts lists the only host names requests may go to; a message
// for any other host fails permanently before anything is sent. An entry
// "*.example.com" allows every subdomain of example.com. Names are
// compared without the port, case-insensitively; they are not resolved, so
// the list guards against misrouted messages, not against a DNS name that
// points somewhere unexpected.
func WithAllowedHosts(hosts ...string) Option {
	return func(o *options) error {
		if len(hosts) == 0 {
			return fmt.Errorf("%w: WithAllowedHosts: no host", ErrInvalidOption)
		}
		for _, h := range hosts {
			if strings.TrimPrefix(h, "*.") == "" || strings.ContainsAny(h, "/:") {
				return fmt.Errorf("%w: WithAllowedHosts: %q is not a host name", ErrInvalidOption, h)
			}
		}
		o.allowedHosts = slices.Clone(hosts)
		return nil
	}
}

// WithHeader adds headers of the caller's own to each request (for
// example an Authorization header). f runs before the CloudEvents and
// signature headers are set, which therefore win.
func WithHeader(f func(env *reliar.SerializedEnvelope, h http.Header)) Option {
	return func(o *options) error {
		if f == nil {
			return fmt.Errorf("%w: WithHeader: nil func", ErrInvalidOption)
		}
		o.header = f
		return nil
	}
}

// WithMaxResponseBytes bounds how much of an answer's body is read (and
// discarded: no byte of it is kept) before the connection is released, so
// that it can be reused. Zero means the default, 64 KiB; a negative n reads
// nothing, and a connection whose answer had a body is then not reused.
func WithMaxResponseBytes(n int64) Option {
	return func(o *options) error {
		switch {
		case n == 0:
			o.maxResponseBytes = defaultMaxResponseBytes
		case n < 0:
			o.maxResponseBytes = -1
		default:
			o.maxResponseBytes = n
		}
		return nil
	}
}

// newOptions applies opts and checks them with rawURL, reporting every
// problem at once.
func newOptions(rawURL string, opts []Option) (options, error) {
	o := options{timeout: defaultTimeout, maxResponseBytes: defaultMaxResponseBytes}
	var errs []error
	for _, opt := range opts {
		if opt == nil {
			errs = append(errs, fmt.Errorf("%w: nil option", ErrInvalidOption))
			continue
		}
		if err := opt(&o); err != nil {
			errs = append(errs, err)
		}
	}
	switch {
	case rawURL == "" && o.urlFunc == nil:
		errs = append(errs, fmt.Errorf("%w: a URL or WithURLFunc is required", ErrInvalidOption))
	case rawURL != "" && o.urlFunc != nil:
		errs = append(errs, fmt.Errorf("%w: a URL and WithURLFunc conflict", ErrInvalidOption))
	case rawURL != "":
		if _, err := parseEndpoint(rawURL); err != nil {
			errs = append(errs, fmt.Errorf("%w: %w", ErrInvalidOption, err))
		} else if err := checkHost(o.allowedHosts, rawURL); err != nil {
			errs = append(errs, fmt.Errorf("%w: %w", ErrInvalidOption, err))
		}
	}
	if len(o.secrets) == 0 {
		errs = append(errs, fmt.Errorf("%w: WithSecrets is required: at least one signing secret", ErrInvalidOption))
	}
	return o, errors.Join(errs...)
}

// parseEndpoint parses an absolute http or https URL.
func parseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %q is not an absolute http or https URL", ErrInvalidURL, u.Redacted())
	}
	return u, nil
}

// checkHost returns ErrHostNotAllowed unless rawURL's host is on the
// allow-list (or the list is empty).
func checkHost(allowed []string, rawURL string) error {
	if len(allowed) == 0 {
		return nil
	}
	u, err := parseEndpoint(rawURL)
	if err != nil {
		return err
	}
	host := strings.ToLower(u.Hostname())
	for _, a := range allowed {
		a = strings.ToLower(a)
		if suffix, ok := strings.CutPrefix(a, "*"); ok {
			if strings.HasSuffix(host, suffix) && len(host) > len(suffix) {
				return nil
			}
		} else if host == a {
			return nil
		}
	}
	return fmt.Errorf("%w: %s", ErrHostNotAllowed, host)
}
