package admin

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/reliar/reliar/cmd/reliar/internal/ops"
)

// Geometry of a chart, in SVG user units.
const (
	chartWidth  = 560
	chartHeight = 200
	plotLeft    = 56
	plotRight   = 548
	plotTop     = 14
	plotBottom  = 176
)

// point is one value of a series at a time.
type point struct {
	At time.Time
	V  float64
}

// series is one line of a chart.
type series struct {
	Name string
	// Class is the line's CSS class, which gives its colour.
	Class  string
	Points []point
}

// chartLine is a series laid out for the template.
type chartLine struct {
	Name  string
	Class string
	// Points is the polyline's points attribute.
	Points string
	// Last is the series' latest value, for the legend.
	Last string
	// LastValue is Last unformatted, for scripts and tests; empty with
	// no value.
	LastValue string
}

// tick is a labelled grid line.
type tick struct {
	Pos   float64
	Label string
}

// chart is an inline SVG line chart laid out for the template.
type chart struct {
	ID    string
	Title string
	Unit  string
	// Span is the time the chart covers, such as "1h".
	Span   string
	Width  int
	Height int
	Left   float64
	Right  float64
	Top    float64
	Bottom float64
	Lines  []chartLine
	YTicks []tick
	XTicks []tick
	// Empty is true when no series has two points to join.
	Empty bool
	// Desc summarises the chart in words, for screen readers.
	Desc string
}

// newChart lays out series over the span that ends at end. Values start
// the y axis at zero, or below it for negative values.
func newChart(id, title, unit string, end time.Time, span time.Duration, all []series) chart {
	c := chart{
		ID: id, Title: title, Unit: unit, Span: ops.FormatDuration(span), Width: chartWidth, Height: chartHeight,
		Left: plotLeft, Right: plotRight, Top: plotTop, Bottom: plotBottom, Empty: true,
	}
	start := end.Add(-span)
	lo, hi := 0.0, 0.0
	for _, s := range all {
		for _, p := range s.Points {
			lo, hi = math.Min(lo, p.V), math.Max(hi, p.V)
		}
	}
	hi = niceCeil(hi)
	if lo < 0 {
		lo = -niceCeil(-lo)
	}
	if hi == lo {
		hi = lo + 1
	}
	x := func(t time.Time) float64 {
		f := float64(t.Sub(start)) / float64(span)
		return plotLeft + math.Max(0, math.Min(1, f))*(plotRight-plotLeft)
	}
	y := func(v float64) float64 {
		return plotBottom - (v-lo)/(hi-lo)*(plotBottom-plotTop)
	}
	var desc []string
	for _, s := range all {
		line := chartLine{Name: s.Name, Class: s.Class, Last: "–"}
		var b strings.Builder
		for i, p := range s.Points {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%.1f,%.1f", x(p.At), y(p.V))
		}
		line.Points = b.String()
		if n := len(s.Points); n > 0 {
			line.Last = formatValue(s.Points[n-1].V)
			line.LastValue = strconv.FormatFloat(s.Points[n-1].V, 'f', -1, 64)
			desc = append(desc, fmt.Sprintf("%s now %s", s.Name, line.Last))
		}
		if len(s.Points) >= 2 {
			c.Empty = false
		}
		c.Lines = append(c.Lines, line)
	}
	for _, v := range yTickValues(lo, hi) {
		c.YTicks = append(c.YTicks, tick{Pos: y(v), Label: formatValue(v)})
	}
	for i := 0; i <= 4; i++ {
		ago := span * time.Duration(4-i) / 4
		label := "now"
		if ago > 0 {
			label = "−" + ops.FormatDuration(ago)
		}
		c.XTicks = append(c.XTicks, tick{Pos: x(end.Add(-ago)), Label: label})
	}
	c.Desc = fmt.Sprintf("%s over the last %s. %s.", title, ops.FormatDuration(span), strings.Join(desc, "; "))
	if c.Empty {
		c.Desc = fmt.Sprintf("%s: not enough samples yet.", title)
	}
	return c
}

// yTickValues returns the y axis' grid values: the bounds, the middle, and
// zero when it lies between them.
func yTickValues(lo, hi float64) []float64 {
	vals := []float64{lo, (lo + hi) / 2, hi}
	if lo < 0 && hi > 0 {
		vals = []float64{lo, 0, hi}
	}
	return vals
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (0 stays 0).
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// formatValue writes a count or rate shortly: 12, 3.5, 1.2k, 4M.
func formatValue(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e6:
		return trimZero(strconv.FormatFloat(v/1e6, 'f', 1, 64)) + "M"
	case a >= 1e4:
		return trimZero(strconv.FormatFloat(v/1e3, 'f', 1, 64)) + "k"
	case a >= 100 || a == math.Trunc(a):
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return trimZero(strconv.FormatFloat(v, 'f', 1, 64))
}

// trimZero removes a trailing ".0".
func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

// charts draws the backlog, the publish rate (when the store counts its
// published rows) and the net drain of the samples.
func charts(samples []sample, end time.Time, span time.Duration, published bool) []chart {
	var pending, dead []point
	for _, s := range samples {
		pending = append(pending, point{At: s.At, V: float64(s.Pending)})
		dead = append(dead, point{At: s.At, V: float64(s.Dead)})
	}
	points := func(rates []rate) []point {
		out := make([]point, 0, len(rates))
		for _, r := range rates {
			out = append(out, point{At: r.At, V: r.PerMinute})
		}
		return out
	}
	out := []chart{newChart("backlog", "Backlog", "rows", end, span, []series{
		{Name: "pending", Class: "s-pending", Points: pending},
		{Name: "dead", Class: "s-dead", Points: dead},
	})}
	if published {
		out = append(out, newChart("published", "Throughput (published)", "rows/min", end, span, []series{
			{Name: "published per minute", Class: "s-published", Points: points(publishRates(samples))},
		}))
	}
	return append(out, newChart("drain", "Net drain (published − enqueued)", "rows/min", end, span, []series{
		{Name: "drained per minute", Class: "s-drain", Points: points(drainRates(samples))},
	}))
}
