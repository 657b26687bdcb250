package outboxsql

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// errInvalid stands in for a store's ErrInvalidOption.
var errInvalid = errors.New("teststore: invalid option")

func TestSettingsSetters(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	tests := []struct {
		name  string
		set   func(s *Settings) error
		check func(s *Settings) bool
		ok    bool
	}{
		{"serializer", func(s *Settings) error { return s.SetSerializer(reliar.JSON) },
			func(s *Settings) bool { return s.Serializer == reliar.JSON }, true},
		{"nil serializer", func(s *Settings) error { return s.SetSerializer(nil) }, nil, false},
		{"max payload", func(s *Settings) error { return s.SetMaxPayload(10) },
			func(s *Settings) bool { return s.MaxPayload == 10 }, true},
		{"zero max payload", func(s *Settings) error { return s.SetMaxPayload(0) }, nil, false},
		{"negative max payload", func(s *Settings) error { return s.SetMaxPayload(-1) }, nil, false},
		{"logger", func(s *Settings) error { return s.SetLogger(logger) },
			func(s *Settings) bool { return s.Log == logger }, true},
		{"nil logger", func(s *Settings) error { return s.SetLogger(nil) }, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSettings("teststore", errInvalid)
			before := s
			err := tt.set(&s)
			if !tt.ok {
				if !errors.Is(err, errInvalid) {
					t.Fatalf("error %v does not match the store's invalid option error", err)
				}
				if s != before {
					t.Fatalf("a refused option changed the settings: %+v", s)
				}
				return
			}
			if err != nil || !tt.check(&s) {
				t.Fatalf("err %v, settings %+v", err, s)
			}
		})
	}
}

func TestNewSettingsDefaults(t *testing.T) {
	s := NewSettings("teststore", errInvalid)
	if s.Name != "teststore" || s.Serializer != reliar.JSON || s.MaxPayload != outboxdriver.DefaultMaxPayloadBytes ||
		s.Log != slog.Default() || s.Invalid != errInvalid {
		t.Fatalf("defaults %+v", s)
	}
}

// body is the tests' message body.
type body struct {
	Text string `json:"text"`
}

func (body) MessageType() string { return "test.body" }

func TestEncode(t *testing.T) {
	dup := reliar.NewMsg(body{"dup"})
	tests := []struct {
		name    string
		msgs    []reliar.Outgoing
		wantErr error
		inText  string // the error text contains it
	}{
		{name: "none"},
		{name: "several", msgs: []reliar.Outgoing{reliar.NewMsg(body{"a"}), reliar.NewMsg(body{"b"})}},
		{name: "payload too large", msgs: []reliar.Outgoing{reliar.NewMsg(body{strings.Repeat("x", 100)})},
			wantErr: outboxdriver.ErrPayloadTooLarge, inText: "teststore: enqueue: "},
		{name: "invalid message", msgs: []reliar.Outgoing{{}}, inText: "teststore: enqueue: "},
		{name: "id used twice", msgs: []reliar.Outgoing{dup, dup}, wantErr: outboxdriver.ErrDuplicateID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSettings("teststore", errInvalid)
			s.MaxPayload = 64
			rows, ids, err := s.Encode(t.Context(), tt.msgs)
			if tt.wantErr != nil || tt.inText != "" {
				if err == nil || (tt.wantErr != nil && !errors.Is(err, tt.wantErr)) || !strings.Contains(err.Error(), tt.inText) {
					t.Fatalf("Encode: %v, want %v containing %q", err, tt.wantErr, tt.inText)
				}
				if rows != nil || ids != nil {
					t.Fatal("a failed Encode returned rows")
				}
				return
			}
			if err != nil || len(rows) != len(tt.msgs) || len(ids) != len(tt.msgs) {
				t.Fatalf("Encode = %d rows, %d ids, %v", len(rows), len(ids), err)
			}
			for i := range rows {
				if rows[i].ID != ids[i] || ids[i] != tt.msgs[i].ID || rows[i].MessageType != "test.body" {
					t.Fatalf("row %d: %+v, id %v", i, rows[i], ids[i])
				}
			}
		})
	}
}

func TestLogShortfall(t *testing.T) {
	tests := []struct {
		name     string
		asked    int
		affected int64
		logged   bool
	}{
		{"all affected", 3, 3, false},
		{"none asked", 0, 0, false},
		{"fewer affected", 3, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			s := NewSettings("teststore", errInvalid)
			s.Log = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			s.LogShortfall(t.Context(), "complete", tt.asked, tt.affected)
			out := buf.String()
			if tt.logged != (out != "") {
				t.Fatalf("logged %q", out)
			}
			if tt.logged && (!strings.Contains(out, "teststore: fewer rows affected") || !strings.Contains(out, "op=complete")) {
				t.Fatalf("message %q", out)
			}
		})
	}
}
