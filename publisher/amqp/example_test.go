package amqp_test

import (
	"context"
	"log"
	"time"

	"github.com/reliar/reliar/publisher/amqp"
)

// A publisher to the "orders" exchange, which must exist. The publisher
// owns its connection: close it after the dispatcher stopped.
func ExampleNew() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pub, err := amqp.New(ctx, "amqp://guest:guest@localhost:5672/", amqp.WithExchange("orders"))
	if err != nil {
		log.Fatal(err)
	}
	defer pub.Close()
	// Pass pub to outbox.New with a store.
}
