// Package output writes a command's result to stdout under the CLI's output
// rule: stdout carries only the result, either one JSON document or a
// summary whose last line is the command's specified line, and nothing is
// printed after it. A Printer enforces the "nothing after" half: once the
// final line or document is out, every further write fails with ErrSealed.
package output

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
)

// ErrSealed is returned by a write after the result was complete.
var ErrSealed = errors.New("output: result already written")

// Printer writes one command's result. It is safe for concurrent use.
type Printer struct {
	mu     sync.Mutex
	w      io.Writer
	json   bool
	sealed bool
}

// New returns a Printer on w. With asJSON, only JSON may be written and
// Line writes nothing.
func New(w io.Writer, asJSON bool) *Printer { return &Printer{w: w, json: asJSON} }

// JSON reports whether the command's result is a JSON document.
func (p *Printer) JSON() bool { return p.json }

// Line writes one line of the summary that precedes the final line. It
// writes nothing in JSON mode, where the document is the whole result.
func (p *Printer) Line(format string, args ...any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sealed {
		return ErrSealed
	}
	if p.json {
		return nil
	}
	return p.write(format, args...)
}

// Final writes the summary's last line and seals the printer. In JSON mode
// it fails: a JSON result ends with Document.
func (p *Printer) Final(format string, args ...any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sealed {
		return ErrSealed
	}
	if p.json {
		return errors.New("output: a JSON result ends with a document, not a line")
	}
	p.sealed = true
	return p.write(format, args...)
}

// Document writes v as one indented JSON document and seals the printer.
func (p *Printer) Document(v any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sealed {
		return ErrSealed
	}
	p.sealed = true
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("output: encode result: %w", err)
	}
	b = append(b, '\n')
	if _, err := p.w.Write(b); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}

// Text writes a block of text as the whole result (SQL, for example) and
// seals the printer. A missing final newline is added. In JSON mode it
// fails: a JSON result is a document.
func (p *Printer) Text(text string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sealed {
		return ErrSealed
	}
	if p.json {
		return errors.New("output: a JSON result is a document, not text")
	}
	p.sealed = true
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if _, err := io.WriteString(p.w, text); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}

// Sealed reports whether the result is complete.
func (p *Printer) Sealed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sealed
}

// write writes one line; a line never holds a newline of its own.
func (p *Printer) write(format string, args ...any) error {
	line := fmt.Sprintf(format, args...)
	line = strings.ReplaceAll(strings.TrimRight(line, "\n"), "\n", " ")
	if _, err := io.WriteString(p.w, line+"\n"); err != nil {
		return fmt.Errorf("output: %w", err)
	}
	return nil
}
