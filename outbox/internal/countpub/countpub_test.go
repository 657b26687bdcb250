package countpub

import (
	"context"
	"sync"
	"testing"

	"github.com/reliar/reliar"
)

func TestPublisherCountsPerID(t *testing.T) {
	var p Publisher
	if got := p.Counts(); len(got) != 0 {
		t.Fatalf("zero Publisher counts %v", got)
	}
	a, b := reliar.NewMessageID(), reliar.NewMessageID()
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			_ = p.Publish(context.Background(), &reliar.SerializedEnvelope{ID: a})
		})
	}
	wg.Wait()
	_ = p.Publish(context.Background(), &reliar.SerializedEnvelope{ID: b})
	got := p.Counts()
	if got[a] != 10 || got[b] != 1 || len(got) != 2 {
		t.Fatalf("Counts = %v, want a:10 b:1", got)
	}
	got[a] = 0
	if p.Counts()[a] != 10 {
		t.Fatal("Counts returned the publisher's own map")
	}
}
