package outbox_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

func TestEventLogRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	log := outbox.NewEventLog(&buf)
	prev := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	want := []outbox.Event{
		{Kind: outbox.EventPublished, Worker: "w-1", At: prev.Add(time.Second), IDs: []reliar.MessageID{reliar.NewMessageID()}, Count: 1},
		{Kind: outbox.EventReclaimed, Worker: "w-2", At: prev.Add(2 * time.Second), IDs: []reliar.MessageID{reliar.NewMessageID()}, Count: 1, PrevClaimedAt: &prev},
		{Kind: outbox.EventOutcomeWriteFailed, Worker: "w-1", At: prev, Count: 0, Err: "connection reset"},
	}
	for _, e := range want {
		log.Event(e)
	}
	if err := log.Flush(); err != nil {
		t.Fatal(err)
	}
	buf.WriteString(`{"Kind":"publ`) // a writer killed mid-line
	got, err := outbox.ReadEvents(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || got[1].Kind != outbox.EventReclaimed || !got[1].PrevClaimedAt.Equal(prev) || got[0].IDs[0] != want[0].IDs[0] || got[2].Err != "connection reset" {
		t.Fatalf("read back %+v", got)
	}
	if _, err := outbox.ReadEvents(strings.NewReader("{}\nnot json\n")); err == nil {
		t.Fatal("a corrupt line was accepted")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestEventLogKeepsTheFirstError(t *testing.T) {
	log := outbox.NewEventLog(failingWriter{})
	log.Event(outbox.Event{Kind: outbox.EventClaimed})
	if err := log.Flush(); err == nil || log.Err() == nil {
		t.Fatal("write error lost")
	}
}
