package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/store/pgstore"
)

func TestFlags(t *testing.T) {
	base := []string{"--database-url", "postgres://x", "--broker", "nats://y"}
	tests := []struct {
		name    string
		args    []string
		wantErr bool
		check   func(t *testing.T, s outbox.Settings)
	}{
		{name: "defaults", args: base, check: func(t *testing.T, s outbox.Settings) {
			if s.Ordering != outbox.Unordered || s.Lease != outbox.DefaultSettings().Lease {
				t.Errorf("settings = %+v", s)
			}
		}},
		{name: "per-key and durations", args: append(base, "--ordering", "per-key", "--lease", "3s", "--max-attempts", "4"), check: func(t *testing.T, s outbox.Settings) {
			if s.Ordering != outbox.PerKey || s.Lease != 3*time.Second || s.Retry.(outbox.ExponentialBackoff).MaxAttempts != 4 {
				t.Errorf("settings = %+v", s)
			}
		}},
		{name: "missing database", args: []string{"--broker", "nats://y"}, wantErr: true},
		{name: "bad ordering", args: append(base, "--ordering", "sorted"), wantErr: true},
		{name: "unknown flag", args: append(base, "--nope"), wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseFlags(tt.args, io.Discard)
			var s outbox.Settings
			if err == nil {
				s, err = c.settings()
			}
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tt.wantErr)
			}
			if err == nil {
				tt.check(t, s)
			}
		})
	}
}

func TestRunRefusesBadInputAsUsage(t *testing.T) {
	err := run(t.Context(), []string{"--broker", "nats://y"}, io.Discard)
	var usage usageError
	if !errors.As(err, &usage) {
		t.Fatalf("run = %v, want a usage error", err)
	}
}

func TestUntilReadyRetriesThenSucceeds(t *testing.T) {
	calls := 0
	v, err := untilReady(t.Context(), slog.New(slog.DiscardHandler), "thing", func(context.Context) (int, error) {
		calls++
		if calls < 3 {
			return 0, errors.New("down")
		}
		return 7, nil
	})
	if err != nil || v != 7 || calls != 3 {
		t.Fatalf("untilReady = %d, %v after %d calls; want 7 after 3", v, err, calls)
	}
}

func TestUntilReadyStopsOnBadInputAndCancel(t *testing.T) {
	_, err := untilReady(t.Context(), slog.New(slog.DiscardHandler), "store", func(context.Context) (int, error) {
		return 0, pgstore.ErrInvalidSchema
	})
	var usage usageError
	if !errors.As(err, &usage) {
		t.Fatalf("bad schema: %v, want a usage error", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = untilReady(ctx, slog.New(slog.DiscardHandler), "broker", func(context.Context) (int, error) {
		return 0, errors.New("down")
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v, want context.Canceled", err)
	}
}
