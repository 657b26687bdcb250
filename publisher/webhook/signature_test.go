package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar/publisher/webhook"
)

// independentVerify checks a Standard Webhooks signature from first
// principles, sharing no code with the package: base64-decode the secret
// after "whsec_", HMAC-SHA256 over "id.timestamp.payload", and look for
// that value among the space-separated "v1," entries.
func independentVerify(secret string, h http.Header, payload []byte) bool {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(h.Get("webhook-id") + "." + h.Get("webhook-timestamp") + "."))
	mac.Write(payload)
	want := mac.Sum(nil)
	for _, entry := range strings.Split(h.Get("webhook-signature"), " ") {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

// independentSign returns a "v1," signature computed without the package.
func independentSign(secret, id, ts string, payload []byte) string {
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(payload)))
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

func TestStandardWebhooksVector(t *testing.T) {
	// The test vector published with the Standard Webhooks specification.
	const (
		secret  = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		id      = "msg_p5jXN8AQM9LWM0D4loKWxJek"
		ts      = "1614265330"
		payload = `{"test": 2432232314}`
		want    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
	)
	if got := independentSign(secret, id, ts, []byte(payload)); got != want {
		t.Fatalf("independent signature %q, want %q", got, want)
	}
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", ts)
	h.Set("webhook-signature", want)
	// The vector's timestamp is years old: only a huge tolerance accepts it.
	if err := webhook.Verify(secret, h, []byte(payload), 100*365*24*time.Hour); err != nil {
		t.Fatalf("Verify the published vector: %v", err)
	}
	if err := webhook.Verify(secret, h, []byte(payload), 0); !errors.Is(err, webhook.ErrTimestamp) {
		t.Fatalf("Verify a years-old timestamp with the default tolerance: %v, want ErrTimestamp", err)
	}
}

func TestVerify(t *testing.T) {
	secret, other := webhook.NewSecret(), webhook.NewSecret()
	payload := []byte(`{"n":1}`)
	now := strconv.FormatInt(time.Now().Unix(), 10)
	headers := func(id, ts, sig string) http.Header {
		h := http.Header{}
		for k, v := range map[string]string{"webhook-id": id, "webhook-timestamp": ts, "webhook-signature": sig} {
			if v != "" {
				h.Set(k, v)
			}
		}
		return h
	}
	good := independentSign(secret, "m1", now, payload)
	old := strconv.FormatInt(time.Now().Add(-10*time.Minute).Unix(), 10)
	future := strconv.FormatInt(time.Now().Add(10*time.Minute).Unix(), 10)
	tests := []struct {
		name    string
		secret  string
		h       http.Header
		payload []byte
		want    error
	}{
		{"valid", secret, headers("m1", now, good), payload, nil},
		{"valid without prefix", strings.TrimPrefix(secret, "whsec_"), headers("m1", now, good), payload, nil},
		{"rotation: second entry matches", secret, headers("m1", now, independentSign(other, "m1", now, payload)+" "+good), payload, nil},
		{"unknown scheme ignored", secret, headers("m1", now, "v2,abc "+good), payload, nil},
		{"missing id", secret, headers("", now, good), payload, webhook.ErrMissingHeader},
		{"missing timestamp", secret, headers("m1", "", good), payload, webhook.ErrMissingHeader},
		{"missing signature", secret, headers("m1", now, ""), payload, webhook.ErrMissingHeader},
		{"timestamp not a number", secret, headers("m1", "soon", good), payload, webhook.ErrTimestamp},
		{"timestamp too old", secret, headers("m1", old, independentSign(secret, "m1", old, payload)), payload, webhook.ErrTimestamp},
		{"timestamp in the future", secret, headers("m1", future, independentSign(secret, "m1", future, payload)), payload, webhook.ErrTimestamp},
		{"tampered payload", secret, headers("m1", now, good), []byte(`{"n":2}`), webhook.ErrSignatureMismatch},
		{"other id", secret, headers("m2", now, good), payload, webhook.ErrSignatureMismatch},
		{"wrong secret", other, headers("m1", now, good), payload, webhook.ErrSignatureMismatch},
		{"secret not base64", "whsec_***", headers("m1", now, good), payload, webhook.ErrInvalidSecret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := webhook.Verify(tt.secret, tt.h, tt.payload, 0)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Verify: %v, want %v", err, tt.want)
			}
			if tt.want != nil && tt.want != webhook.ErrInvalidSecret && !errors.Is(err, webhook.ErrVerification) {
				t.Errorf("Verify error %v does not wrap ErrVerification", err)
			}
		})
	}
}

func TestNewSecret(t *testing.T) {
	s := webhook.NewSecret()
	if !strings.HasPrefix(s, "whsec_") {
		t.Fatalf("NewSecret() = %q, want the whsec_ prefix", s)
	}
	key, err := webhook.ParseSecret(s)
	if err != nil || len(key) != 32 {
		t.Fatalf("ParseSecret(NewSecret()) = %d bytes, %v; want 32 bytes", len(key), err)
	}
	if s == webhook.NewSecret() {
		t.Fatal("two calls of NewSecret returned the same secret")
	}
	if _, err := webhook.ParseSecret("whsec_"); !errors.Is(err, webhook.ErrInvalidSecret) {
		t.Fatalf("ParseSecret of an empty key: %v, want ErrInvalidSecret", err)
	}
}
