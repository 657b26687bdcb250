package natspub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/publisher/natspub"
)

// A JetStream consumer that charges each order once. JetStream drops a
// republished message id only within the stream's duplicate window; the
// dispatcher may retry later than that, and a consumer that stops between
// its commit and its ack gets the message again. So the consumer records
// each message id with inbox.Process in the transaction that charges the
// order. Here the window is JetStream's minimum, 100ms, and order 2 is
// published again after it.
func Example_consumer() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := nats.Connect("nats://127.0.0.1:4222")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Println(err)
		return
	}
	name := uniqueName("orders")
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name:       name,
		Subjects:   []string{name + ".>"},
		Duplicates: 100 * time.Millisecond,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer js.DeleteStream(context.Background(), name)

	// The producing side: what the dispatcher does with each outbox row.
	pub, err := natspub.New(js, natspub.WithSubjectPrefix(name))
	if err != nil {
		fmt.Println(err)
		return
	}
	var orders []*reliar.SerializedEnvelope
	for n := 1; n <= 3; n++ {
		orders = append(orders, &reliar.SerializedEnvelope{
			ID:          reliar.NewMessageID(),
			MessageType: "order.placed",
			ContentType: "application/json",
			Payload:     fmt.Appendf(nil, `{"order":%d}`, n),
		})
	}
	for _, env := range orders {
		if err := pub.Publish(ctx, env); err != nil {
			fmt.Println(err)
			return
		}
	}
	// The dispatcher publishes order 2 again, after the duplicate window:
	// its acknowledgement was lost, say. JetStream stores it a second time.
	time.Sleep(300 * time.Millisecond)
	if err := pub.Publish(ctx, orders[1]); err != nil {
		fmt.Println(err)
		return
	}

	// The consuming side. In production the inbox is the store's (pgstore,
	// sqlitestore, mysqlstore), in the database that holds the charges.
	processed := inbox.NewMemory()
	cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:   "billing",
		AckPolicy: jetstream.AckExplicitPolicy,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for handled := 0; handled < 4 && ctx.Err() == nil; {
		batch, err := cons.Fetch(4-handled, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			fmt.Println(err)
			return
		}
		for msg := range batch.Messages() {
			if err := chargeOnce(ctx, processed, msg); err != nil {
				fmt.Println(err)
			}
			handled++
		}
		if err := batch.Error(); err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output:
	// charged order 1
	// charged order 2
	// charged order 3
	// duplicate skipped: order 2
}

// chargeOnce handles one delivery: it charges the order in a transaction
// that also records the message id, and acknowledges the message once the
// transaction committed. A message it cannot read is terminated: no
// redelivery would make it readable.
func chargeOnce(ctx context.Context, processed *inbox.Memory, msg jetstream.Msg) error {
	id, err := natspub.MessageID(msg.Headers())
	if err != nil {
		return errors.Join(err, msg.Term())
	}
	var order struct {
		Order int `json:"order"`
	}
	if err := json.Unmarshal(msg.Data(), &order); err != nil {
		return errors.Join(err, msg.Term())
	}
	tx := processed.Begin()
	err = inbox.Process(ctx, processed, tx, "billing", id, func(ctx context.Context) error {
		fmt.Println("charged order", order.Order) // the charge, written in tx
		return nil
	})
	switch {
	case errors.Is(err, inbox.ErrAlreadyProcessed):
		fmt.Println("duplicate skipped: order", order.Order)
	case err != nil:
		_ = tx.Rollback()
		return errors.Join(err, msg.Nak()) // processed again on redelivery
	}
	if err := tx.Commit(); err != nil {
		return errors.Join(err, msg.Nak())
	}
	return msg.Ack()
}
