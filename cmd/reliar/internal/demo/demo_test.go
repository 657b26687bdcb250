package demo

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reliar/reliar/cmd/reliar/internal/progress"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
	"go.uber.org/goleak"
)

// Real services the tests use; they fail when a service is missing.
const (
	postgresURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	mysqlURL    = "mysql://root@127.0.0.1:3306/test"
	natsURL     = "nats://127.0.0.1:4222"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// summaryLine is the shape of the demo's last line.
var summaryLine = regexp.MustCompile(`^demo: committed=(\d+) rolled_back=(\d+) published=(\d+) delivered=(\d+) lost=(\d+) duplicates=(\d+) throughput=\d+/s p50=[\d.]+ms p99=[\d.]+ms$`)

// countingBar records how far the bar went and whether it finished.
type countingBar struct {
	last     atomic.Int64
	finished atomic.Bool
}

func (b *countingBar) Set(n int) { b.last.Store(int64(n)) }
func (b *countingBar) Finish()   { b.finished.Store(true) }

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		database string
		nats     string
	}{
		{"sqlite and embedded NATS", "", ""},
		{"postgres and NATS server", postgresURL, natsURL},
		{"mysql and embedded NATS", mysqlURL, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			bar := &countingBar{}
			var setup Setup
			res, err := Run(ctx, Config{
				Messages:    300,
				DatabaseURL: tt.database,
				NATSURL:     tt.nats,
				Logger:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
				Progress:    func(int) progress.Bar { return bar },
				Announce:    func(s Setup) { setup = s },
			})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK() || res.Committed != 300 || res.Delivered != 300 || res.Lost != 0 || res.Unexpected != 0 {
				t.Fatalf("result %+v", res)
			}
			if res.RolledBack != 33 {
				t.Fatalf("rolled back %d, want 33 (every 10th of 333 transactions)", res.RolledBack)
			}
			if res.Published < res.Committed {
				t.Fatalf("published %d < committed %d", res.Published, res.Committed)
			}
			if res.P50 <= 0 || res.P99 < res.P50 || res.Throughput <= 0 {
				t.Fatalf("measurements %+v", res)
			}
			if !summaryLine.MatchString(res.Summary()) {
				t.Fatalf("summary %q does not match %v", res.Summary(), summaryLine)
			}
			if bar.last.Load() != 300 || !bar.finished.Load() {
				t.Fatalf("progress bar at %d, finished %t", bar.last.Load(), bar.finished.Load())
			}
			if setup.Store == "" || setup.Broker == "" || setup.BatchSize != 512 {
				t.Fatalf("announced %+v", setup)
			}
			if tt.nats != "" && strings.Contains(setup.Broker, "embedded") {
				t.Fatalf("broker %q, want the server at %s", setup.Broker, tt.nats)
			}
		})
	}
}

func TestRunBadInput(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		cfg  Config
		want error
	}{
		{"negative messages", Config{Messages: -1}, ErrBadConfig},
		{"negative producers", Config{Producers: -1}, ErrBadConfig},
		{"negative timeout", Config{Timeout: -time.Second}, ErrBadConfig},
		{"bad database URL", Config{DatabaseURL: "oracle://x"}, storeurl.ErrBadURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Run(ctx, tt.cfg); !errors.Is(err, tt.want) {
				t.Fatalf("Run = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestRunRuntimeFailures(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"unreachable database", Config{Messages: 10, DatabaseURL: "postgres://u:pw@127.0.0.1:1/x?connect_timeout=2"}, "connect to"},
		{"unreachable NATS", Config{Messages: 10, NATSURL: "nats://127.0.0.1:1"}, "connect to NATS"},
		{"bad dispatcher settings", Config{Messages: 10, Settings: &outboxSettingsInvalid}, "invalid settings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Run(ctx, tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

func TestRunCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	res, err := Run(ctx, Config{
		Messages: 100000,
		Announce: func(Setup) { time.AfterFunc(200*time.Millisecond, cancel) },
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %+v, %v; want context.Canceled", res, err)
	}
}

// The bar follows the deliveries while the producers still run: follow sets
// it as the count grows, and stops before it returns.
func TestFollowMovesTheBarWhileProducing(t *testing.T) {
	t.Parallel()
	var delivered atomic.Int64
	bar := &countingBar{}
	stop := follow(&delivered, 10, bar)
	delivered.Store(4)
	for deadline := time.Now().Add(10 * time.Second); bar.last.Load() != 4; time.Sleep(pollEvery) {
		if time.Now().After(deadline) {
			t.Fatalf("the bar is at %d while 4 deliveries came in", bar.last.Load())
		}
	}
	delivered.Store(12)
	for deadline := time.Now().Add(10 * time.Second); bar.last.Load() != 10; time.Sleep(pollEvery) {
		if time.Now().After(deadline) {
			t.Fatalf("the bar is at %d after 12 of 10 deliveries, want the total 10", bar.last.Load())
		}
	}
	stop()
	before := bar.last.Load()
	delivered.Store(0)
	time.Sleep(3 * pollEvery)
	if bar.last.Load() != before {
		t.Fatal("the bar moved after stop returned")
	}
}
