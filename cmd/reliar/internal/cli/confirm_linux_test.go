//go:build linux

package cli

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
)

// openTerminal opens a pseudo-terminal and returns its controller side and
// the terminal a command reads from.
func openTerminal(t *testing.T) (ctl, tty *os.File) {
	t.Helper()
	ctl, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ctl.Close() })
	if err := unix.IoctlSetPointerInt(int(ctl.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ctl.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("name the pseudo-terminal: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the terminal: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return ctl, tty
}

// TestDeadConfirmOnTerminal answers the confirmation on a real terminal:
// "n" leaves every row alone and exits 1, "y" goes ahead.
func TestDeadConfirmOnTerminal(t *testing.T) {
	ctl, tty := openTerminal(t)
	stdin := os.Stdin
	os.Stdin = tty
	defer func() { os.Stdin = stdin }()

	tg := newSQLiteTarget(t)
	ids := seedDead(t, tg)
	tests := []struct {
		answer string
		args   []string
		code   int
		prompt string
		dead   float64
	}{
		{"n", []string{"dead", "purge", "--all-matching", "--type", "orders.placed"}, exitcode.Failure, `Purge every dead row of type "orders.placed"? [y/N] `, 7},
		{"", []string{"dead", "retry", ids[0], ids[1]}, exitcode.Failure, "Retry 2 dead rows? [y/N] ", 7},
		{"yes", []string{"dead", "purge", "--all-matching", "--tenant", "acme", "--before", "2999-01-01"}, exitcode.OK, `Purge every dead row of tenant "acme", dead before 2999-01-01T00:00:00Z? [y/N] `, 4},
		{"Y", []string{"dead", "retry", ids[3]}, exitcode.OK, "Retry 1 dead rows? [y/N] ", 3},
	}
	for _, tt := range tests {
		if _, err := ctl.WriteString(tt.answer + "\n"); err != nil {
			t.Fatal(err)
		}
		r := run(t, nil, tg.cmd(tt.args...)...)
		if r.code != tt.code || !strings.HasPrefix(r.stderr, tt.prompt) {
			t.Fatalf("%q to %v: code %d, stdout %q, stderr %q; want %d after the prompt %q", tt.answer, tt.args, r.code, r.stdout, r.stderr, tt.code, tt.prompt)
		}
		if tt.code != exitcode.OK && !strings.Contains(r.stderr, "not confirmed: nothing was done") {
			t.Fatalf("declined: stderr %q", r.stderr)
		}
		if st := statsOf(t, tg); st["dead"] != tt.dead {
			t.Fatalf("%q to %v: %v dead rows after, want %v", tt.answer, tt.args, st["dead"], tt.dead)
		}
	}
	// --yes does not ask.
	r := run(t, nil, tg.cmd("dead", "retry", "--yes", ids[4])...)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("--yes: code %d, stderr %q", r.code, r.stderr)
	}
}
