// Package benchcmd is what the bench commands share around their run
// function: the usage error, and a main that runs the command under a
// context cancelled by SIGINT or SIGTERM and turns its error into an exit
// code.
package benchcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// ErrUsage marks bad command-line input: the command exits 2.
var ErrUsage = errors.New("usage")

// Run is a command with its streams as arguments, so that tests can run it.
type Run func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// Main runs run with the process's arguments and streams, under a context
// that SIGINT and SIGTERM cancel, and exits: 0 on success or -h, 2 on an
// error matching ErrUsage, 1 on any other, the error printed to stderr
// after the command's name.
func Main(name string, run Run) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(name, err, os.Stderr))
}

// exitCode prints err, if it is worth printing, and returns the exit code
// for it.
func exitCode(name string, err error, stderr io.Writer) int {
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, ErrUsage):
		fmt.Fprintln(stderr, name+":", err)
		return 2
	default:
		fmt.Fprintln(stderr, name+":", err)
		return 1
	}
}
