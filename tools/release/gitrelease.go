package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// release makes the release commit of cfg.Rev (HEAD by default) as a child
// of it on no branch, checks that each module zipped from that commit hashes
// as the go.sum files say, and tags it. It moves no branch and touches
// no working tree: the commit is built in a temporary index.
func release(ctx context.Context, cfg config, stdout io.Writer) error {
	rev := cfg.Rev
	if rev == "" {
		rev = "HEAD"
	}
	sha, stamp, err := resolve(ctx, cfg.Repo, rev)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "reliar-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	if err := exportCommit(ctx, cfg.Repo, sha, tree); err != nil {
		return err
	}
	// A failed earlier attempt at this version may have left its zips in
	// the module cache, which the go command would use instead of the new.
	if err := forget(ctx, cfg.Version); err != nil {
		return err
	}
	b, err := build(ctx, tree, proxyDir(filepath.Join(tmp, "proxy")), cfg.Version, nil, stamp)
	if cerr := forget(ctx, cfg.Version); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	var tags []string
	for _, m := range b.Published {
		tag := tagName(m.Dir, cfg.Version)
		if _, err := git(ctx, cfg.Repo, "rev-parse", "-q", "--verify", "refs/tags/"+tag); err == nil {
			return fmt.Errorf("tag %s exists already", tag)
		}
		tags = append(tags, tag)
	}
	commit, err := commitTree(ctx, cfg.Repo, sha, tree, b.Changed, filepath.Join(tmp, "index"), cfg.Version)
	if err != nil {
		return err
	}
	committed := filepath.Join(tmp, "committed")
	if err := exportCommit(ctx, cfg.Repo, commit, committed); err != nil {
		return err
	}
	for _, m := range b.Published {
		h, err := hashZip(committed, m, cfg.Version, filepath.Join(tmp, "check.zip"))
		if err != nil {
			return err
		}
		if h != b.Hashes[m.Path] {
			return fmt.Errorf("%s zipped from commit %s hashes %s, but the go.sum files record %s: no tag made", m.Path, commit[:12], h, b.Hashes[m.Path])
		}
	}
	for _, tag := range tags {
		if _, err := git(ctx, cfg.Repo, "tag", "-a", "-m", "Reliar "+cfg.Version, tag, commit); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "release: commit %s (child of %s, on no branch) tagged %s\n", commit[:12], sha[:12], strings.Join(tags, " "))
	fmt.Fprintf(stdout, "release: push with: git push --atomic origin %s\n", strings.Join(tags, " "))
	return nil
}

// commitTree writes the commit whose tree is parent's with the changed files
// taken from dir, using a temporary index so that no working tree or branch
// moves.
func commitTree(ctx context.Context, repo, parent, dir string, changed []string, index, version string) (string, error) {
	env := append(os.Environ(), "GIT_INDEX_FILE="+index)
	gitIndex := func(args ...string) (string, error) {
		out, err := gitEnv(ctx, repo, env, args...)
		return strings.TrimSpace(string(out)), err
	}
	if _, err := gitIndex("read-tree", parent); err != nil {
		return "", err
	}
	for _, p := range changed {
		blob, err := gitIndex("hash-object", "-w", "--path", p, filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return "", err
		}
		if _, err := gitIndex("update-index", "--add", "--cacheinfo", "100644,"+blob+","+p); err != nil {
			return "", err
		}
	}
	tree, err := gitIndex("write-tree")
	if err != nil {
		return "", err
	}
	msg := "Release " + version + "\n\nEvery go.mod without replace directives, every Reliar module required at\n" +
		version + ", and go.sum files holding the hashes of the released modules.\n" +
		"This commit is tagged and never merged: main keeps its replace lines.\n"
	return gitIndex("commit-tree", tree, "-p", parent, "-m", msg)
}

// hashZip zips module m from tree, a commit's files as git archive gives
// them, the way the go command zips a module from a tag (nested modules left
// out, the repository's LICENSE added when the module's directory has none),
// and returns the h1: hash of the zip.
func hashZip(tree string, m *mod, version, scratch string) (string, error) {
	files, err := moduleFiles(tree, m.Dir)
	if err != nil {
		return "", err
	}
	f, err := os.Create(scratch)
	if err != nil {
		return "", err
	}
	defer os.Remove(scratch)
	if err := modzip.Create(f, module.Version{Path: m.Path, Version: version}, files); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	return dirhash.HashZip(scratch, dirhash.Hash1)
}
