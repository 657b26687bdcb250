// Package cli is the reliar command tree. Every command lives in a file of
// its own and is registered with one line in commands.go; App holds what
// they share: the logger, stdout's result printer, the progress bar, the
// database URL parser, and the exit-status rules. See ../README.md.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/reliar/reliar/cmd/reliar/internal/config"
	"github.com/reliar/reliar/cmd/reliar/internal/exitcode"
	"github.com/reliar/reliar/cmd/reliar/internal/logging"
	"github.com/reliar/reliar/cmd/reliar/internal/output"
	"github.com/reliar/reliar/cmd/reliar/internal/progress"
	"github.com/reliar/reliar/cmd/reliar/internal/redact"
	"github.com/reliar/reliar/cmd/reliar/internal/storeurl"
)

// Env is what one run of the CLI sees of its process.
type Env struct {
	// Stdout receives the command's result, and nothing else.
	Stdout io.Writer
	// Stderr receives logs, errors and the progress bar, secrets redacted.
	Stderr io.Writer
	// Getenv looks up an environment variable (os.LookupEnv).
	Getenv func(string) (string, bool)
	// StderrTerminal says whether Stderr is a terminal, where a progress
	// bar may be drawn.
	StderrTerminal bool
}

// App is shared by the commands of one run.
type App struct {
	env Env
	// red knows the secrets of the run's URLs and secret flags.
	red *redact.Redactor
	// stderr is env.Stderr through red, for text that is not a log record.
	stderr io.Writer
	log    *slog.Logger

	// Global flags.
	configPath string
	logLevel   string
	logFormat  string
}

// Run runs the CLI with args (without the program name) and returns the
// process's exit status: 0 on success, 1 when the command failed, 2 on bad
// input. Errors are written to env.Stderr as one line, secrets redacted.
func Run(ctx context.Context, args []string, env Env) int {
	if env.Getenv == nil {
		env.Getenv = func(string) (string, bool) { return "", false }
	}
	red := redact.NewRedactor()
	app := &App{env: env, red: red, stderr: red.Writer(env.Stderr)}
	app.log, _ = logging.New(env.Stderr, logging.DefaultLevel, "text", red)
	root := app.rootCommand()
	root.SetArgs(args)
	root.SetOut(env.Stdout)
	root.SetErr(app.stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitcode.OK
	}
	code := exitcode.Code(err, exitcode.Usage)
	msg := "reliar: " + oneLine(err.Error())
	if code == exitcode.Usage && cmd != nil {
		msg += fmt.Sprintf(" (see '%s --help')", cmd.CommandPath())
	}
	app.printError(msg, code)
	return code
}

// printError writes the run's one error line: as a JSON record with
// --log-format json, so that every line of stderr parses, else as text.
func (a *App) printError(msg string, code int) {
	if logging.IsJSON(a.logFormat) {
		if log, err := logging.New(a.env.Stderr, "error", "json", a.red); err == nil {
			log.Error(msg, "exit_status", code)
			return
		}
	}
	fmt.Fprintln(a.stderr, msg)
}

// oneLine folds a multi-line error text into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// rootCommand builds the command tree.
func (a *App) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "reliar",
		Short: "Run and operate Reliar transactional outboxes",
		Long: `reliar runs and operates Reliar transactional outboxes.

Every flag can also be set with a RELIAR_* environment variable (--database-url
is RELIAR_DATABASE_URL) or in a YAML file given with --config (or RELIAR_CONFIG).
The file's top level holds only the shared keys (database-url, schema, log-level,
log-format); every other key sits in the section of its command:

  database-url: postgres://relay@db:5432/shop
  relay:
    dispatchers: 2
  purge:
    dead-retention: 30d

A key no command reads where it stands is an error (exit status 2) that names it
and the closest valid key. --yes and --force are taken from the command line
only. Flags win over the environment, which wins over the file.

Zero or unset means the default in every flag, variable and key; a retention that
keeps rows for ever is spelt "forever", a switch that is off "off".

Results go to stdout; logs, errors and progress go to stderr. Exit status: 0 on
success, 1 when the command failed, 2 on bad input.`,
		Example: `  # Run the whole outbox path on SQLite and an embedded NATS server
  reliar demo

  # Create or upgrade the outbox table in PostgreSQL
  reliar migrate --database-url postgres://app@db:5432/orders`,
		SilenceErrors:     true,
		SilenceUsage:      true,
		PersistentPreRunE: a.prepare,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	pf := root.PersistentFlags()
	pf.StringVar(&a.configPath, "config", "", "YAML configuration file (env RELIAR_CONFIG)")
	pf.StringVar(&a.logLevel, "log-level", logging.DefaultLevel, "log level on stderr: debug, info, warn or error")
	pf.StringVar(&a.logFormat, "log-format", "text", "log format on stderr: text or json")
	root.SetFlagErrorFunc(flagError)
	root.SetHelpCommand(helpCommand(root))
	for _, newCommand := range commands {
		root.AddCommand(newCommand(a))
	}
	return root
}

// helpCommand replaces cobra's help command with one that has an example.
func helpCommand(root *cobra.Command) *cobra.Command {
	return &cobra.Command{
		Use:     "help [command]",
		Short:   "Show the help of a command",
		Example: "  reliar help migrate",
		RunE: func(cmd *cobra.Command, args []string) error {
			target, _, err := root.Find(args)
			if err != nil || target == nil {
				return exitcode.UsageError(fmt.Errorf("unknown help topic %q", strings.Join(args, " ")))
			}
			return target.Help()
		},
	}
}

// prepare fills unset flags from the environment and the config file, then
// builds the logger. It runs before every command.
func (a *App) prepare(cmd *cobra.Command, _ []string) error {
	path := a.configPath
	if path == "" {
		path, _ = a.env.Getenv(config.EnvName("config"))
	}
	file, err := config.Load(path)
	if err != nil {
		return exitcode.UsageError(err)
	}
	if err := file.Check(configLayout(cmd.Root())); err != nil {
		return exitcode.UsageError(err)
	}
	section := strings.Fields(cmd.CommandPath())[1:]
	// --yes and --force confirm a destructive command; they count only when
	// typed on the command line, never from a variable or a config file.
	sources, err := config.Apply(cmd.Flags(), section, a.env.Getenv, file, commandLineOnly...)
	if err != nil {
		return exitcode.UsageError(err)
	}
	a.learnSecrets(cmd)
	log, err := a.newLogger(a.logLevel)
	if err != nil {
		return exitcode.UsageError(err)
	}
	a.log = log
	for name, from := range sources {
		if from != config.FromDefault {
			log.Debug("flag set", "flag", name, "from", string(from))
		}
	}
	return nil
}

// Log returns the logger of the run: records on stderr, secrets redacted.
func (a *App) Log() *slog.Logger { return a.log }

// newLogger returns a logger on stderr at level, in the run's format, its
// records redacted before they are formatted.
func (a *App) newLogger(level string) (*slog.Logger, error) {
	return logging.New(a.env.Stderr, level, a.logFormat, a.red)
}

// secretFlags are the flags whose values are secrets themselves.
var secretFlags = []string{"token", "webhook-secret"}

// learnSecrets tells the redactor the secrets of every URL flag (--*-url,
// --broker) and secret flag of cmd, wherever their values came from.
func (a *App) learnSecrets(cmd *cobra.Command) {
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		var values []string
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			values = sv.GetSlice()
		} else {
			values = []string{fl.Value.String()}
		}
		switch {
		case strings.HasSuffix(fl.Name, "url") || fl.Name == "broker":
			for _, v := range values {
				a.red.AddURL(v)
			}
		case slices.Contains(secretFlags, fl.Name):
			a.red.Add(values...)
		}
	})
}

// Printer returns the printer of a command's result on stdout.
func (a *App) Printer(cmd *cobra.Command, asJSON bool) *output.Printer {
	return output.New(cmd.OutOrStdout(), asJSON)
}

// Progress returns a progress bar of total steps on stderr, drawn only when
// stderr is a terminal.
func (a *App) Progress(total int, desc string) progress.Bar {
	return progress.New(a.env.StderrTerminal, total, desc, a.stderr)
}

// Location parses a database URL given with --database-url; an empty or bad
// URL is bad input (exit status 2).
func (a *App) Location(raw string) (storeurl.Location, error) {
	if raw == "" {
		return storeurl.Location{}, exitcode.UsageError(errors.New("--database-url is required (or RELIAR_DATABASE_URL)"))
	}
	loc, err := storeurl.Parse(raw)
	return loc, classify(err)
}

// run adapts a command's body to cobra: its error is classified (bad input
// exits 2, anything else 1).
func (a *App) run(body func(ctx context.Context, cmd *cobra.Command) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		return classify(body(cmd.Context(), cmd))
	}
}

// badInput lists the sentinel errors that mean bad input.
var badInput = []error{storeurl.ErrBadURL, storeurl.ErrBadOption, config.ErrInvalid}

// classify gives err its exit status: 2 for bad input, else 1, unless it
// already has one.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var coded *exitcode.Error
	if errors.As(err, &coded) {
		return err
	}
	for _, bad := range badInput {
		if errors.Is(err, bad) {
			return exitcode.UsageError(err)
		}
	}
	return exitcode.FailureError(err)
}
