package outboxdriver_test

import (
	"context"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// FuzzRowEnvelope: any stored metadata and headers decode or are reported
// as poison (a *DecodeError), never panic.
func FuzzRowEnvelope(f *testing.F) {
	row, err := outboxdriver.NewRow(context.Background(), reliar.NewMsg(order{N: 1}), nil, 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(row.Metadata, []byte(`{"k":"v"}`), 1)
	f.Add([]byte(`{not json`), []byte(nil), 1)
	f.Add([]byte(`null`), []byte(`null`), 1)
	f.Add([]byte(`{}`), []byte(`{"k":1}`), 2)
	f.Add([]byte(`{"correlation":{"conversation_id":"nope"}}`), []byte(`[]`), 0)
	f.Fuzz(func(t *testing.T, meta, headers []byte, version int) {
		r := row
		r.Metadata, r.Headers, r.MetadataVersion = meta, headers, &version
		env, err := r.Envelope()
		if err != nil {
			if !errors.Is(err, outboxdriver.ErrUndecodable) {
				t.Fatalf("decode error %v is not ErrUndecodable", err)
			}
			return
		}
		if env.ID != r.ID || env.Metadata.Correlation.ConversationID == [16]byte{} {
			t.Fatalf("decoded envelope lost its id or conversation: %+v", env)
		}
	})
}

// FuzzSanitizeError: last_error is always valid UTF-8, NUL-free and
// within the limit.
func FuzzSanitizeError(f *testing.F) {
	f.Add("plain")
	f.Add("nul\x00byte")
	f.Add("\xff\xfe invalid")
	f.Fuzz(func(t *testing.T, s string) {
		got := outboxdriver.SanitizeError(s)
		if !utf8.ValidString(got) || len(got) > outboxdriver.MaxErrorBytes {
			t.Fatalf("SanitizeError(%q) = %q", s, got)
		}
		for _, c := range []byte(got) {
			if c == 0 {
				t.Fatalf("NUL kept in %q", got)
			}
		}
	})
}
