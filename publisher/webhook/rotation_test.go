package webhook_test

import (
	"io"
	"net/http"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/reliar/reliar/publisher/webhook"
)

// TestReferenceLibraryVerifiesRotation configures the publisher with two
// secrets, as during a rotation, and has the Standard Webhooks Go reference
// library verify the same real deliveries (the first and a retry of the
// same message) once with the old secret and once with the new one, as a
// receiver on either side of the rotation would; a receiver holding an
// unrelated secret refuses them, and so does every receiver when the body
// was altered.
func TestReferenceLibraryVerifiesRotation(t *testing.T) {
	oldSecret, newSecret, otherSecret := webhook.NewSecret(), webhook.NewSecret(), webhook.NewSecret()
	type delivery struct {
		header http.Header
		body   []byte
	}
	got := make(chan delivery, 2)
	s, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- delivery{r.Header.Clone(), body}
		w.WriteHeader(http.StatusNoContent)
	})
	p := newPublisher(t, s.URL, webhook.WithSecrets(oldSecret, newSecret))

	reference := func(secret string) *standardwebhooks.Webhook {
		t.Helper()
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatalf("the Standard Webhooks library refuses the secret: %v", err)
		}
		return wh
	}
	oldRef, newRef, otherRef := reference(oldSecret), reference(newSecret), reference(otherSecret)

	env := publishertest.Envelope(3)
	var ids []string
	for attempt := range 2 {
		if err := p.Publish(t.Context(), env); err != nil {
			t.Fatalf("Publish (attempt %d): %v", attempt+1, err)
		}
		d := <-got
		ids = append(ids, d.header.Get("webhook-id"))
		if err := oldRef.Verify(d.body, d.header); err != nil {
			t.Errorf("attempt %d: the reference library refuses the delivery with the old secret: %v", attempt+1, err)
		}
		if err := newRef.Verify(d.body, d.header); err != nil {
			t.Errorf("attempt %d: the reference library refuses the delivery with the new secret: %v", attempt+1, err)
		}
		if err := otherRef.Verify(d.body, d.header); err == nil {
			t.Errorf("attempt %d: the reference library accepts the delivery with an unrelated secret", attempt+1)
		}
		tampered := append([]byte(nil), d.body...)
		tampered = append(tampered, ' ')
		for name, ref := range map[string]*standardwebhooks.Webhook{"old": oldRef, "new": newRef} {
			if err := ref.Verify(tampered, d.header); err == nil {
				t.Errorf("attempt %d: the reference library accepts an altered body with the %s secret", attempt+1, name)
			}
		}
	}
	// A retry is the same message: receivers deduplicate by webhook-id.
	if ids[0] != env.ID.String() || ids[1] != ids[0] {
		t.Errorf("webhook-id of the delivery and its retry: %q, %q; want %s for both", ids[0], ids[1], env.ID)
	}
}
