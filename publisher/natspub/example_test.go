package natspub_test

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar/publisher/natspub"
	"github.com/reliar/reliar/publisher/publishertest"
)

// A publisher over a connection the application owns. The stream that
// stores the messages is the application's too; its Duplicates window is
// how long a retried message id is recognised and dropped.
func ExampleNew() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := nats.Connect("nats://127.0.0.1:4222")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	stream := uniqueName("example")
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: stream, Subjects: []string{stream + ".>"}}); err != nil {
		fmt.Println(err)
		return
	}
	defer js.DeleteStream(context.Background(), stream)

	p, err := natspub.New(js, natspub.WithSubjectPrefix(stream))
	if err != nil {
		fmt.Println(err)
		return
	}
	env := publishertest.Envelope(1)
	fmt.Println(p.Publish(ctx, env))
	fmt.Println(p.Publish(ctx, env)) // the same id again: dropped as a duplicate, still a success
	info, _ := js.Stream(ctx, stream)
	fmt.Println("stored:", info.CachedInfo().State.Msgs)
	// Output:
	// <nil>
	// <nil>
	// stored: 1
}
