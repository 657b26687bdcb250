package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is bad input on the command line.
type usageError struct{ error }

// config is what the command line asks for.
type config struct {
	Version string
	Repo    string   // repository root
	Rev     string   // commit to release; "" in a dry run means the working tree
	DryRun  string   // directory of the dry run; "" for a real release
	Proxy   string   // proxy directory; DryRun/proxy by default
	Modules []string // directories of the modules to publish, with what they require; all when empty
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stdout)
	var cfg config
	var modules string
	var clean bool
	fs.StringVar(&cfg.DryRun, "dry-run", "", "write the release tree, module proxy and module list to `DIR` and tag nothing")
	fs.StringVar(&cfg.Rev, "rev", "", "release this commit (default HEAD; a dry run takes the working tree by default)")
	fs.StringVar(&cfg.Proxy, "proxy", "", "write the module zips into this proxy `DIR`, adding to it (dry run only; default DIR/proxy)")
	fs.StringVar(&modules, "modules", "", "comma-separated module directories to publish with the Reliar modules they require (dry run only; default all)")
	fs.StringVar(&cfg.Repo, "repo", "", "repository root (default: the one holding the current directory)")
	fs.BoolVar(&clean, "clean-cache", false, "remove the Reliar modules at each VERSION from the module cache, and do nothing else")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: release [--rev REV] VERSION\n       release --dry-run DIR [--rev REV] [--proxy DIR] [--modules DIRS] VERSION\n       release --clean-cache VERSION...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if clean {
		return cleanCache(ctx, fs.Args(), stdout)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError{errors.New("want exactly one VERSION argument")}
	}
	cfg.Version = fs.Arg(0)
	if err := checkVersion(cfg.Version); err != nil {
		return usageError{err}
	}
	if modules != "" {
		cfg.Modules = strings.Split(modules, ",")
	}
	if cfg.DryRun == "" && (cfg.Proxy != "" || len(cfg.Modules) > 0) {
		return usageError{errors.New("--proxy and --modules go only with --dry-run")}
	}
	if cfg.Repo == "" {
		out, err := git(ctx, ".", "rev-parse", "--show-toplevel")
		if err != nil {
			return err
		}
		cfg.Repo = strings.TrimSpace(string(out))
	}
	if cfg.DryRun == "" {
		return release(ctx, cfg, stdout)
	}
	return dryRun(ctx, cfg, stdout)
}

// cleanCache is --clean-cache: it removes the Reliar modules at versions
// from the module cache.
func cleanCache(ctx context.Context, versions []string, stdout io.Writer) error {
	if len(versions) == 0 {
		return usageError{errors.New("--clean-cache: want one VERSION or more")}
	}
	for _, v := range versions {
		if err := checkVersion(v); err != nil {
			return usageError{err}
		}
	}
	cache, err := modCache(ctx)
	if err != nil {
		return err
	}
	n, err := cleanModCache(cache, versions)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "release: removed %d files and directories of %s from the module cache\n", n, strings.Join(versions, " "))
	return nil
}
