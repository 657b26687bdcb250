package natspub_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/reliar/reliar/publisher/natspub"
)

func TestDedupWindow(t *testing.T) {
	nc, err := nats.Connect("nats://127.0.0.1:4222")
	if err != nil {
		t.Fatalf("NATS at 127.0.0.1:4222: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	name := "DEDUP_" + time.Now().Format("150405_000000000")
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}, Duplicates: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	defer js.DeleteStream(context.Background(), name)
	w, err := natspub.DedupWindowOf(ctx, js, name)
	if err != nil || w != 30*time.Second {
		t.Fatalf("DedupWindowOf = %v, %v; want 30s", w, err)
	}
	if _, err := natspub.DedupWindowOf(ctx, js, name+"_MISSING"); err == nil {
		t.Fatal("a missing stream has a window")
	}
	p, err := natspub.New(js, natspub.WithDedupWindow(w))
	if err != nil || p.DedupWindow() != w {
		t.Fatalf("declared window %v, %v", p.DedupWindow(), err)
	}
	p, _ = natspub.New(js)
	if p.DedupWindow() != natspub.DefaultDedupWindow {
		t.Fatalf("default window %v", p.DedupWindow())
	}
	if _, err := natspub.New(js, natspub.WithDedupWindow(-time.Second)); !errors.Is(err, natspub.ErrInvalidOption) {
		t.Fatalf("negative window: %v", err)
	}
}
