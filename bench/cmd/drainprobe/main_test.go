package main

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	tests := []struct {
		args    []string
		wantErr bool
		want    config
	}{
		{args: nil, want: config{messages: 100000}},
		{args: []string{"-n", "500", "-raw", "-max-in-flight", "1024"}, want: config{messages: 500, raw: true, maxInFlight: 1024}},
		{args: []string{"-n", "150"}, wantErr: true},
		{args: []string{"-n", "0"}, wantErr: true},
		{args: []string{"-bogus"}, wantErr: true},
	}
	for _, tt := range tests {
		c, err := parse(tt.args, io.Discard)
		if (err != nil) != tt.wantErr {
			t.Errorf("parse(%q) error = %v, want error %v", tt.args, err, tt.wantErr)
			continue
		}
		c.dsn = ""
		if err == nil && c != tt.want {
			t.Errorf("parse(%q) = %+v, want %+v", tt.args, c, tt.want)
		}
	}
}

func TestSummarise(t *testing.T) {
	calls := []call{{3 * time.Millisecond, 512}, {1 * time.Millisecond, 512}, {2 * time.Millisecond, 100}}
	st := summarise(calls, 12*time.Millisecond)
	if st.count != 3 || st.rows != 1124 || st.mean != 2*time.Millisecond || st.p50 != 2*time.Millisecond || st.max != 3*time.Millisecond || st.busy != 0.5 {
		t.Fatalf("summarise = %+v", st)
	}
	if got := summarise(nil, time.Second); got != (callStats{}) {
		t.Fatalf("summarise(nil) = %+v", got)
	}
}

func TestWaitDrained(t *testing.T) {
	calls := 0
	pending := func(context.Context) (int64, error) {
		calls++
		return int64(3 - calls), nil
	}
	polls := 0
	delivered := func() bool { polls++; return polls > 2 }
	if err := waitDrained(t.Context(), pending, delivered); err != nil {
		t.Fatal(err)
	}
	if polls != 3 || calls != 3 {
		t.Fatalf("delivered polled %d times, pending %d times; want 3 and 3", polls, calls)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := waitDrained(ctx, pending, func() bool { return false }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled wait = %v", err)
	}
	failing := func(context.Context) (int64, error) { return 0, errors.New("down") }
	if err := waitDrained(t.Context(), failing, func() bool { return true }); err == nil {
		t.Fatal("a failing count did not end the wait")
	}
}
