package pgstore

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Enqueue takes only a transaction: passing a pool or a connection, which
// would autocommit the message apart from the business change, does not
// compile. The control program, which passes a pgx.Tx, does.
func TestEnqueueAcceptsOnlyTransactions(t *testing.T) {
	t.Parallel()
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", os.DevNull, "./testdata/withtx").CombinedOutput(); err != nil {
		t.Fatalf("control program with a pgx.Tx does not compile: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(t.Context(), "go", "build", "-o", os.DevNull, "./testdata/notx").CombinedOutput()
	if err == nil {
		t.Fatal("passing a pool or a connection to Enqueue compiled")
	}
	for _, want := range []string{
		"*pgxpool.Pool does not implement pgx.Tx",
		"*pgx.Conn does not implement pgx.Tx",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("compiler output lacks %q:\n%s", want, out)
		}
	}
}
