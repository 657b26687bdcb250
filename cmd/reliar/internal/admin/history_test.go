package admin

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/reliar/reliar/outbox"
)

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

func TestHistoryRing(t *testing.T) {
	h := newHistory(3)
	if _, ok := h.latest(); ok {
		t.Fatal("an empty history has a latest sample")
	}
	for i := range 5 {
		h.add(sample{At: t0.Add(time.Duration(i) * time.Minute), Pending: int64(i)})
	}
	got := h.since(time.Time{})
	if len(got) != 3 || got[0].Pending != 2 || got[2].Pending != 4 {
		t.Fatalf("since = %+v; want the last three, oldest first", got)
	}
	if got := h.since(t0.Add(3 * time.Minute)); len(got) != 2 || got[0].Pending != 3 {
		t.Fatalf("since 3m = %+v", got)
	}
	if l, ok := h.latest(); !ok || l.Pending != 4 {
		t.Fatalf("latest = %+v", l)
	}
}

func TestDrainRates(t *testing.T) {
	samples := []sample{
		{At: t0, Pending: 100},
		{At: t0.Add(30 * time.Second), Pending: 70},
		{At: t0.Add(30 * time.Second), Pending: 60}, // same instant: skipped
		{At: t0.Add(90 * time.Second), Pending: 90},
	}
	rates := drainRates(samples)
	if len(rates) != 2 || rates[0].PerMinute != 60 || rates[1].PerMinute != -30 {
		t.Fatalf("rates %+v; want 60 then -30 rows/min", rates)
	}
	if _, ok := averageDrain(samples[:1], time.Minute); ok {
		t.Fatal("an average of one sample")
	}
	avg, ok := averageDrain([]sample{{At: t0, Pending: 500}, {At: t0.Add(4 * time.Minute), Pending: 300}, {At: t0.Add(6 * time.Minute), Pending: 200}}, 5*time.Minute)
	if !ok || math.Abs(avg-50) > 1e-9 {
		t.Fatalf("average over 5 min = %v, %t; want 50 (from the 4-minute sample)", avg, ok)
	}
}

// countingStore counts Stats calls and serves growing counts.
type countingStore struct {
	downStore
	calls atomic.Int64
}

func (s *countingStore) Stats(ctx context.Context) (outbox.Stats, error) {
	n := s.calls.Add(1)
	if n == 3 {
		return outbox.Stats{}, errors.New("blip")
	}
	return outbox.Stats{Pending: n, AsOf: t0.Add(time.Duration(n) * time.Second)}, nil
}

// TestServe runs the server on a listener: it samples on its own, serves,
// logs a sampling failure once, and returns after a shutdown with every
// goroutine gone (goleak checks the last).
func TestServe(t *testing.T) {
	store := &countingStore{}
	log := &syncBuffer{}
	srv, err := New(Config{Store: store, Token: testToken, SampleInterval: 10 * time.Millisecond, Logger: newJSONLogger(log)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()

	deadline := time.Now().Add(10 * time.Second)
	for store.calls.Load() < 6 {
		if time.Now().After(deadline) {
			t.Fatal("the server does not sample")
		}
		time.Sleep(5 * time.Millisecond)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/api/stats", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("status %d", res.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve = %v after a shutdown", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve does not return after its context is cancelled")
	}
	if got := srv.history.since(time.Time{}); len(got) < 5 {
		t.Fatalf("%d samples", len(got))
	}
	out := log.String()
	if strings.Count(out, "cannot read the outbox's gauges") != 1 || strings.Count(out, "reads the outbox's gauges again") != 1 {
		t.Fatalf("sampling failure logged wrongly: %s", out)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Fatal("the listener is still open")
	}
}

func TestServeListenerError(t *testing.T) {
	srv, err := New(Config{Store: downStore{}, Token: testToken, Logger: newJSONLogger(&syncBuffer{})})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	if err := srv.Serve(t.Context(), ln); err == nil || !strings.Contains(err.Error(), "admin server") {
		t.Fatalf("Serve on a closed listener = %v", err)
	}
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no store", Config{Token: testToken}, "no store"},
		{"no token", Config{Store: downStore{}}, "no access token"},
		{"short token", Config{Store: downStore{}, Token: "short"}, "fewer than 16"},
		{"negative interval", Config{Store: downStore{}, Token: testToken, SampleInterval: -time.Second}, "negative"},
		{"history shorter than a sample", Config{Store: downStore{}, Token: testToken, SampleInterval: time.Hour, History: time.Minute}, "shorter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v; want ErrBadConfig with %q", err, tt.want)
			}
		})
	}
	srv, err := New(Config{Store: downStore{}, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	if srv.cfg.SampleInterval != DefaultSampleInterval || srv.cfg.History != DefaultHistory || len(srv.history.buf) != 361 {
		t.Fatalf("defaults %+v, ring of %d", srv.cfg, len(srv.history.buf))
	}
}

// Every problem of one Config is reported at once, each matching
// ErrBadConfig.
func TestNewReportsEveryProblem(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"no store and a short token", Config{Token: "short"}, []string{"no store", "fewer than 16"}},
		{"two negative durations", Config{Store: downStore{}, Token: testToken, StoreTimeout: -time.Second, ActionTimeout: -time.Minute},
			[]string{"negative duration: StoreTimeout -1s", "negative duration: ActionTimeout -1m0s"}},
		{"no token and history shorter than a sample", Config{Store: downStore{}, SampleInterval: time.Hour, History: time.Minute},
			[]string{"no access token", "shorter"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			j, ok := err.(interface{ Unwrap() []error })
			if !ok || len(j.Unwrap()) != len(tt.want) {
				t.Fatalf("New = %v; want %d problems joined", err, len(tt.want))
			}
			for i, e := range j.Unwrap() {
				if !errors.Is(e, ErrBadConfig) || !strings.Contains(e.Error(), tt.want[i]) {
					t.Errorf("problem %d = %v; want ErrBadConfig with %q", i, e, tt.want[i])
				}
			}
		})
	}
}

func TestTrackerRefusesAfterClose(t *testing.T) {
	var tr tracker
	if !tr.enter() {
		t.Fatal("enter refused before close")
	}
	waited := make(chan struct{})
	go func() {
		tr.closeAndWait()
		close(waited)
	}()
	for tr.enter() {
		tr.leave()
		time.Sleep(time.Millisecond)
	}
	select {
	case <-waited:
		t.Fatal("closeAndWait returned with a request in progress")
	case <-time.After(20 * time.Millisecond):
	}
	tr.leave()
	<-waited
}
