// Command reliar runs and operates Reliar transactional outboxes: demo,
// migrate, relay, the operator commands (stats, dead, purge, doctor), the
// admin page (serve) and version. Run "reliar help" for the list.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/reliar/reliar/cmd/reliar/internal/cli"
	"github.com/reliar/reliar/cmd/reliar/internal/progress"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.Env{
		Stdout:         os.Stdout,
		Stderr:         os.Stderr,
		Getenv:         os.LookupEnv,
		StderrTerminal: progress.IsTerminal(os.Stderr),
	})
	stop()
	os.Exit(code)
}
