package outbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// EventLog is an EventSink that writes each event as one JSON line, for a
// checker reading another process's events (ReadEvents reads them back).
// Writes are serialised; a write error is kept and reported by Err, and
// later events are dropped.
type EventLog struct {
	mu  sync.Mutex
	enc *json.Encoder
	w   *bufio.Writer
	err error
}

// NewEventLog returns an EventLog writing to w. Call Flush before reading
// what it wrote.
func NewEventLog(w io.Writer) *EventLog {
	bw := bufio.NewWriter(w)
	return &EventLog{enc: json.NewEncoder(bw), w: bw}
}

// Event implements EventSink.
func (l *EventLog) Event(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = l.enc.Encode(e)
	}
}

// Flush writes buffered events out.
func (l *EventLog) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = l.w.Flush()
	}
	return l.err
}

// Err returns the first write error, if any.
func (l *EventLog) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// ReadEvents reads the events an EventLog wrote. A truncated last line (the
// writer was killed mid-write) is ignored; any other bad line is an error.
func ReadEvents(r io.Reader) ([]Event, error) {
	var out []Event
	dec := json.NewDecoder(r)
	for line := 1; ; line++ {
		var e Event
		err := dec.Decode(&e)
		switch {
		case errors.Is(err, io.EOF):
			return out, nil
		case errors.Is(err, io.ErrUnexpectedEOF):
			return out, nil
		case err != nil:
			return out, fmt.Errorf("outbox: event %d: %w", line, err)
		}
		out = append(out, e)
	}
}
