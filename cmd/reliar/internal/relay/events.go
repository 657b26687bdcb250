package relay

import (
	"errors"
	"fmt"
	"os"

	"github.com/reliar/reliar/outbox"
)

// eventsFile is an outbox.EventSink writing every dispatcher event to a
// file as a JSON line. Each event is written through at once (one write per
// event batch), so that a checker reading the file after a SIGKILL finds
// every event the relay reported.
type eventsFile struct {
	f   *os.File
	log *outbox.EventLog
}

// openEvents opens path for appending, creating it when needed.
func openEvents(path string) (*eventsFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("events file: %w", err)
	}
	return &eventsFile{f: f, log: outbox.NewEventLog(f)}, nil
}

// Event implements outbox.EventSink.
func (e *eventsFile) Event(ev outbox.Event) {
	e.log.Event(ev)
	_ = e.log.Flush()
}

// Close flushes what is left and closes the file. It reports the first
// write error met, if any.
func (e *eventsFile) Close() error {
	err := e.log.Flush()
	if cerr := e.f.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return fmt.Errorf("events file: %w", err)
	}
	return nil
}
