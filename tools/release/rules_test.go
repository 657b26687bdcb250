package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckVersion(t *testing.T) {
	for v, ok := range map[string]bool{
		"v0.1.0": true, "v1.2.3": true, "v0.1.0-check.17331.2": true,
		"0.1.0": false, "v0.1": false, "v2.0.0": false, "v0.1.0+meta": false, "": false,
	} {
		if err := checkVersion(v); (err == nil) != ok {
			t.Errorf("checkVersion(%q) = %v, want ok=%v", v, err, ok)
		}
	}
	var u usageError
	if err := run(t.Context(), []string{"--dry-run", t.TempDir(), "0.1.0"}, &strings.Builder{}); !errors.As(err, &u) {
		t.Errorf("run with a bad version: %v, want a usageError", err)
	}
}

func TestTagName(t *testing.T) {
	if got := tagName(".", "v0.1.0"); got != "v0.1.0" {
		t.Errorf("root tag %q", got)
	}
	if got := tagName("store/pgstore", "v0.1.0"); got != "store/pgstore/v0.1.0" {
		t.Errorf("sub-module tag %q", got)
	}
}

// go install pkg@version refuses any replace, so a released module must not
// replace a third-party dependency either.
func TestReleasedModuleCannotReplaceAThirdParty(t *testing.T) {
	isolate(t)
	repo := newFakeRepo(t)
	repo.write("store/x/go.mod", readFile(t, filepath.Join(repo.Dir, "store/x/go.mod"))+"\nreplace example.com/other => ../other\n")
	err := run(t.Context(), []string{"--repo", repo.Dir, "--dry-run", t.TempDir(), "v0.1.0-test.1"}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "replace example.com/other") {
		t.Errorf("dry run with a third-party replace: %v, want a refusal", err)
	}
}

// A module's go.sum holds the hash of every module it requires, so Reliar's
// modules cannot require each other in a cycle.
func TestOrderRefusesACycle(t *testing.T) {
	mods := []*mod{
		{Path: rootPath, Dir: ".", Released: true},
		{Path: rootPath + "/a", Dir: "a", Released: true, Requires: []string{rootPath + "/b"}},
		{Path: rootPath + "/b", Dir: "b", Released: true, Requires: []string{rootPath + "/a", rootPath}},
	}
	if _, err := order(mods); err == nil || !strings.Contains(err.Error(), "cycle") {
		t.Errorf("order of a cycle: %v", err)
	}
	mods[1].Requires = []string{rootPath}
	got, err := order(mods)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Dir != "." || got[1].Dir != "a" || got[2].Dir != "b" {
		t.Errorf("order = %s %s %s, want . a b", got[0].Dir, got[1].Dir, got[2].Dir)
	}
}

// A released module cannot require one that is never published.
func TestOrderRefusesAnUnreleasedRequirement(t *testing.T) {
	mods := []*mod{
		{Path: rootPath, Dir: ".", Released: true, Requires: []string{rootPath + "/chaos"}},
		{Path: rootPath + "/chaos", Dir: "chaos"},
	}
	if _, err := order(mods); err == nil || !strings.Contains(err.Error(), "not released") {
		t.Errorf("order: %v", err)
	}
}

// cleanModCache removes the given versions, read-only files included, and
// leaves every other version alone.
func TestCleanModCache(t *testing.T) {
	cache := t.TempDir()
	mk := func(name, content string) string {
		p := filepath.Join(cache, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o444); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := []string{
		mk("github.com/reliar/reliar@v0.1.0-check.1.1/go.mod", "module"),
		mk("github.com/reliar/reliar/store/pgstore@v0.1.0-check.1.1/doc.go", "package pgstore"),
		mk("cache/download/github.com/reliar/reliar/@v/v0.1.0-check.1.1.zip", "zip"),
		mk("cache/download/github.com/reliar/reliar/store/pgstore/@v/v0.1.0-check.1.1.ziphash", "h1:"),
	}
	kept := []string{
		mk("github.com/reliar/reliar@v0.1.0/go.mod", "module"),
		mk("github.com/reliar/reliar@v0.1.0-check.1.10/go.mod", "module"),
		mk("cache/download/github.com/reliar/reliar/@v/v0.1.0.zip", "zip"),
	}
	list := mk("cache/download/github.com/reliar/reliar/@v/list", "v0.1.0\nv0.1.0-check.1.1\n")
	for _, d := range []string{"github.com/reliar/reliar@v0.1.0-check.1.1", "github.com/reliar/reliar/store/pgstore@v0.1.0-check.1.1"} {
		if err := os.Chmod(filepath.Join(cache, d), 0o555); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(list, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cleanModCache(cache, []string{"v0.1.0-check.1.1"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range gone {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	for _, p := range kept {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	if got := readFile(t, list); got != "v0.1.0\n" {
		t.Errorf("list = %q, want v0.1.0 only", got)
	}
}
