package main

import (
	"strings"
	"testing"
)

// A release makes one commit on no branch, a child of HEAD whose go.mod
// files have no replace, and tags it for every released module; main, the
// index and the working tree do not move.
func TestReleaseTagsACommitOnNoBranch(t *testing.T) {
	isolate(t)
	repo := newFakeRepo(t)
	head := repo.git("rev-parse", "HEAD")
	var stdout strings.Builder
	if err := run(t.Context(), []string{"--repo", repo.Dir, "v0.1.0"}, &stdout); err != nil {
		t.Fatal(err)
	}
	if got := repo.git("rev-parse", "main"); got != head {
		t.Errorf("main moved from %s to %s", head, got)
	}
	if st := repo.git("status", "--porcelain"); st != "" {
		t.Errorf("the working tree changed:\n%s", st)
	}
	if got := repo.git("tag", "--list"); got != "cmd/tool/v0.1.0\nstore/x/v0.1.0\nv0.1.0" {
		t.Errorf("tags = %q, want the root's, store/x's and cmd/tool's, none for chaos", got)
	}
	commit := repo.git("rev-parse", "v0.1.0^{commit}")
	for _, tag := range []string{"store/x/v0.1.0", "cmd/tool/v0.1.0"} {
		if got := repo.git("rev-parse", tag+"^{commit}"); got != commit {
			t.Errorf("%s tags %s, want the release commit %s", tag, got, commit)
		}
	}
	if got := repo.git("rev-parse", commit+"^"); got != head {
		t.Errorf("the release commit's parent is %s, want HEAD %s", got, head)
	}
	if got := repo.git("branch", "--contains", commit); got != "" {
		t.Errorf("a branch holds the release commit: %s", got)
	}
	gomod := repo.git("show", commit+":cmd/tool/go.mod")
	if strings.Contains(gomod, "replace") || strings.Count(gomod, " v0.1.0") != 2 {
		t.Errorf("the release commit's cmd/tool/go.mod:\n%s", gomod)
	}
	sum := repo.git("show", commit+":cmd/tool/go.sum")
	for _, want := range []string{"github.com/reliar/reliar v0.1.0 h1:", "github.com/reliar/reliar/store/x v0.1.0/go.mod h1:"} {
		if !strings.Contains(sum, want) {
			t.Errorf("the release commit's cmd/tool/go.sum lacks %q:\n%s", want, sum)
		}
	}
	if changed := repo.git("diff", "--name-only", head, commit); changed != "chaos/go.mod\nchaos/go.sum\ncmd/tool/go.mod\ncmd/tool/go.sum\nstore/x/go.mod\nstore/x/go.sum" {
		t.Errorf("the release commit changed %q, want only go.mod and go.sum files", changed)
	}
	if !strings.Contains(stdout.String(), "git push --atomic origin v0.1.0 store/x/v0.1.0 cmd/tool/v0.1.0") {
		t.Errorf("the release did not say how to push: %q", stdout.String())
	}

	err := run(t.Context(), []string{"--repo", repo.Dir, "v0.1.0"}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "exists already") {
		t.Errorf("a second release of v0.1.0: %v, want a refusal", err)
	}
}

// The release check pairs the stores of the last tag with a newer root:
// a dry run of a tagged release commit, whose go.mod files no longer have
// replace lines, at a check version.
func TestDryRunOfATag(t *testing.T) {
	isolate(t)
	repo := newFakeRepo(t)
	if err := run(t.Context(), []string{"--repo", repo.Dir, "v0.1.0"}, &strings.Builder{}); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stdout strings.Builder
	if err := run(t.Context(), []string{"--repo", repo.Dir, "--dry-run", out, "--rev", "v0.1.0", "--modules", "store/x", "v0.1.0-check.1.1"}, &stdout); err != nil {
		t.Fatal(err)
	}
	gomod := readFile(t, out+"/tree/store/x/go.mod")
	if !strings.Contains(gomod, "github.com/reliar/reliar v0.1.0-check.1.1") {
		t.Errorf("store/x/go.mod of the tag's dry run:\n%s", gomod)
	}
	if !strings.Contains(stdout.String(), "from v0.1.0 (") {
		t.Errorf("the dry run did not name its source: %q", stdout.String())
	}
}
