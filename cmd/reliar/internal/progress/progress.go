// Package progress draws a progress bar on stderr, and only when stderr is a
// terminal: a bar written into a log file or a pipe would be noise.
package progress

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar reports the progress of one long-running step. The zero-cost Discard
// implementation is used when there is no terminal to draw on.
type Bar interface {
	// Set moves the bar to n of its total.
	Set(n int)
	// Finish completes the bar and clears it from the terminal, so that
	// nothing of it remains between log lines.
	Finish()
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// New returns a bar of total steps labelled desc, drawn on w when terminal
// is true and discarded otherwise. The bar's own figures are off: the line
// after the bar is [Status], which labels each figure and shows no rate
// before there is one to show.
func New(terminal bool, total int, desc string, w io.Writer) Bar {
	if !terminal || total <= 0 {
		return Discard{}
	}
	b := &bar{desc: desc, total: total, start: time.Now()}
	b.pb = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc+" "+Status(0, total, 0)),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetRenderBlankState(true),
	)
	return b
}

// Status is the text beside the bar after n of total steps in elapsed:
// the count, the rate in messages per second, the time elapsed and the
// time left, each labelled. Before the first message and for the first
// tenth of a second there is no rate worth showing, and no estimate.
func Status(n, total int, elapsed time.Duration) string {
	s := fmt.Sprintf("%d/%d msg, elapsed %s", n, total, elapsed.Round(100*time.Millisecond))
	if n <= 0 || elapsed < 100*time.Millisecond {
		return s + ", rate and time left once messages arrive"
	}
	rate := float64(n) / elapsed.Seconds()
	left := time.Duration(float64(total-n) / rate * float64(time.Second))
	return fmt.Sprintf("%s, %.0f msg/s, about %s left", s, rate, left.Round(100*time.Millisecond))
}

type bar struct {
	pb    *progressbar.ProgressBar
	desc  string
	total int
	start time.Time
}

func (b *bar) Set(n int) {
	b.pb.Describe(b.desc + " " + Status(n, b.total, time.Since(b.start)))
	_ = b.pb.Set(n)
}

func (b *bar) Finish() {
	_ = b.pb.Finish()
	_ = b.pb.Clear()
}

// Discard is a Bar that draws nothing.
type Discard struct{}

// Set does nothing.
func (Discard) Set(int) {}

// Finish does nothing.
func (Discard) Finish() {}
