package webhook_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/reliar/reliar/publisher/webhook"
)

// server starts an httptest server closed at the end of t and counts its
// requests.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s, &hits
}

// newPublisher returns a publisher to url, signing with a fresh secret
// unless opts give secrets of their own (they come last and win).
func newPublisher(t *testing.T, url string, opts ...webhook.Option) *webhook.Publisher {
	t.Helper()
	p, err := webhook.New(url, append([]webhook.Option{webhook.WithSecrets(webhook.NewSecret())}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func TestPublishSignsAndMaps(t *testing.T) {
	oldSecret, newSecret := webhook.NewSecret(), webhook.NewSecret()
	type request struct {
		method string
		header http.Header
		body   []byte
	}
	got := make(chan request, 1)
	s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- request{r.Method, r.Header, body}
		w.WriteHeader(http.StatusNoContent)
	})
	p := newPublisher(t, s.URL,
		webhook.WithSecrets(oldSecret, newSecret),
		webhook.WithHeader(func(_ *reliar.SerializedEnvelope, h http.Header) {
			h.Set("Authorization", "Bearer token")
			h.Set("webhook-signature", "forged")
		}),
	)
	env := publishertest.Envelope(7)
	before := time.Now().Unix()
	if err := p.Publish(t.Context(), env); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	r := <-got
	if r.method != http.MethodPost || string(r.body) != string(env.Payload) {
		t.Errorf("request %s with body %q, want POST with the payload", r.method, r.body)
	}
	for i, secret := range []string{oldSecret, newSecret} {
		if !independentVerify(secret, r.header, r.body) {
			t.Errorf("secret %d: signature %q does not verify", i, r.header.Get("webhook-signature"))
		}
		if err := webhook.Verify(secret, r.header, r.body, time.Minute); err != nil {
			t.Errorf("secret %d: Verify: %v", i, err)
		}
	}
	if n := len(strings.Fields(r.header.Get("webhook-signature"))); n != 2 {
		t.Errorf("webhook-signature has %d entries, want one per secret (2)", n)
	}
	ts, err := strconv.ParseInt(r.header.Get("webhook-timestamp"), 10, 64)
	if err != nil || ts < before || ts > time.Now().Unix() {
		t.Errorf("webhook-timestamp %q is not the time of sending", r.header.Get("webhook-timestamp"))
	}
	for name, want := range map[string]string{
		"webhook-id":    env.ID.String(),
		"ce-id":         env.ID.String(),
		"ce-type":       env.MessageType,
		"content-type":  env.ContentType,
		"traceparent":   env.Metadata.Trace.Traceparent,
		"x-user":        env.Headers["x-user"],
		"authorization": "Bearer token",
		"user-agent":    "reliar-webhook/1",
	} {
		if v := r.header.Get(name); v != want {
			t.Errorf("header %s = %q, want %q", name, v, want)
		}
	}
}

func TestPublishClassifiesStatus(t *testing.T) {
	tests := []struct {
		status int
		want   error // nil, or the expected class
	}{
		{200, nil}, {201, nil}, {202, nil}, {204, nil},
		// The endpoint moved, refused the credentials or has no receiver:
		// every message shares it and an operator fixes it.
		{301, errTransient}, {302, errTransient}, {307, errTransient}, {308, errTransient},
		{401, errTransient}, {403, errTransient}, {404, errTransient}, {410, errTransient},
		{409, errTransient}, {408, errTransient}, {429, errTransient},
		// Only this message causes it: too large, malformed, refused.
		{400, errPermanent}, {413, errPermanent}, {415, errPermanent}, {422, errPermanent},
		{500, errTransient}, {502, errTransient}, {503, errTransient}, {504, errTransient},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, "reason\x00 of the\nanswer")
			})
			err := newPublisher(t, s.URL).Publish(t.Context(), publishertest.Envelope(1))
			checkClass(t, err, tt.want)
			if err == nil {
				return
			}
			var se *webhook.StatusError
			if !errors.As(err, &se) || se.StatusCode != tt.status {
				t.Fatalf("error %v does not carry status %d", err, tt.status)
			}
			if strings.Contains(err.Error(), "reason") {
				t.Errorf("the error %q carries the answer's body", err)
			}
			if isRedirect := tt.status/100 == 3; errors.Is(err, webhook.ErrRedirect) != isRedirect {
				t.Errorf("errors.Is(err, ErrRedirect) = %v for status %d", !isRedirect, tt.status)
			}
		})
	}
}

var (
	errPermanent = errors.New("permanent")
	errTransient = errors.New("transient")
)

// checkClass fails t unless err is nil when want is nil, or of want's class.
func checkClass(t *testing.T, err, want error) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Fatalf("Publish: %v, want success", err)
	case want == errPermanent && (err == nil || !reliar.IsPermanent(err)):
		t.Fatalf("Publish: %v, want a permanent error", err)
	case want == errTransient && (err == nil || reliar.IsPermanent(err)):
		t.Fatalf("Publish: %v, want a transient error", err)
	}
}

func TestPublishNeverFollowsRedirects(t *testing.T) {
	target, targetHits := server(t, func(w http.ResponseWriter, r *http.Request) {})
	for _, custom := range []bool{false, true} {
		s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
		})
		var opts []webhook.Option
		if custom {
			opts = append(opts, webhook.WithHTTPClient(&http.Client{})) // follows redirects on its own
		}
		err := newPublisher(t, s.URL, opts...).Publish(t.Context(), publishertest.Envelope(1))
		if !errors.Is(err, webhook.ErrRedirect) || reliar.IsPermanent(err) {
			t.Errorf("custom client %v: Publish: %v, want a transient ErrRedirect", custom, err)
		}
	}
	if n := targetHits.Load(); n != 0 {
		t.Fatalf("the redirect target received %d requests", n)
	}
}

func TestPublishBoundsTheAnswer(t *testing.T) {
	big := strings.Repeat("x", 4<<20)
	for _, status := range []int{200, 500} {
		s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(status)
			_, _ = io.WriteString(w, big)
		})
		p := newPublisher(t, s.URL, webhook.WithMaxResponseBytes(1024))
		err := p.Publish(t.Context(), publishertest.Envelope(1))
		var se *webhook.StatusError
		switch {
		case status == 200 && err != nil:
			t.Errorf("status 200 with a large body: %v", err)
		case status == 500 && (!errors.As(err, &se) || strings.Contains(err.Error(), "xxx")):
			t.Errorf("status 500 with a large body: %v, want a StatusError without the body", err)
		}
	}
}

func TestAllowedHosts(t *testing.T) {
	s, hits := server(t, func(w http.ResponseWriter, r *http.Request) {})
	// Every host name resolves to the test server, so the allow-list alone
	// decides which requests arrive.
	var dialer net.Dialer
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return dialer.DialContext(ctx, network, s.Listener.Addr().String())
		},
	}}
	tests := []struct {
		name    string
		allowed []string
		url     string
		want    error
	}{
		{"no list", nil, "http://anything.test/hook", nil},
		{"exact, any case, any port", []string{"API.example.com"}, "http://api.EXAMPLE.com:8080/hook", nil},
		{"wildcard matches a subdomain", []string{"other.test", "*.example.com"}, "https://a.b.example.com/hook", nil},
		{"wildcard is not the bare domain", []string{"*.example.com"}, "http://example.com/hook", webhook.ErrHostNotAllowed},
		{"suffix is not a subdomain", []string{"*.example.com"}, "http://evilexample.com/hook", webhook.ErrHostNotAllowed},
		{"other host", []string{"example.com"}, "http://example.org/hook", webhook.ErrHostNotAllowed},
		{"empty URL", nil, "", webhook.ErrInvalidURL},
		{"relative URL", nil, "/hook", webhook.ErrInvalidURL},
		{"other scheme", nil, "ftp://example.com/hook", webhook.ErrInvalidURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := hits.Load()
			opts := []webhook.Option{
				webhook.WithURLFunc(func(*reliar.SerializedEnvelope) string { return tt.url }),
				webhook.WithHTTPClient(client),
			}
			if tt.allowed != nil {
				opts = append(opts, webhook.WithAllowedHosts(tt.allowed...))
			}
			p := newPublisher(t, "", opts...)
			err := p.Publish(t.Context(), publishertest.Envelope(1))
			if tt.want == nil {
				if strings.HasPrefix(tt.url, "https") {
					// The test server speaks plain HTTP: the TLS handshake
					// fails, after the allow-list let the request through.
					if errors.Is(err, webhook.ErrHostNotAllowed) || reliar.IsPermanent(err) {
						t.Fatalf("Publish to an allowed host: %v", err)
					}
					return
				}
				if err != nil || hits.Load() != before+1 {
					t.Fatalf("Publish to an allowed host: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) || !reliar.IsPermanent(err) {
				t.Fatalf("Publish: %v, want a permanent %v", err, tt.want)
			}
			if hits.Load() != before {
				t.Errorf("a refused message reached the server")
			}
		})
	}
}

func TestNewValidates(t *testing.T) {
	secret := webhook.NewSecret()
	sign := webhook.WithSecrets(secret)
	urlFunc := webhook.WithURLFunc(func(*reliar.SerializedEnvelope) string { return "http://a.test" })
	tests := []struct {
		name string
		url  string
		opts []webhook.Option
	}{
		{"no URL", "", []webhook.Option{sign}},
		{"URL and URL func", "http://a.test", []webhook.Option{sign, urlFunc}},
		{"bad URL", "ftp://x", []webhook.Option{sign}},
		{"URL not parsable", "http://[::1", []webhook.Option{sign}},
		{"URL host not allowed", "http://a.test", []webhook.Option{sign, webhook.WithAllowedHosts("b.test")}},
		{"allowed host with a port", "http://a.test", []webhook.Option{sign, webhook.WithAllowedHosts("a.test:80")}},
		{"empty wildcard", "http://a.test", []webhook.Option{sign, webhook.WithAllowedHosts("*.")}},
		{"no allowed host", "http://a.test", []webhook.Option{sign, webhook.WithAllowedHosts()}},
		{"no secret", "http://a.test", nil},
		{"empty secrets", "http://a.test", []webhook.Option{webhook.WithSecrets()}},
		{"bad secret", "http://a.test", []webhook.Option{webhook.WithSecrets("whsec_!!")}},
		{"zero timeout", "http://a.test", []webhook.Option{sign, webhook.WithTimeout(0)}},
		{"negative timeout", "http://a.test", []webhook.Option{sign, webhook.WithTimeout(-1)}},
		{"nil client", "http://a.test", []webhook.Option{sign, webhook.WithHTTPClient(nil)}},
		{"nil header func", "http://a.test", []webhook.Option{sign, webhook.WithHeader(nil)}},
		{"nil URL func", "", []webhook.Option{sign, webhook.WithURLFunc(nil)}},
		{"nil option", "http://a.test", []webhook.Option{sign, nil}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := webhook.New(tt.url, tt.opts...); !errors.Is(err, webhook.ErrInvalidOption) {
				t.Fatalf("New: %v, want ErrInvalidOption", err)
			}
		})
	}
}

func TestPublishRefusesBadHeaders(t *testing.T) {
	s, hits := server(t, func(w http.ResponseWriter, r *http.Request) {})
	p := newPublisher(t, s.URL)
	for name, headers := range map[string]map[string]string{
		"control character in a value": {"x-a": "line\r\nInjected: yes"},
		"space in a name":              {"x a": "v"},
		"empty name":                   {"": "v"},
		"non-ASCII name":               {"x-é": "v"},
	} {
		e := publishertest.Envelope(1)
		e.Headers = headers
		err := p.Publish(t.Context(), e)
		if !errors.Is(err, webhook.ErrInvalidHeader) || !reliar.IsPermanent(err) {
			t.Errorf("%s: Publish: %v, want a permanent ErrInvalidHeader", name, err)
		}
		if strings.Contains(err.Error(), "Injected") {
			t.Errorf("%s: the error prints the header value", name)
		}
	}
	if hits.Load() != 0 {
		t.Fatal("a message with a bad header reached the server")
	}
}

func TestPublishHonoursTimeouts(t *testing.T) {
	s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client hanging up.
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	})
	tests := []struct {
		name    string
		timeout time.Duration
		cancel  time.Duration // cancel the caller's context after this, when > 0
		want    error
	}{
		{"publisher timeout", 100 * time.Millisecond, 0, context.DeadlineExceeded},
		{"caller cancels", time.Minute, 100 * time.Millisecond, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPublisher(t, s.URL, webhook.WithTimeout(tt.timeout))
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel > 0 {
				time.AfterFunc(tt.cancel, cancel)
			}
			start := time.Now()
			err := p.Publish(ctx, publishertest.Envelope(1))
			if !errors.Is(err, tt.want) || reliar.IsPermanent(err) {
				t.Fatalf("Publish: %v, want a transient error wrapping %v", err, tt.want)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Fatalf("Publish took %v", took)
			}
		})
	}
}

func TestPublishUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	err = newPublisher(t, "http://"+addr).Publish(t.Context(), publishertest.Envelope(1))
	checkClass(t, err, errTransient)
}

func TestPublishAfterClose(t *testing.T) {
	s, hits := server(t, func(w http.ResponseWriter, r *http.Request) {})
	p := newPublisher(t, s.URL)
	if err := p.Publish(t.Context(), publishertest.Envelope(1)); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	_ = p.Close()
	err := p.Publish(t.Context(), publishertest.Envelope(2))
	if !errors.Is(err, webhook.ErrClosed) || reliar.IsPermanent(err) {
		t.Fatalf("Publish after Close: %v, want a transient ErrClosed", err)
	}
	if hits.Load() != 1 {
		t.Fatalf("server saw %d requests, want 1", hits.Load())
	}
}

func TestStatusErrorText(t *testing.T) {
	tests := []struct {
		err  *webhook.StatusError
		want string
		kind reliar.FailureKind
	}{
		{&webhook.StatusError{StatusCode: 503}, "webhook: receiver answered 503 Service Unavailable", reliar.FailureTransient},
		{&webhook.StatusError{StatusCode: 302}, "webhook: receiver answered 302 Found (redirects are not followed)", reliar.FailureTransient},
		{&webhook.StatusError{StatusCode: 413}, "webhook: receiver answered 413 Request Entity Too Large", reliar.FailurePermanent},
		{&webhook.StatusError{StatusCode: 199}, "webhook: receiver answered 199 ", reliar.FailureTransient},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if got := tt.err.FailureKind(); got != tt.kind {
			t.Errorf("status %d: FailureKind() = %v, want %v", tt.err.StatusCode, got, tt.kind)
		}
	}
}
