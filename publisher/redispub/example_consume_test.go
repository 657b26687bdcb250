package redispub_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/reliar/reliar/inbox"
	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/reliar/reliar/publisher/redispub"
)

// Redis Streams do not deduplicate: a publish retried after a lost reply
// adds the message again, under a new entry id. A consumer deduplicates by
// the message id instead (see package inbox).
func ExampleMessageID() {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	stream := "reliartest:example:" + rand.Text()
	defer client.Del(ctx, stream)

	p, err := redispub.New(client, redispub.WithStream(stream))
	if err != nil {
		fmt.Println(err)
		return
	}
	sent := publishertest.Envelope(1)
	for range 2 { // the dispatcher's retry
		if err := p.Publish(ctx, sent); err != nil {
			fmt.Println(err)
			return
		}
	}

	entries, err := client.XRange(ctx, stream, "-", "+").Result()
	if err != nil {
		fmt.Println(err)
		return
	}
	processed := inbox.NewMemory() // in production, the store's inbox
	for _, e := range entries {
		id, err := redispub.MessageID(e.Values)
		if err != nil {
			fmt.Println(err)
			continue
		}
		tx := processed.Begin()
		err = inbox.Process(ctx, processed, tx, "billing", id, func(ctx context.Context) error {
			fmt.Println("processed", id == sent.ID)
			return nil
		})
		if errors.Is(err, inbox.ErrAlreadyProcessed) {
			fmt.Println("duplicate skipped")
		} else if err != nil {
			_ = tx.Rollback()
			continue
		}
		_ = tx.Commit()
	}
	// Output:
	// processed true
	// duplicate skipped
}
