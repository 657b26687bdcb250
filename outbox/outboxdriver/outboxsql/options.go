package outboxsql

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// Settings are the options every SQL store takes, with the store's name and
// the error its refused options match.
type Settings struct {
	// Name prefixes the store's messages, such as "sqlitestore".
	Name string
	// Invalid is the store's ErrInvalidOption, wrapped by a refused option.
	Invalid error
	// Serializer encodes the bodies of enqueued messages. Defaults to
	// reliar.JSON.
	Serializer reliar.Serializer
	// MaxPayload is the largest payload Enqueue accepts. Defaults to
	// outboxdriver.DefaultMaxPayloadBytes.
	MaxPayload int
	// Log receives debug messages. Defaults to slog.Default().
	Log *slog.Logger
}

// NewSettings returns the defaults of the store named name, whose refused
// options wrap invalid.
func NewSettings(name string, invalid error) Settings {
	return Settings{
		Name:       name,
		Invalid:    invalid,
		Serializer: reliar.JSON,
		MaxPayload: outboxdriver.DefaultMaxPayloadBytes,
		Log:        slog.Default(),
	}
}

// SetSerializer sets the serializer; nil is refused.
func (s *Settings) SetSerializer(ser reliar.Serializer) error {
	if ser == nil {
		return fmt.Errorf("%w: nil serializer", s.Invalid)
	}
	s.Serializer = ser
	return nil
}

// SetMaxPayload sets the payload limit; a limit that is not positive is
// refused.
func (s *Settings) SetMaxPayload(n int) error {
	if n <= 0 {
		return fmt.Errorf("%w: max payload bytes %d is not positive", s.Invalid, n)
	}
	s.MaxPayload = n
	return nil
}

// SetLogger sets the logger; nil is refused.
func (s *Settings) SetLogger(l *slog.Logger) error {
	if l == nil {
		return fmt.Errorf("%w: nil logger", s.Invalid)
	}
	s.Log = l
	return nil
}

// Encode turns msgs into rows with outboxdriver.NewRow, before anything is
// written, and returns them with their ids. It fails with a
// *outboxdriver.PayloadTooLargeError (wrapped), or a *outboxdriver.DuplicateIDError when
// msgs use an id twice.
func (s *Settings) Encode(ctx context.Context, msgs []reliar.Outgoing) ([]outboxdriver.Row, []reliar.MessageID, error) {
	rows := make([]outboxdriver.Row, len(msgs))
	ids := make([]reliar.MessageID, len(msgs))
	seen := make(map[reliar.MessageID]struct{}, len(msgs))
	for i, m := range msgs {
		r, err := outboxdriver.NewRow(ctx, m, s.Serializer, s.MaxPayload)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: enqueue: %w", s.Name, err)
		}
		if _, dup := seen[r.ID]; dup {
			return nil, nil, &outboxdriver.DuplicateIDError{ID: r.ID}
		}
		seen[r.ID] = struct{}{}
		rows[i], ids[i] = r, r.ID
	}
	return rows, ids, nil
}

// LogShortfall notes, at debug, an outcome write that matched fewer rows
// than asked: their leases were lost to a reclaim. It is never an error.
func (s *Settings) LogShortfall(ctx context.Context, op string, asked int, affected int64) {
	if affected < int64(asked) {
		s.Log.DebugContext(ctx, s.Name+": fewer rows affected than asked; their leases were lost",
			slog.String("op", op), slog.Int("asked", asked), slog.Int64("affected", affected))
	}
}
