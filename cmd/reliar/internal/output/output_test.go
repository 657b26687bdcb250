package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

func TestSummaryThenSealed(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, false)
	if err := p.Line("first %d", 1); err != nil {
		t.Fatal(err)
	}
	if err := p.Final("demo: ok=%t", true); err != nil {
		t.Fatal(err)
	}
	if !p.Sealed() {
		t.Fatal("not sealed after Final")
	}
	for name, err := range map[string]error{
		"Line":     p.Line("late"),
		"Final":    p.Final("late"),
		"Document": p.Document(1),
	} {
		if !errors.Is(err, ErrSealed) {
			t.Fatalf("%s after Final = %v, want ErrSealed", name, err)
		}
	}
	if got, want := buf.String(), "first 1\ndemo: ok=true\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

func TestLinesNeverSplit(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, false)
	if err := p.Final("a\nb\n"); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "a b\n" {
		t.Fatalf("output %q, want one line", got)
	}
}

func TestJSON(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, true)
	if !p.JSON() {
		t.Fatal("JSON() = false")
	}
	if err := p.Line("ignored"); err != nil {
		t.Fatal(err)
	}
	if err := p.Final("refused"); err == nil {
		t.Fatal("Final in JSON mode must fail")
	}
	if err := p.Document(map[string]int{"n": 3}); err != nil {
		t.Fatal(err)
	}
	var got map[string]int
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil || got["n"] != 3 {
		t.Fatalf("document %q: %v", buf.String(), err)
	}
	if err := p.Document(1); !errors.Is(err, ErrSealed) {
		t.Fatalf("second document = %v, want ErrSealed", err)
	}
}

func TestDocumentEncodeError(t *testing.T) {
	p := New(&bytes.Buffer{}, true)
	if err := p.Document(func() {}); err == nil {
		t.Fatal("want an encoding error")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("closed") }

func TestWriteErrors(t *testing.T) {
	if err := New(failingWriter{}, false).Final("x"); err == nil {
		t.Fatal("Final: want the writer's error")
	}
	if err := New(failingWriter{}, true).Document(1); err == nil {
		t.Fatal("Document: want the writer's error")
	}
}

func TestText(t *testing.T) {
	var buf bytes.Buffer
	p := New(&buf, false)
	if err := p.Text("SELECT 1;\nSELECT 2;"); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "SELECT 1;\nSELECT 2;\n" {
		t.Fatalf("output %q", got)
	}
	if err := p.Text("again"); !errors.Is(err, ErrSealed) {
		t.Fatalf("second Text = %v, want ErrSealed", err)
	}
	if err := New(&buf, true).Text("x"); err == nil {
		t.Fatal("Text in JSON mode must fail")
	}
	if err := New(failingWriter{}, false).Text("x"); err == nil {
		t.Fatal("want the writer's error")
	}
}
