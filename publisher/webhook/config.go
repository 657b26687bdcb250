package webhook

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/reliar/reliar"
)

// ErrInvalidConfig is wrapped by every error of [New] about its [Config].
var ErrInvalidConfig = errors.New("webhook: invalid config")

// Config configures a [Publisher].
type Config struct {
	// URL is the http or https endpoint every message is posted to, unless
	// URLFunc is set. Required when URLFunc is nil.
	URL string
	// URLFunc, when set, chooses the endpoint of each message (for example
	// by tenant or by Metadata.Routing.Destination). An empty or invalid
	// URL fails that message permanently. Pair it with AllowedHosts when
	// the URL comes from data.
	URLFunc func(env *reliar.SerializedEnvelope) string
	// Secrets are the Standard Webhooks signing secrets: base64 keys,
	// optionally prefixed with "whsec_" (see [NewSecret]). Every request
	// carries one signature per secret; list the new secret next to the
	// old one while receivers rotate. Required: at least one.
	Secrets []string
	// Timeout bounds each request, within the caller's context. Defaults
	// to 10s.
	Timeout time.Duration
	// Client sends the requests. Defaults to a client of its own. A given
	// client is copied and the copy never follows redirects.
	Client *http.Client
	// AllowedHosts, when not empty, lists the only host names requests may
	// go to; a message for any other host fails permanently before
	// anything is sent. An entry "*.example.com" allows every subdomain of
	// example.com. Names are compared without the port, case-insensitively;
	// they are not resolved, so the list guards against misrouted messages,
	// not against a DNS name that points somewhere unexpected.
	AllowedHosts []string
	// Header, when set, adds headers of its own to each request (for
	// example an Authorization header). It runs before the CloudEvents and
	// signature headers are set, which therefore win.
	Header func(env *reliar.SerializedEnvelope, h http.Header)
	// MaxResponseBytes bounds how much of an answer's body is read before
	// the connection is released. Defaults to 64 KiB.
	MaxResponseBytes int64
}

const (
	defaultTimeout          = 10 * time.Second
	defaultMaxResponseBytes = 64 << 10
)

// withDefaults returns a copy of c with every zero field set to its default.
func (c Config) withDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = defaultTimeout
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = defaultMaxResponseBytes
	}
	return c
}

// validate checks c without changing it and returns the signing keys.
func (c Config) validate() ([][]byte, error) {
	var errs []error
	if c.URL == "" && c.URLFunc == nil {
		errs = append(errs, errors.New("URL or URLFunc is required"))
	}
	if c.URL != "" {
		if _, err := parseEndpoint(c.URL); err != nil {
			errs = append(errs, err)
		} else if err := checkHost(c.AllowedHosts, c.URL); err != nil {
			errs = append(errs, err)
		}
	}
	if len(c.Secrets) == 0 {
		errs = append(errs, errors.New("at least one secret is required"))
	}
	keys := make([][]byte, 0, len(c.Secrets))
	for i, s := range c.Secrets {
		k, err := ParseSecret(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("secret %d: %w", i, err))
		}
		keys = append(keys, k)
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("negative Timeout %v", c.Timeout))
	}
	if c.MaxResponseBytes < 0 {
		errs = append(errs, fmt.Errorf("negative MaxResponseBytes %d", c.MaxResponseBytes))
	}
	for _, h := range c.AllowedHosts {
		if strings.TrimPrefix(h, "*.") == "" || strings.ContainsAny(h, "/:") {
			errs = append(errs, fmt.Errorf("allowed host %q is not a host name", h))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return keys, nil
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
