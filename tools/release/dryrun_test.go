package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A user module outside the repository gets the dry-run release through the
// go command: go get of a sub-module, and go install of a command, which
// refuses replace directives and builds with the command module's go.sum.
func TestDryRunIsServedToTheGoCommand(t *testing.T) {
	cache := isolate(t)
	repo := newFakeRepo(t)
	out := t.TempDir()
	const v = "v0.1.0-test.1"
	var stdout strings.Builder
	if err := run(t.Context(), []string{"--repo", repo.Dir, "--dry-run", out, v}, &stdout); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "would tag "+v+" store/x/"+v+" cmd/tool/"+v+"\n") {
		t.Errorf("dry run said %q, want the tags in dependency order and none for chaos", stdout.String())
	}

	tree := filepath.Join(out, "tree")
	for _, m := range []string{"store/x", "cmd/tool", "chaos"} {
		gomod := readFile(t, filepath.Join(tree, m, "go.mod"))
		if strings.Contains(gomod, "replace") || strings.Contains(gomod, "v0.0.0") {
			t.Errorf("%s/go.mod of the release tree keeps its development form:\n%s", m, gomod)
		}
	}
	if got := readFile(t, filepath.Join(repo.Dir, "store/x/go.mod")); !strings.Contains(got, "replace") {
		t.Errorf("the dry run changed the repository's store/x/go.mod:\n%s", got)
	}
	list := readFile(t, filepath.Join(out, "modules.txt"))
	if n := strings.Count(list, "\n"); n != 3 {
		t.Errorf("modules.txt lists %d modules, want 3 (chaos is not released):\n%s", n, list)
	}
	// go.sum of the command holds the hashes of the zips that were published.
	sum := readFile(t, filepath.Join(tree, "cmd/tool/go.sum"))
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		f := strings.Fields(line)
		if f[1] == "cmd/tool" {
			continue
		}
		if want := f[0] + " " + v + " " + f[3]; !strings.Contains(sum, want) {
			t.Errorf("cmd/tool/go.sum lacks %q:\n%s", want, sum)
		}
	}

	proxy := filepath.Join(out, "proxy")
	user := t.TempDir()
	userGo(t, user, proxy, "mod", "init", "example.com/user")
	userGo(t, user, proxy, "get", "github.com/reliar/reliar/store/x@"+v)
	if err := os.WriteFile(filepath.Join(user, "main.go"), []byte("package main\n\nimport \"github.com/reliar/reliar/store/x\"\n\nfunc main() { println(x.Name()) }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	userGo(t, user, proxy, "build", "./...")
	if got := userGo(t, user, proxy, "list", "-m", "github.com/reliar/reliar"); strings.TrimSpace(got) != "github.com/reliar/reliar "+v {
		t.Errorf("the root module resolved to %q, want %s", got, v)
	}
	// The sub-module's zip carries the repository's LICENSE, as the go
	// command's zip of a tag does.
	license := filepath.Join(cache, "github.com/reliar/reliar/store/x@"+v, "LICENSE")
	if got := readFile(t, license); got != "the license\n" {
		t.Errorf("store/x's zip has LICENSE %q, want the repository's", got)
	}

	userGo(t, user, proxy, "install", "github.com/reliar/reliar/cmd/tool@"+v)
	if _, err := os.Stat(filepath.Join(user, "bin", "tool")); err != nil {
		t.Errorf("go install left no binary: %v", err)
	}
}

// A dry run leaves nothing of its version in the module cache: the go
// command never re-reads a version it holds.
func TestDryRunForgetsItsVersion(t *testing.T) {
	cache := isolate(t)
	repo := newFakeRepo(t)
	const v = "v0.1.0-test.2"
	if err := run(t.Context(), []string{"--repo", repo.Dir, "--dry-run", t.TempDir(), v}, &strings.Builder{}); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(cache, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), v) {
			t.Errorf("the module cache still holds %s", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// --modules publishes the named modules and the Reliar modules they require.
func TestDryRunOfSomeModules(t *testing.T) {
	isolate(t)
	repo := newFakeRepo(t)
	out := t.TempDir()
	if err := run(t.Context(), []string{"--repo", repo.Dir, "--dry-run", out, "--modules", "store/x", "v0.1.0-test.3"}, &strings.Builder{}); err != nil {
		t.Fatal(err)
	}
	list := readFile(t, filepath.Join(out, "modules.txt"))
	if !strings.HasPrefix(list, "github.com/reliar/reliar . ") || !strings.Contains(list, "\ngithub.com/reliar/reliar/store/x store/x ") || strings.Contains(list, "cmd/tool") {
		t.Errorf("modules.txt = %q, want the root and store/x only", list)
	}
}
