// Package progress draws a progress bar on stderr, and only when stderr is a
// terminal: a bar written into a log file or a pipe would be noise.
package progress

import (
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
// is true and discarded otherwise.
func New(terminal bool, total int, desc string, w io.Writer) Bar {
	if !terminal || total <= 0 {
		return Discard{}
	}
	return &bar{pb: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("msg"),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetRenderBlankState(true),
	)}
}

type bar struct {
	pb *progressbar.ProgressBar
}

func (b *bar) Set(n int) { _ = b.pb.Set(n) }

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
