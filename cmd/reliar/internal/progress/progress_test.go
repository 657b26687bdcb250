package progress

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestNoTerminalDrawsNothing(t *testing.T) {
	var buf bytes.Buffer
	b := New(IsTerminal(&buf), 10, "delivered", &buf)
	if _, ok := b.(Discard); !ok {
		t.Fatalf("New on a buffer = %T, want Discard", b)
	}
	b.Set(5)
	b.Finish()
	if buf.Len() != 0 {
		t.Fatalf("wrote %q", buf.String())
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if IsTerminal(f) {
		t.Fatal("a regular file is not a terminal")
	}
	if IsTerminal(&bytes.Buffer{}) {
		t.Fatal("a buffer is not a terminal")
	}
}

func TestTerminalBar(t *testing.T) {
	var buf bytes.Buffer
	b := New(true, 10, "delivered", &buf)
	b.Set(10)
	b.Finish()
	if !strings.Contains(buf.String(), "delivered") {
		t.Fatalf("bar output %q lacks its description", buf.String())
	}
	if _, ok := New(true, 0, "x", &buf).(Discard); !ok {
		t.Fatal("a bar of no steps must be discarded")
	}
}
