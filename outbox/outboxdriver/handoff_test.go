package outboxdriver

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reliar/reliar"
)

func bookRequest(reserved *atomic.Int64, room int64) HandoffRequest {
	return HandoffRequest{
		Worker: "w", Lease: time.Minute, MinLeft: 10 * time.Second, MaxRows: 8,
		Reserve: func(n int) bool {
			if reserved.Load()+int64(n) > room {
				return false
			}
			reserved.Add(int64(n))
			return true
		},
		Unreserve: func(n int) { reserved.Add(-int64(n)) },
	}
}

func TestHandoffBookEligibility(t *testing.T) {
	later := time.Now().Add(time.Hour)
	tests := []struct {
		name    string
		edit    func(*reliar.Outgoing)
		tenants bool
		want    bool
	}{
		{"plain", func(*reliar.Outgoing) {}, false, true},
		{"ordering key", func(o *reliar.Outgoing) { o.OrderingKey = "k" }, true, false},
		{"available later", func(o *reliar.Outgoing) { o.AvailableAt = later }, true, false},
		{"expires", func(o *reliar.Outgoing) { o.Metadata.Delivery.ExpiresAt = &later }, true, false},
		{"tenant, tenants refused", func(o *reliar.Outgoing) { o.Metadata.TenantID = "acme" }, false, false},
		{"tenant, tenants allowed", func(o *reliar.Outgoing) { o.Metadata.TenantID = "acme" }, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b HandoffBook
			var reserved atomic.Int64
			req := bookRequest(&reserved, 100)
			req.Tenants = tt.tenants
			if _, err := b.Subscribe(t.Context(), req); err != nil {
				t.Fatal(err)
			}
			m := reliar.NewMsg(rowTestMsg{})
			tt.edit(&m)
			got := b.Begin([]reliar.Outgoing{reliar.NewMsg(rowTestMsg{}), m}) != nil
			if got != tt.want {
				t.Fatalf("Begin = %v, want %v", got, tt.want)
			}
			if want := map[bool]int64{true: 2, false: 0}[tt.want]; reserved.Load() != want {
				t.Errorf("reserved %d, want %d", reserved.Load(), want)
			}
		})
	}
}

func TestHandoffBookRules(t *testing.T) {
	var b HandoffBook
	if b.Begin([]reliar.Outgoing{reliar.NewMsg(rowTestMsg{})}) != nil {
		t.Fatal("Begin without a subscription")
	}
	var reserved atomic.Int64
	ctx, cancel := contextWithCancel(t)
	ch, err := b.Subscribe(ctx, bookRequest(&reserved, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Subscribe(t.Context(), bookRequest(&reserved, 2)); !errors.Is(err, ErrHandoffTaken) {
		t.Fatalf("second Subscribe: %v, want ErrHandoffTaken", err)
	}
	one := []reliar.Outgoing{reliar.NewMsg(rowTestMsg{})}
	three := []reliar.Outgoing{reliar.NewMsg(rowTestMsg{}), reliar.NewMsg(rowTestMsg{}), reliar.NewMsg(rowTestMsg{})}
	if b.Begin(three) != nil {
		t.Fatal("Begin reserved three rows with room for two")
	}
	rec := func() []Record { return []Record{{Envelope: reliar.SerializedEnvelope{ID: reliar.NewMessageID()}}} }

	// Proven in time: handed over with the reservation, which the
	// dispatcher gives back once it holds the rows.
	sub := b.Begin(one)
	if reserved.Load() != 1 {
		t.Fatalf("reserved %d after Begin, want 1", reserved.Load())
	}
	b.Wait(sub, "p1", rec(), 1, time.Now())
	if !b.Take("p1") {
		t.Fatal("Take of a waiting enqueue reported false")
	}
	select {
	case got := <-ch:
		if len(got.Records) != 1 || got.Reserved != 1 {
			t.Fatalf("handed over %d rows with %d reserved, want 1 and 1", len(got.Records), got.Reserved)
		}
		if reserved.Load() != 1 {
			t.Fatalf("reserved %d while the rows travel, want 1", reserved.Load())
		}
		reserved.Add(-int64(got.Reserved))
	default:
		t.Fatal("nothing handed over")
	}

	// Proven too late: less than MinLeft of the lease left.
	sub = b.Begin(one)
	b.Wait(sub, "p2", rec(), 1, time.Now().Add(-55*time.Second))
	if !b.Take("p2") {
		t.Fatal("Take of a late enqueue reported false")
	}
	select {
	case <-ch:
		t.Fatal("a late proof handed rows over")
	default:
	}
	if reserved.Load() != 0 {
		t.Fatalf("reserved %d after a dropped hand-off, want 0", reserved.Load())
	}

	// Unknown proofs are plain wake-ups.
	if b.Take("") || b.Take("nobody") {
		t.Fatal("Take of an unknown proof reported true")
	}

	// Fewer records than reserved rows: the difference is given back at
	// once, the rest after HandoffReserveFor (a rolled-back transaction
	// never proves its commit); a proof that comes later still hands the
	// rows over.
	sub = b.Begin([]reliar.Outgoing{reliar.NewMsg(rowTestMsg{}), reliar.NewMsg(rowTestMsg{})})
	b.Wait(sub, "p3", rec(), 2, time.Now())
	if reserved.Load() != 1 {
		t.Fatalf("reserved %d, want 1", reserved.Load())
	}
	deadline := time.Now().Add(5 * time.Second)
	for reserved.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the reservation did not expire")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !b.Take("p3") {
		t.Fatal("Take after the reservation expired reported false")
	}
	select {
	case got := <-ch:
		if got.Reserved != 0 {
			t.Fatalf("a batch whose reservation expired carries %d reserved rows", got.Reserved)
		}
	default:
		t.Fatal("a proof after the reservation expired handed nothing over")
	}
	if reserved.Load() != 0 {
		t.Fatalf("reserved %d, want 0", reserved.Load())
	}

	// The end of the subscription closes the channel and forgets p4.
	sub = b.Begin(one)
	b.Wait(sub, "p4", rec(), 1, time.Now())
	cancel()
	deadline = time.Now().Add(5 * time.Second)
	for {
		if _, ok := <-ch; !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("channel not closed")
		}
	}
	if b.Active() {
		t.Fatal("the ended subscription is still active")
	}
	if b.Take("p4") {
		t.Fatal("Take after the end reported true")
	}
}

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}
