package progress

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestStatus: the first frame shows no rate (no "0 msg/hr"), and every
// figure is labelled (no bare [elapsed:remaining]).
func TestStatus(t *testing.T) {
	for _, tt := range []struct {
		n, total int
		elapsed  time.Duration
		want     string
	}{
		{0, 1000, 0, "0/1000 msg, elapsed 0s, rate and time left once messages arrive"},
		{5, 1000, 50 * time.Millisecond, "5/1000 msg, elapsed 100ms, rate and time left once messages arrive"},
		{250, 1000, 500 * time.Millisecond, "250/1000 msg, elapsed 500ms, 500 msg/s, about 1.5s left"},
		{1000, 1000, 2 * time.Second, "1000/1000 msg, elapsed 2s, 500 msg/s, about 0s left"},
	} {
		if got := Status(tt.n, tt.total, tt.elapsed); got != tt.want {
			t.Errorf("Status(%d, %d, %v) = %q, want %q", tt.n, tt.total, tt.elapsed, got, tt.want)
		}
	}
}

// TestFirstFrame: what the bar draws before the first delivery.
func TestFirstFrame(t *testing.T) {
	var w bytes.Buffer
	b := New(true, 1000, "delivering", &w)
	b.Set(0)
	frame := w.String()
	if strings.Contains(frame, "msg/hr") || regexp.MustCompile(`\[\d+s:\d+s\]`).MatchString(frame) {
		t.Errorf("first frame %q shows a zero rate or unlabelled times", frame)
	}
	if !strings.Contains(frame, "0/1000 msg, elapsed") {
		t.Errorf("first frame %q lacks the labelled status", frame)
	}
	b.Finish()
}
