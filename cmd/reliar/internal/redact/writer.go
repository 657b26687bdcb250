package redact

import "io"

// Writer redacts everything written through it with a Redactor. Each Write
// is redacted on its own, so a secret split across two writes would pass;
// the CLI writes whole lines. Log records do not go through a Writer but
// through [Redactor.Handler], which redacts values before formatting.
type Writer struct {
	w io.Writer
	r *Redactor
}

// Writer returns a Writer that redacts into w.
func (r *Redactor) Writer(w io.Writer) *Writer { return &Writer{w: w, r: r} }

// NewWriter returns a Writer that redacts into w what [String] recognises.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes the redacted p to the underlying writer. It reports len(p)
// on success, since the redacted text may be shorter or longer than p.
func (w *Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, w.r.String(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
