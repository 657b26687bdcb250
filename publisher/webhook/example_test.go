package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/reliar/reliar/publisher/webhook"
)

// A receiver checks each request with Verify before trusting it, and
// deduplicates by the webhook-id header.
func ExampleVerify() {
	secret := webhook.NewSecret()
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(secret, r.Header, body, 5*time.Minute); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		fmt.Println("verified", r.Header.Get("ce-type"))
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	p, err := webhook.New(receiver.URL, webhook.WithSecrets(secret))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	if err := p.Publish(context.Background(), publishertest.Envelope(1)); err != nil {
		fmt.Println(err)
	}
	// Output: verified publishertest.happened
}

// Listing two secrets signs every request with both, so receivers can move
// to the new secret at their own pace.
func ExampleNew() {
	p, err := webhook.New("https://hooks.example.com/orders",
		webhook.WithSecrets("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", webhook.NewSecret()),
		webhook.WithTimeout(5*time.Second),
		webhook.WithAllowedHosts("hooks.example.com"),
	)
	fmt.Println(p != nil, err)
	// Output: true <nil>
}
