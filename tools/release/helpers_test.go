package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeRepo is a git repository laid out like Reliar's, small enough to
// release in a test: the root module, a store module that requires it, a
// command module that requires both (each sub-module with the development
// replace lines), a chaos module that is never released, and a go.work.
type fakeRepo struct {
	t   *testing.T
	Dir string
}

func newFakeRepo(t *testing.T) *fakeRepo {
	t.Helper()
	r := &fakeRepo{t: t, Dir: t.TempDir()}
	r.write("go.work", "go 1.26.0\n\nuse (\n\t.\n\t./chaos\n\t./cmd/tool\n\t./store/x\n)\n")
	r.write("go.mod", "module github.com/reliar/reliar\n\ngo 1.26.0\n")
	r.write("LICENSE", "the license\n")
	r.write("reliar.go", "// Package reliar is the root.\npackage reliar\n\n// Name is the library's name.\nconst Name = \"reliar\"\n")
	r.write("store/x/go.mod", "module github.com/reliar/reliar/store/x\n\ngo 1.26.0\n\nrequire github.com/reliar/reliar v0.0.0\n\nreplace github.com/reliar/reliar => ../..\n")
	r.write("store/x/x.go", "// Package x is a store.\npackage x\n\nimport \"github.com/reliar/reliar\"\n\n// Name names the store.\nfunc Name() string { return reliar.Name + \"/x\" }\n")
	r.write("cmd/tool/go.mod", "module github.com/reliar/reliar/cmd/tool\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/reliar/reliar v0.0.0\n\tgithub.com/reliar/reliar/store/x v0.0.0\n)\n\n"+
		"replace (\n\tgithub.com/reliar/reliar => ../..\n\tgithub.com/reliar/reliar/store/x => ../../store/x\n)\n")
	r.write("cmd/tool/main.go", "// Command tool prints the store's name.\npackage main\n\nimport (\n\t\"fmt\"\n\n\t\"github.com/reliar/reliar/store/x\"\n)\n\nfunc main() { fmt.Println(x.Name()) }\n")
	r.write("chaos/go.mod", "module github.com/reliar/reliar/chaos\n\ngo 1.26.0\n\nrequire github.com/reliar/reliar/store/x v0.0.0\n\nrequire github.com/reliar/reliar v0.0.0 // indirect\n\n"+
		"replace (\n\tgithub.com/reliar/reliar => ..\n\tgithub.com/reliar/reliar/store/x => ../store/x\n)\n")
	r.write("chaos/chaos.go", "// Package chaos is never released.\npackage chaos\n\nimport _ \"github.com/reliar/reliar/store/x\"\n")
	r.git("init", "-q", "-b", "main")
	r.git("add", "-A")
	r.git("commit", "-q", "-m", "the tree")
	return r
}

func (r *fakeRepo) write(name, content string) {
	r.t.Helper()
	p := filepath.Join(r.Dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *fakeRepo) git(args ...string) string {
	r.t.Helper()
	out, err := git(r.t.Context(), r.Dir, args...)
	if err != nil {
		r.t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// isolate gives the test its own module cache and git identity, and keeps
// the go command off the network: the fake modules need nothing else.
func isolate(t *testing.T) string {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("GOMODCACHE", cache)
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-modcacherw")
	t.Setenv("GOWORK", "off")
	t.Setenv("GIT_AUTHOR_NAME", "Release Test")
	t.Setenv("GIT_AUTHOR_EMAIL", "release@example.com")
	t.Setenv("GIT_COMMITTER_NAME", "Release Test")
	t.Setenv("GIT_COMMITTER_EMAIL", "release@example.com")
	return cache
}

// userGo runs the go command in dir as a user of the proxy would.
func userGo(t *testing.T, dir, proxy string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=file://"+filepath.ToSlash(proxy)+",off", "GONOSUMDB=github.com/reliar",
		"GOFLAGS=-modcacherw", "GOBIN="+filepath.Join(dir, "bin"))
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
