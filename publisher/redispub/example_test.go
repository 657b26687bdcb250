package redispub_test

import (
	"context"
	"crypto/rand"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/reliar/reliar/publisher/publishertest"
	"github.com/reliar/reliar/publisher/redispub"
)

// A publisher adds each message to a stream; a Go consumer reads the entry
// back and rebuilds the envelope with Decode.
func ExampleEnvelope() {
	ctx := context.Background()
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer client.Close()
	stream := "reliartest:example:" + rand.Text()
	defer client.Del(ctx, stream)

	p, err := redispub.New(client, redispub.WithStream(stream), redispub.WithMaxLen(100_000))
	if err != nil {
		fmt.Println(err)
		return
	}
	sent := publishertest.Envelope(1)
	if err := p.Publish(ctx, sent); err != nil {
		fmt.Println(err)
		return
	}

	entries, _ := client.XRange(ctx, stream, "-", "+").Result()
	got, err := redispub.Envelope(entries[0].Values)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.ID == sent.ID, got.MessageType, string(got.Payload))
	// Output: true publishertest.happened {"seq":1,"text":"héllo wörld"}
}
