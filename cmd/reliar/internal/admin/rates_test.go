package admin

import (
	"math"
	"testing"
	"time"
)

// steadySamples is a relay keeping up with its producers: 450 rows a
// minute enqueued and published, sampled every 10 s, the pending count
// moving by a claim of 20 rows between samples.
func steadySamples() []sample {
	var out []sample
	for i := range 60 {
		pending := int64(40)
		if i%2 == 1 {
			pending = 60
		}
		s := sample{At: t0.Add(time.Duration(i) * 10 * time.Second), Pending: pending}
		if i > 0 {
			s.Published, s.HasPublished = 75, true // 450 a minute
		}
		out = append(out, s)
	}
	return out
}

// TestDrainRatesOfARelayKeepingUp: the net drain of a steady relay stays
// near zero instead of swinging ±120 rows/min with each claim.
func TestDrainRatesOfARelayKeepingUp(t *testing.T) {
	rates := drainRates(steadySamples())
	for _, r := range rates[6:] {
		if math.Abs(r.PerMinute) > 25 {
			t.Fatalf("net drain %v rows/min at %v, want within ±25 of 0 (the rows moved by one claim, over a minute)", r.PerMinute, r.At.Sub(t0))
		}
	}
}

// TestPublishRates: the publish rate is the rows counted over the last
// minute of samples; a sample without a count starts the window again.
func TestPublishRates(t *testing.T) {
	rates := publishRates(steadySamples())
	if len(rates) != 59 {
		t.Fatalf("%d rates, want one per sample after the first", len(rates))
	}
	for _, r := range rates {
		if math.Abs(r.PerMinute-450) > 1e-9 {
			t.Fatalf("publish rate %v at %v, want 450", r.PerMinute, r.At.Sub(t0))
		}
	}
	s := steadySamples()[:10]
	s[5].HasPublished = false
	rates = publishRates(s)
	if len(rates) != 8 || math.Abs(rates[len(rates)-1].PerMinute-450) > 1e-9 {
		t.Fatalf("rates around a sample without a count: %+v", rates)
	}
	if got := publishRates([]sample{{At: t0}, {At: t0.Add(time.Second)}}); len(got) != 0 {
		t.Fatalf("rates of a store that counts nothing: %+v", got)
	}
}
