package outboxtest_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The dispatcher logs through slog.Default; keep test output readable.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}

// recordTB is an outboxtest.TB that records failures instead of stopping,
// so that tests can read the messages.
type recordTB struct {
	errors  []string
	failNow int
}

func (r *recordTB) Helper() {}

func (r *recordTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordTB) FailNow() { r.failNow++ }

// failed returns the one failure message, failing t when there is not
// exactly one or it was not followed by FailNow.
func (r *recordTB) failed(t *testing.T) string {
	t.Helper()
	if len(r.errors) != 1 || r.failNow != 1 {
		t.Fatalf("want 1 failure and 1 FailNow, got %d failures %q and %d FailNow", len(r.errors), r.errors, r.failNow)
	}
	return r.errors[0]
}

// passed fails t when r recorded a failure.
func (r *recordTB) passed(t *testing.T) {
	t.Helper()
	if len(r.errors) != 0 || r.failNow != 0 {
		t.Fatalf("want no failure, got %q (FailNow %d)", r.errors, r.failNow)
	}
}

// mustContain fails t unless msg contains every part.
func mustContain(t *testing.T, msg string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("failure message lacks %q:\n%s", p, msg)
		}
	}
}
