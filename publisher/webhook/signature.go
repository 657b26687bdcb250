package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks header names.
const (
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

const (
	secretPrefix    = "whsec_"
	signatureScheme = "v1,"
	// DefaultTolerance is how far a webhook-timestamp may be from the
	// receiver's clock when Verify is given no tolerance.
	DefaultTolerance = 5 * time.Minute
)

var (
	// ErrVerification is wrapped by every error of [Verify].
	ErrVerification = errors.New("webhook: verification failed")
	// ErrMissingHeader: a Standard Webhooks header is absent or empty.
	ErrMissingHeader = fmt.Errorf("%w: missing header", ErrVerification)
	// ErrTimestamp: webhook-timestamp does not parse or is outside the
	// tolerance (a replayed or badly delayed request).
	ErrTimestamp = fmt.Errorf("%w: timestamp outside tolerance", ErrVerification)
	// ErrSignatureMismatch: no v1 signature matches the secret.
	ErrSignatureMismatch = fmt.Errorf("%w: no matching signature", ErrVerification)
	// ErrInvalidSecret: a secret is not base64 (after an optional "whsec_").
	ErrInvalidSecret = errors.New("webhook: invalid secret")
)

// ParseSecret decodes a Standard Webhooks secret: standard base64, with or
// without the "whsec_" prefix. It returns the HMAC key.
func ParseSecret(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidSecret, err)
	}
	if len(key) == 0 {
		return nil, fmt.Errorf("%w: empty key", ErrInvalidSecret)
	}
	return key, nil
}

// NewSecret returns a fresh random 32-byte secret in the "whsec_" form.
func NewSecret() string {
	key := make([]byte, 32)
	rand.Read(key) // never fails: crypto/rand crashes the program instead
	return secretPrefix + base64.StdEncoding.EncodeToString(key)
}

// signature returns "v1,<base64 HMAC-SHA256 of id.timestamp.payload>".
func signature(key []byte, id, timestamp string, payload []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(payload)
	return signatureScheme + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// signatures returns the webhook-signature value: one entry per key.
func signatures(keys [][]byte, id, timestamp string, payload []byte) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = signature(k, id, timestamp, payload)
	}
	return strings.Join(parts, " ")
}

// Verify checks a received request the Standard Webhooks way: the
// webhook-id, webhook-timestamp and webhook-signature headers must be
// present, the timestamp within tolerance of the local clock (zero means
// [DefaultTolerance]), and one of the v1 signatures must match secret
// (given as to [Config.Secrets]) over the raw payload. Errors wrap
// [ErrVerification], or [ErrInvalidSecret] for a bad secret.
func Verify(secret string, headers http.Header, payload []byte, tolerance time.Duration) error {
	key, err := ParseSecret(secret)
	if err != nil {
		return err
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	id, ts, sigs := headers.Get(HeaderWebhookID), headers.Get(HeaderWebhookTimestamp), headers.Get(HeaderWebhookSignature)
	for name, v := range map[string]string{HeaderWebhookID: id, HeaderWebhookTimestamp: ts, HeaderWebhookSignature: sigs} {
		if v == "" {
			return fmt.Errorf("%w: %s", ErrMissingHeader, name)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q is not unix seconds", ErrTimestamp, ts)
	}
	if skew := time.Since(time.Unix(sec, 0)).Abs(); skew > tolerance {
		return fmt.Errorf("%w: %v away from now, tolerance %v", ErrTimestamp, skew.Truncate(time.Second), tolerance)
	}
	want := []byte(signature(key, id, ts, payload))
	for s := range strings.FieldsSeq(sigs) {
		if hmac.Equal([]byte(s), want) {
			return nil
		}
	}
	return ErrSignatureMismatch
}
