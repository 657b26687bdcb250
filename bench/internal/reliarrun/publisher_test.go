package reliarrun

import (
	"context"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/bench/internal/payload"
	"github.com/reliar/reliar/bench/internal/sink"
)

func TestBatchPublisher(t *testing.T) {
	s := sink.New(2)
	p := BatchPublisher{Publisher{Sink: s}}
	envs := []*reliar.SerializedEnvelope{
		{Payload: payload.New(0, 1).Encode()},
		{Payload: []byte("not a benchmark document")},
		{Payload: payload.New(1, 1).Encode()},
	}
	errs := p.PublishBatch(context.Background(), envs)
	if len(errs) != 3 || errs[0] != nil || errs[2] != nil {
		t.Fatalf("PublishBatch = %v, want nil results for the documents", errs)
	}
	if !reliar.IsPermanent(errs[1]) {
		t.Fatalf("an unreadable payload failed with %v, want a permanent failure", errs[1])
	}
	if s.Received() != 2 {
		t.Fatalf("the sink received %d messages, want 2", s.Received())
	}
}
