package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/module"
)

// cleanModCache removes every Reliar module at each of versions from the
// module cache at cache (GOMODCACHE): the extracted directories, the
// downloaded .info, .mod, .zip, .ziphash and .lock files, and the versions'
// lines in the list files. The go command never re-reads a version it holds,
// so a version must be gone before it is published again, and the check's
// unique versions must not pile up. Extracted files are read-only: each
// directory is made writable before its removal.
func cleanModCache(cache string, versions []string) (int, error) {
	ep, err := module.EscapePath(rootPath)
	if err != nil {
		return 0, err
	}
	// The root module's directory holds the sub-modules' directories, so
	// walk from the owner's directory: github.com/reliar.
	owner := filepath.Dir(filepath.Join(cache, filepath.FromSlash(ep)))
	var suffixes []string
	for _, v := range versions {
		ev, err := module.EscapeVersion(v)
		if err != nil {
			return 0, err
		}
		suffixes = append(suffixes, "@"+ev)
	}
	removed := 0
	var extracted []string
	err = filepath.WalkDir(owner, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !d.IsDir() || !strings.Contains(d.Name(), "@") {
			return nil
		}
		if slices.ContainsFunc(suffixes, func(s string) bool { return strings.HasSuffix(d.Name(), s) }) {
			extracted = append(extracted, p)
		}
		return filepath.SkipDir // another version's files
	})
	if err != nil {
		return 0, err
	}
	for _, p := range extracted {
		if err := removeReadOnly(p); err != nil {
			return removed, err
		}
		removed++
	}
	download := filepath.Join(cache, "cache", "download", filepath.FromSlash(ep))
	err = filepath.WalkDir(download, func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() || filepath.Base(filepath.Dir(p)) != "@v" {
			return err
		}
		name := d.Name()
		if name == "list" {
			return dropFromList(p, versions)
		}
		for _, v := range versions {
			ev, _ := module.EscapeVersion(v)
			if strings.TrimSuffix(name, filepath.Ext(name)) == ev {
				if err := os.Remove(p); err != nil {
					return err
				}
				removed++
			}
		}
		return nil
	})
	return removed, err
}

// removeReadOnly removes the tree at p, making its directories writable first.
func removeReadOnly(p string) error {
	err := filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chmod(q, 0o755)
		}
		return err
	})
	if err != nil {
		return err
	}
	return os.RemoveAll(p)
}

// dropFromList removes versions from a module cache list file.
func dropFromList(file string, versions []string) error {
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var keep []string
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" && !slices.Contains(versions, strings.TrimSpace(line)) {
			keep = append(keep, line)
		}
	}
	out := strings.Join(keep, "\n")
	if len(keep) > 0 {
		out += "\n"
	}
	if out == string(data) {
		return nil
	}
	return os.WriteFile(file, []byte(out), 0o644)
}
