package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/publisher/webhook"
)

// A receiver that charges each order once. It checks the signature with
// Verify, rebuilds the envelope with Envelope, and records the message id
// with inbox.Process in the transaction that charges the order: a request
// whose answer was lost is sent again, with the same id.
func ExampleEnvelope() {
	secret := webhook.NewSecret()
	processed := inbox.NewMemory() // in production, the store's inbox
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = webhook.Verify(secret, r.Header, body, 0)
		}
		if err != nil {
			http.Error(w, "unverified", http.StatusUnauthorized)
			return
		}
		env, err := webhook.Envelope(r, body)
		var order struct {
			Order int `json:"order"`
		}
		if err == nil {
			err = json.Unmarshal(env.Payload, &order)
		}
		if err != nil {
			http.Error(w, "unreadable", http.StatusUnprocessableEntity) // permanent: not retried
			return
		}
		tx := processed.Begin()
		err = inbox.Process(r.Context(), processed, tx, "billing", env.ID, func(ctx context.Context) error {
			fmt.Println("charged order", order.Order) // the charge, written in tx
			return nil
		})
		switch {
		case errors.Is(err, inbox.ErrAlreadyProcessed):
			fmt.Println("duplicate skipped: order", order.Order)
		case err != nil:
			_ = tx.Rollback()
			http.Error(w, "try again", http.StatusServiceUnavailable) // transient: retried
			return
		}
		if err := tx.Commit(); err != nil {
			http.Error(w, "try again", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	p, err := webhook.New(receiver.URL, webhook.WithSecrets(secret))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	order := &reliar.SerializedEnvelope{
		ID:          reliar.NewMessageID(),
		MessageType: "order.placed",
		ContentType: "application/json",
		Payload:     []byte(`{"order":1}`),
	}
	for range 2 { // the second time: the dispatcher's retry
		if err := p.Publish(context.Background(), order); err != nil {
			fmt.Println(err)
		}
	}
	// Output:
	// charged order 1
	// duplicate skipped: order 1
}
