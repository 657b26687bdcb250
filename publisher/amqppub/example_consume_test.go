package amqppub_test

import (
	"context"
	"fmt"
	"time"

	amqp091 "github.com/rabbitmq/amqp091-go"
	"github.com/reliar/reliar/publisher/amqppub"
	"github.com/reliar/reliar/publisher/publishertest"
)

// A consumer rebuilds the envelope of each delivery with Envelope, or
// reads only its id with MessageID, the key to deduplicate by with
// package inbox: a message can be delivered more than once.
func ExampleEnvelope() {
	const url = "amqp://guest:guest@127.0.0.1:5672/"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := amqp091.Dial(url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		fmt.Println(err)
		return
	}
	exchange := uniqueName("orders")
	if err := ch.ExchangeDeclare(exchange, amqp091.ExchangeTopic, false, false, false, false, nil); err != nil {
		fmt.Println(err)
		return
	}
	defer ch.ExchangeDelete(exchange, false, false)
	q, err := ch.QueueDeclare("", false, true, true, false, nil) // deleted with the connection
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := ch.QueueBind(q.Name, "#", exchange, false, nil); err != nil {
		fmt.Println(err)
		return
	}
	deliveries, err := ch.Consume(q.Name, "", false, true, false, false, nil)
	if err != nil {
		fmt.Println(err)
		return
	}

	pub, err := amqppub.New(ctx, url, amqppub.WithExchange(exchange))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pub.Close()
	sent := publishertest.Envelope(1)
	if err := pub.Publish(ctx, sent); err != nil {
		fmt.Println(err)
		return
	}

	select {
	case d := <-deliveries:
		env, err := amqppub.Envelope(d)
		if err != nil {
			fmt.Println(err)
			_ = d.Reject(false) // unreadable: redelivering will not help
			return
		}
		fmt.Println(env.ID == sent.ID, env.MessageType, string(env.Payload))
		_ = d.Ack(false)
	case <-ctx.Done():
		fmt.Println(ctx.Err())
	}
	// Output: true publishertest.happened {"seq":1,"text":"héllo wörld"}
}
