package kafkapub_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/publisher/kafkapub"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// A Kafka consumer that charges each order once. Kafka does not recognise
// a record published again: when the dispatcher retries a publish whose
// outcome it could not learn, the record is stored twice. And a consumer
// that stops between its commit and its offset commit reads records again.
// So the consumer records each message id with inbox.Process in the
// transaction that charges the order. Here order 2 is published twice.
// The cluster is kfake, franz-go's in-process Kafka, with a one-partition
// topic so that the output comes in a fixed order.
func Example_consumer() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const topic = "orders"
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer cluster.Close()

	// The producing side: what the dispatcher does with each outbox row.
	producer, err := kafkapub.NewClient(cluster.ListenAddrs())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer producer.Close()
	pub, err := kafkapub.New(producer, kafkapub.WithDefaultTopic(topic))
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
	for _, env := range append(orders, orders[1]) { // order 2 retried
		if err := pub.Publish(ctx, env); err != nil {
			fmt.Println(err)
			return
		}
	}

	// The consuming side: a consumer group that commits its offsets after
	// processing. In production the inbox is the store's (pgstore,
	// sqlitestore, mysqlstore), in the database that holds the charges.
	consumer, err := kgo.NewClient(
		kgo.SeedBrokers(cluster.ListenAddrs()...),
		kgo.ConsumerGroup("billing"),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer consumer.Close()
	processed := inbox.NewMemory()
	for handled := 0; handled < 4 && ctx.Err() == nil; {
		fetches := consumer.PollFetches(ctx)
		if err := fetches.Err0(); err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range fetches.Records() {
			if err := chargeOnce(ctx, processed, r); err != nil {
				fmt.Println(err)
				return // its offset stays uncommitted: read again after a restart
			}
			handled++
		}
		if err := consumer.CommitUncommittedOffsets(ctx); err != nil {
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

// chargeOnce handles one record: it charges the order in a transaction
// that also records the message id. A nil result means the record is
// done, also when it could never be read; an error means it must be read
// again.
func chargeOnce(ctx context.Context, processed *inbox.Memory, r *kgo.Record) error {
	env, err := kafkapub.Envelope(r)
	if err != nil {
		fmt.Println("unreadable record skipped:", err) // or to a dead-letter topic
		return nil
	}
	var order struct {
		Order int `json:"order"`
	}
	if err := json.Unmarshal(env.Payload, &order); err != nil {
		fmt.Println("unreadable order skipped:", err)
		return nil
	}
	tx := processed.Begin()
	err = inbox.Process(ctx, processed, tx, "billing", env.ID, func(ctx context.Context) error {
		fmt.Println("charged order", order.Order) // the charge, written in tx
		return nil
	})
	switch {
	case errors.Is(err, inbox.ErrAlreadyProcessed):
		fmt.Println("duplicate skipped: order", order.Order)
	case err != nil:
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
