package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// git runs git in the repository at repo and returns its standard output.
func git(ctx context.Context, repo string, args ...string) ([]byte, error) {
	return gitEnv(ctx, repo, nil, args...)
}

// gitEnv is git with the environment env (the process's when nil).
func gitEnv(ctx context.Context, repo string, env []string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = repo
	cmd.Env = env
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// exportCommit writes the files of commit rev to dir, as `git archive`
// gives them (the same files the Go module proxy zips from a tag).
func exportCommit(ctx context.Context, repo, rev, dir string) error {
	out, err := git(ctx, repo, "-c", "core.autocrlf=input", "-c", "core.eol=lf", "archive", "--format=tar", rev)
	if err != nil {
		return err
	}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue // directories are made on demand; the module zip skips symlinks
		}
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(h.Name)), tr, os.FileMode(h.Mode)&0o755|0o644); err != nil {
			return err
		}
	}
}

// exportWorkTree writes the working tree's files that git tracks or would
// track (untracked but not ignored), as they are on disk, to dir.
func exportWorkTree(ctx context.Context, repo, dir string) error {
	out, err := git(ctx, repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	if err != nil {
		return err
	}
	for _, name := range strings.Split(string(out), "\x00") {
		if name == "" {
			continue
		}
		src := filepath.Join(repo, filepath.FromSlash(name))
		info, err := os.Lstat(src)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree
		}
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			continue
		}
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		err = writeFile(filepath.Join(dir, filepath.FromSlash(name)), f, info.Mode().Perm()|0o644)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func writeFile(name string, r io.Reader, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
