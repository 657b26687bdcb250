package inbox_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
)

// A consumer processes each message once, however often it is delivered.
func ExampleProcess() {
	m := inbox.NewMemory()
	id := reliar.NewMessageID()
	handle := func(delivery int) {
		tx := m.Begin()
		err := inbox.Process(context.Background(), m, tx, "billing", id, func(ctx context.Context) error {
			fmt.Println("charging the order, delivery", delivery)
			return nil
		})
		switch {
		case errors.Is(err, inbox.ErrAlreadyProcessed):
			fmt.Println("duplicate delivery", delivery, "skipped")
			_ = tx.Commit()
		case err != nil:
			_ = tx.Rollback() // the redelivery will process it
		default:
			_ = tx.Commit()
		}
	}
	handle(1)
	handle(2)
	// Output:
	// charging the order, delivery 1
	// duplicate delivery 2 skipped
}

func ExampleMessageIDFromHeaders() {
	id, err := inbox.MessageIDFromHeaders(map[string]string{"Nats-Msg-Id": "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"})
	fmt.Println(id, err)
	// Output: 0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b <nil>
}
