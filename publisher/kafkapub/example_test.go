package kafkapub_test

import (
	"context"
	"log"

	"github.com/reliar/reliar/publisher/kafkapub"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A publisher that sends orders to their own topic and everything else to
// a shared one. The client belongs to the host, which closes it after the
// dispatcher stopped.
func ExampleNew() {
	client, err := kafkapub.NewClient([]string{"localhost:9092"}, kgo.ClientID("orders-service"))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	pub, err := kafkapub.New(client,
		kafkapub.WithTopics(map[string]string{"orders.placed": "orders"}),
		kafkapub.WithDefaultTopic("events"),
	)
	if err != nil {
		log.Fatal(err)
	}
	_ = pub // pass pub to outbox.New with a store
	_ = context.Background()
}
