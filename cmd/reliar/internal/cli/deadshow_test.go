package cli

import (
	"encoding/base64"
	"net"
	"testing"

	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox/outboxdriver"
)

// TestShowDocumentCannotDriveTheTerminal: a payload is printed as text only
// when a terminal shows it as it is; escape sequences and other control
// characters come out in base64.
func TestShowDocumentCannotDriveTheTerminal(t *testing.T) {
	for _, tt := range []struct {
		payload  string
		cut      bool
		encoding string
		shown    string
	}{
		{"{\"a\": 1}\n\tb", false, "utf-8", "{\"a\": 1}\n\tb"},
		{"hé", true, "utf-8", "hé"},
		{"h\xc3", true, "utf-8", "h"}, // a character cut in two
		{"\x1b]0;pwned\x07", false, "base64", ""},
		{"clear\x1b[2J", false, "base64", ""},
		{"\xff\xfe", false, "base64", ""},
		{"nul\x00", false, "base64", ""},
	} {
		doc := showDocument(outboxdriver.DeadPayload{ID: reliar.NewMessageID(), Payload: []byte(tt.payload), Size: len(tt.payload) + 1, Cut: tt.cut})
		if doc.Encoding != tt.encoding {
			t.Errorf("%q: encoding %s, want %s", tt.payload, doc.Encoding, tt.encoding)
			continue
		}
		if tt.encoding == "base64" {
			raw, err := base64.StdEncoding.DecodeString(doc.Payload)
			if err != nil || string(raw) != tt.payload {
				t.Errorf("%q: base64 %q does not give it back", tt.payload, doc.Payload)
			}
		} else if doc.Payload != tt.shown || doc.Shown != len(tt.shown) {
			t.Errorf("%q: shown %q (%d), want %q", tt.payload, doc.Payload, doc.Shown, tt.shown)
		}
	}
}

// TestServeListensOnLoopbackByDefault: without --addr, the admin page is
// reachable from this machine only.
func TestServeListensOnLoopbackByDefault(t *testing.T) {
	cmd := newServeCommand(&App{})
	host, _, err := net.SplitHostPort(cmd.Flags().Lookup("addr").DefValue)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		t.Fatalf("--addr defaults to %q, want a loopback address", cmd.Flags().Lookup("addr").DefValue)
	}
}
