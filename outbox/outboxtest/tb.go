package outboxtest

import "errors"

// TB is the part of testing.TB that the helpers of this package and of the
// stores' test kits call; *testing.T and *testing.B satisfy it. It is an
// interface so that a test can hand in its own recorder and check the
// failure messages.
//
// A helper that fails calls Errorf with the whole message, then FailNow,
// then returns at once: with a TB whose FailNow does not stop the goroutine
// (as testing.T's does), its result is then the zero value.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	FailNow()
}

// fail reports a failure to t and stops the test.
func fail(t TB, format string, args ...any) {
	t.Helper()
	t.Errorf(format, args...)
	t.FailNow()
}

// errDispatcherStopped: the dispatcher's Run returned before the outbox was
// drained, without an error.
var errDispatcherStopped = errors.New("the dispatcher stopped before the outbox was drained")
