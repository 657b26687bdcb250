package sink

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/reliar/reliar/bench/internal/payload"
)

func TestDeliver(t *testing.T) {
	s := New(3)
	clock := int64(100)
	s.now = func() int64 { clock += 10; return clock }
	steps := []struct {
		name    string
		seq     int
		sent    int64
		wantErr error
		dups    int64
		got     int64
	}{
		{"first", 1, 50, nil, 0, 1},
		{"duplicate", 1, 60, nil, 1, 1},
		{"negative", -1, 0, ErrOutOfRange, 1, 1},
		{"past the end", 3, 0, ErrOutOfRange, 1, 1},
		{"second", 0, 70, nil, 1, 2},
	}
	for _, st := range steps {
		if err := s.Deliver(st.seq, st.sent); !errors.Is(err, st.wantErr) {
			t.Fatalf("%s: Deliver error = %v, want %v", st.name, err, st.wantErr)
		}
		if s.Duplicates() != st.dups || s.Received() != st.got {
			t.Fatalf("%s: duplicates %d received %d, want %d and %d", st.name, s.Duplicates(), s.Received(), st.dups, st.got)
		}
	}
	select {
	case <-s.Done():
		t.Fatal("Done closed before every message arrived")
	default:
	}
	if err := s.Deliver(2, 80); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.Done():
	default:
		t.Fatal("Done not closed after every message arrived")
	}
	arrived, sent, ok := s.Arrival(1)
	if !ok || arrived != 110 || sent != 50 {
		t.Fatalf("Arrival(1) = %d, %d, %v; want the first arrival 110 and its send time 50", arrived, sent, ok)
	}
	if _, _, ok := s.Arrival(7); ok {
		t.Fatal("Arrival(7) of a 3-message sink reported ok")
	}
	if !s.Has(2) || s.Has(3) || s.Size() != 3 {
		t.Fatalf("Has(2) %v, Has(3) %v, Size %d", s.Has(2), s.Has(3), s.Size())
	}
}

func TestDeliverPayloadAndDoc(t *testing.T) {
	s := New(2)
	if err := s.DeliverPayload(payload.New(0, 5).Encode()); err != nil {
		t.Fatal(err)
	}
	if err := s.DeliverDoc(payload.New(1, 6)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeliverPayload([]byte("nope")); !errors.Is(err, payload.ErrMalformed) {
		t.Fatalf("DeliverPayload(garbage) error = %v, want payload.ErrMalformed", err)
	}
	if err := s.DeliverDoc(payload.Doc{Seq: "x"}); !errors.Is(err, payload.ErrMalformed) {
		t.Fatalf("DeliverDoc(garbage) error = %v, want payload.ErrMalformed", err)
	}
	if _, sent, _ := s.Arrival(1); sent != 6 {
		t.Fatalf("send time of message 1 = %d, want 6", sent)
	}
	select {
	case <-s.Done():
	case <-time.After(time.Second):
		t.Fatal("Done not closed")
	}
}

func TestDeliverConcurrently(t *testing.T) {
	const n, senders = 1000, 4
	s := New(n)
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for i := range n {
				if err := s.Deliver(i, 1); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if s.Received() != n || s.Duplicates() != n*(senders-1) {
		t.Fatalf("received %d, duplicates %d; want %d and %d", s.Received(), s.Duplicates(), n, n*(senders-1))
	}
	<-s.Done()
}
