package main

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/reliar/reliar/outbox"
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
