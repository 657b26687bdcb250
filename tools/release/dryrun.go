package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// dryRun writes the release tree to DIR/tree, the module proxy to DIR/proxy
// (or --proxy), the module list to DIR/modules.txt and the paths of the files
// it rewrote to DIR/changed.txt. It tags nothing and
// writes nothing to the repository.
func dryRun(ctx context.Context, cfg config, stdout io.Writer) error {
	tree := filepath.Join(cfg.DryRun, "tree")
	if entries, err := os.ReadDir(tree); err == nil && len(entries) > 0 {
		return usageError{fmt.Errorf("--dry-run: %s is not empty", tree)}
	}
	proxy := proxyDir(cfg.Proxy)
	if proxy == "" {
		proxy = proxyDir(filepath.Join(cfg.DryRun, "proxy"))
	}
	if err := os.MkdirAll(tree, 0o755); err != nil {
		return err
	}
	source := "the working tree"
	stamp := time.Now()
	if cfg.Rev == "" {
		if err := exportWorkTree(ctx, cfg.Repo, tree); err != nil {
			return err
		}
	} else {
		sha, when, err := resolve(ctx, cfg.Repo, cfg.Rev)
		if err != nil {
			return err
		}
		if err := exportCommit(ctx, cfg.Repo, sha, tree); err != nil {
			return err
		}
		source, stamp = cfg.Rev+" ("+sha[:12]+")", when
	}
	b, err := build(ctx, tree, proxy, cfg.Version, cfg.Modules, stamp)
	if cerr := forget(ctx, cfg.Version); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := writeModuleList(filepath.Join(cfg.DryRun, "modules.txt"), b, cfg.Version); err != nil {
		return err
	}
	slices.Sort(b.Changed)
	if err := os.WriteFile(filepath.Join(cfg.DryRun, "changed.txt"), []byte(strings.Join(b.Changed, "\n")+"\n"), 0o644); err != nil {
		return err
	}
	var tags []string
	for _, m := range b.Published {
		tags = append(tags, tagName(m.Dir, cfg.Version))
	}
	fmt.Fprintf(stdout, "release: dry run of %s from %s: %d modules in %s, tree in %s\n",
		cfg.Version, source, len(b.Published), proxy, tree)
	fmt.Fprintf(stdout, "release: %d go.mod and go.sum files rewritten (listed in %s)\n", len(b.Changed), filepath.Join(cfg.DryRun, "changed.txt"))
	fmt.Fprintf(stdout, "release: would tag %s\n", strings.Join(tags, " "))
	return nil
}

// forget removes what the go command put in the module cache while tidying
// the tree at version: the cache must not hold a version that is published
// again, nor pile up the check's versions.
func forget(ctx context.Context, version string) error {
	cache, err := modCache(ctx)
	if err != nil {
		return err
	}
	_, err = cleanModCache(cache, []string{version})
	return err
}

// resolve returns the full hash of rev's commit and its commit time.
func resolve(ctx context.Context, repo, rev string) (string, time.Time, error) {
	out, err := git(ctx, repo, "show", "-s", "--format=%H %cI", rev+"^{commit}")
	if err != nil {
		return "", time.Time{}, err
	}
	sha, when, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	t, err := time.Parse(time.RFC3339, when)
	return sha, t, err
}
