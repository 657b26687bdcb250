package natspub

import (
	"strings"
	"testing"

	"github.com/reliar/reliar"
)

// The checks of runes that validSubject and validHeader replaced; the byte
// checks must refuse exactly the same strings.
func refSubject(s string) bool {
	if s == "" {
		return false
	}
	for tok := range strings.SplitSeq(s, ".") {
		if tok == "" || tok == "*" || tok == ">" || strings.ContainsFunc(tok, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return false
		}
	}
	return true
}

func refHeader(name, value string) bool {
	if name == "" || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == ':' || r == 0x7f }) {
		return false
	}
	return !strings.ContainsFunc(value, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f })
}

var subjectSeeds = []string{"", "a", "a.b", "a..b", ".a", "a.", "*", "a.*", "a.>", ">", "a.>b", "a b", "a\tb", "a\x7fb", "zürich.orders", "\xff.a", "a.\x00"}

var headerSeeds = [][2]string{{"", "v"}, {"k", "v"}, {"k:", "v"}, {"k k", "v"}, {"k", "a\tb"}, {"k", "a\nb"}, {"k", "a\x7f"}, {"ké", "vé"}, {"k", "\xff\xfe"}, {"\x00", ""}}

func TestValidSubjectMatchesRuneCheck(t *testing.T) {
	for _, s := range subjectSeeds {
		if got, want := validSubject(s) == nil, refSubject(s); got != want {
			t.Errorf("validSubject(%q) accepts = %v, want %v", s, got, want)
		}
	}
}

func TestValidHeaderMatchesRuneCheck(t *testing.T) {
	for _, h := range headerSeeds {
		if got, want := validHeader(h[0], h[1]) == nil, refHeader(h[0], h[1]); got != want {
			t.Errorf("validHeader(%q, %q) accepts = %v, want %v", h[0], h[1], got, want)
		}
	}
}

func FuzzValidSubject(f *testing.F) {
	for _, s := range subjectSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validSubject(s) == nil, refSubject(s); got != want {
			t.Fatalf("validSubject(%q) accepts = %v, want %v", s, got, want)
		}
	})
}

func FuzzValidHeader(f *testing.F) {
	for _, h := range headerSeeds {
		f.Add(h[0], h[1])
	}
	f.Fuzz(func(t *testing.T, name, value string) {
		if got, want := validHeader(name, value) == nil, refHeader(name, value); got != want {
			t.Fatalf("validHeader(%q, %q) accepts = %v, want %v", name, value, got, want)
		}
	})
}

// BenchmarkMessage is building one NATS message: subject, checks, headers.
func BenchmarkMessage(b *testing.B) {
	opts, err := buildOptions(nil)
	if err != nil {
		b.Fatal(err)
	}
	p := &Publisher{opts: opts}
	env := &reliar.SerializedEnvelope{ID: reliar.NewMessageID(), MessageType: "orders.placed", ContentType: "application/json",
		Payload: []byte(`{"order_id":"o-1"}`), Sequence: 42, Headers: map[string]string{"x-request": "abc"}}
	env.Metadata.Correlation.ConversationID = env.ID
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.message(env); err != nil {
			b.Fatal(err)
		}
	}
}
