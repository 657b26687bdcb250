package admin

import (
	"context"
	"log/slog"
	"math"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
)

// publishedCounter counts the rows of o's outbox published in (from, to],
// as reliar serve's backend does.
func publishedCounter(o *pgOutbox) func(ctx context.Context, from, to time.Time) (int64, error) {
	table := pgx.Identifier{o.schema, "outbox"}.Sanitize()
	return func(ctx context.Context, from, to time.Time) (int64, error) {
		var n int64
		err := o.pool.QueryRow(ctx, "SELECT count(*) FROM "+table+" WHERE published_at > $1 AND published_at <= $2", from, to).Scan(&n)
		return n, err
	}
}

// TestBrowserChartsThePublishRate: a producer enqueues at a steady rate
// and a dispatcher publishes every row; the page, sampling the store,
// shows a publish rate near the producer's (within a factor of two) and a
// net drain near zero, in Chromium.
func TestBrowserChartsThePublishRate(t *testing.T) {
	o := newPGOutbox(t)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()

	quiet := slog.New(slog.DiscardHandler)
	d, err := outbox.New(o.store, reliar.PublisherFunc(func(context.Context, *reliar.SerializedEnvelope) error { return nil }),
		outbox.Settings{PollInterval: 20 * time.Millisecond, IdlePollInterval: 50 * time.Millisecond}, outbox.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() {
		if err := d.Run(ctx); err != nil {
			t.Errorf("dispatcher: %v", err)
		}
	})

	// The producer: 10 rows every 100 ms, 6,000 a minute.
	var enqueued atomic.Int64
	start := time.Now()
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			msgs := make([]reliar.Outgoing, 10)
			for i := range msgs {
				msgs[i] = reliar.NewMsg(testMsg{Type: "orders.placed", Note: "steady"})
			}
			err := pgx.BeginFunc(ctx, o.pool, func(tx pgx.Tx) error {
				_, err := o.store.Enqueue(ctx, tx, msgs...)
				return err
			})
			if err != nil {
				if ctx.Err() == nil {
					t.Errorf("enqueue: %v", err)
				}
				return
			}
			enqueued.Add(int64(len(msgs)))
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
	// Sampling starts once the rows flow, so that every sampled interval
	// holds publishes.
	time.Sleep(500 * time.Millisecond)
	srv, err := New(Config{Store: o.store, Token: testToken, Logger: quiet, Database: "postgres test",
		SampleInterval: 250 * time.Millisecond, Published: publishedCounter(o)})
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() { srv.sampleEvery(ctx, srv.cfg.SampleInterval) })
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	deadline := time.Now().Add(30 * time.Second)
	for len(srv.history.since(time.Time{})) < 12 {
		if time.Now().After(deadline) {
			t.Fatal("the page took no 12 samples in 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	rate := float64(enqueued.Load()) / time.Since(start).Minutes()

	b := newBrowser(t)
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(b, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	run("log in", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), testToken), chromedp.Submit(chromedp.CSS("#token")),
		chromedp.WaitVisible(chromedp.CSS(`figure[data-chart="published"]`)))
	legend := func(chart string) float64 {
		t.Helper()
		v, err := chromedp.Run(b, chromedp.Evaluate[string](`document.querySelector('figure[data-chart="`+chart+`"] .legend').dataset.last`))
		if err != nil {
			t.Fatalf("legend of %s: %v", chart, err)
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("legend of %s: %q: %v", chart, v, err)
		}
		return f
	}
	published, drain := legend("published"), legend("drain")
	t.Logf("producer %.0f rows/min; the page shows published %.0f rows/min, net drain %.0f rows/min", rate, published, drain)
	if published <= 0 || published < rate/2 || published > rate*2 {
		t.Errorf("the publish chart shows %.0f rows/min, want within a factor of two of the producer's %.0f", published, rate)
	}
	if math.Abs(drain) > rate/2 {
		t.Errorf("the net drain chart shows %.0f rows/min while the dispatcher keeps up with %.0f rows/min, want near zero", drain, rate)
	}
	if n, _ := chromedp.Run(b, chromedp.Evaluate[int](`document.querySelectorAll('figure[data-chart="published"] polyline').length`)); n != 1 {
		t.Errorf("%d lines on the publish chart, want 1", n)
	}
	if v, _ := chromedp.Run(b, chromedp.Text(chromedp.CSS("#published"))); v == "" || v == "–" || v == "0" {
		t.Errorf("the published count shows %q", v)
	}
}
