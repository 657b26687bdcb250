package kafkapub

import (
	"testing"

	"github.com/reliar/reliar"
)

// Classify exposes classify to the tests.
var Classify = classify

// BatchSize is the size the publisher computes for env's record batch on
// topic.
func BatchSize(t *testing.T, env *reliar.SerializedEnvelope, topic string) int {
	t.Helper()
	p := &Publisher{opts: options{defaultTopic: topic}}
	rec, err := p.record(env)
	if err != nil {
		t.Fatalf("record: %v", err)
	}
	return batchSize(rec)
}
