package admin

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestNiceCeil(t *testing.T) {
	tests := []struct{ in, want float64 }{
		{0, 0}, {-3, 0}, {0.3, 0.5}, {1, 1}, {1.2, 2}, {3, 5}, {7, 10}, {10, 10}, {11, 20}, {4200, 5000}, {60001, 100000},
	}
	for _, tt := range tests {
		if got := niceCeil(tt.in); got != tt.want {
			t.Errorf("niceCeil(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {12, "12"}, {3.25, "3.2"}, {-1.5, "-1.5"}, {150.4, "150"}, {9999, "9999"}, {12000, "12k"}, {12345, "12.3k"}, {2.5e6, "2.5M"}, {-30000, "-30k"},
	}
	for _, tt := range tests {
		if got := formatValue(tt.in); got != tt.want {
			t.Errorf("formatValue(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNewChart(t *testing.T) {
	end := t0.Add(time.Hour)
	c := newChart("x", "Backlog", "rows", end, time.Hour, []series{
		{Name: "pending", Class: "s-pending", Points: []point{{At: t0, V: 0}, {At: t0.Add(30 * time.Minute), V: 40}, {At: end, V: 80}}},
		{Name: "dead", Class: "s-dead", Points: []point{{At: end, V: 3}}},
	})
	if c.Empty {
		t.Fatal("a chart with a full series is empty")
	}
	// y spans 0..100 (80 rounded up): x from the left edge to the right
	// edge, y from the bottom up.
	if got := c.Lines[0].Points; got != "56.0,176.0 302.0,111.2 548.0,46.4" {
		t.Fatalf("points %q", got)
	}
	if c.Lines[0].Last != "80" || c.Lines[1].Last != "3" {
		t.Fatalf("legend values %q %q", c.Lines[0].Last, c.Lines[1].Last)
	}
	labels := []string{}
	for _, tk := range c.XTicks {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "−1h −45m −30m −15m now" {
		t.Fatalf("x labels %q", got)
	}
	if len(c.YTicks) != 3 || c.YTicks[0].Label != "0" || c.YTicks[2].Label != "100" {
		t.Fatalf("y ticks %+v", c.YTicks)
	}
	if !strings.Contains(c.Desc, "pending now 80") || !strings.Contains(c.Desc, "dead now 3") {
		t.Fatalf("desc %q", c.Desc)
	}

	neg := newChart("d", "Drain", "rows/min", end, time.Hour, []series{{Name: "d", Points: []point{{At: t0, V: -12}, {At: end, V: 30}}}})
	if neg.YTicks[0].Label != "-20" || neg.YTicks[1].Label != "0" || neg.YTicks[2].Label != "50" {
		t.Fatalf("y ticks of a chart below zero %+v", neg.YTicks)
	}

	empty := newChart("e", "Drain", "rows/min", end, time.Hour, []series{{Name: "d", Points: []point{{At: end, V: 1}}}})
	if !empty.Empty || !strings.Contains(empty.Desc, "not enough samples") {
		t.Fatalf("a one-point chart %+v", empty)
	}
}

// TestChartTemplate renders the charts of a sampled hour as SVG.
func TestChartTemplate(t *testing.T) {
	srv, err := New(Config{Store: downStore{}, Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	var samples []sample
	for i := range 7 {
		samples = append(samples, sample{At: t0.Add(time.Duration(i) * 10 * time.Minute), Pending: int64(600 - 100*i), Dead: int64(i)})
	}
	var b bytes.Buffer
	for _, c := range charts(samples, t0.Add(time.Hour), time.Hour, false) {
		if err := srv.pages.ExecuteTemplate(&b, "chart", c); err != nil {
			t.Fatal(err)
		}
	}
	out := b.String()
	for _, want := range []string{`<svg viewBox="0 0 560 200" role="img"`, `class="line s-pending"`, `class="line s-dead"`, `class="line s-drain"`, "drained per minute 10", "pending 0"} {
		if !strings.Contains(out, want) {
			t.Errorf("chart SVG lacks %q:\n%s", want, out)
		}
	}
}
