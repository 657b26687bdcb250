package amqppub_test

import (
	"context"
	"log"
	"time"

	"github.com/reliar/reliar/publisher/amqppub"
)

// A publisher to the "orders" exchange, which must exist. The publisher
// owns its connection: close it after the dispatcher stopped.
func ExampleNew() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pub, err := amqppub.New(ctx, "amqp://guest:guest@localhost:5672/", amqppub.WithExchange("orders"))
	if err != nil {
		log.Fatal(err)
	}
	defer pub.Close()
	// Pass pub to outbox.New with a store.
}
