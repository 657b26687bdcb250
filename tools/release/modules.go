package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/mod/modfile"
)

// rootPath is the root module's path; every Reliar module's path starts with it.
const rootPath = "github.com/reliar/reliar"

// unreleased names the go.work modules that are never tagged: chaos is the
// fault-injection suite and deploy the tests of the dashboard, alert rules,
// image and chart, not an API. Modules outside go.work (bench, tools) are
// never released either.
var unreleased = map[string]bool{"chaos": true, "deploy": true}

// mod is one Go module of the tree.
type mod struct {
	Path     string   // module path
	Dir      string   // slash-separated directory relative to the tree, "." for the root
	Released bool     // tagged and published
	Requires []string // paths of the Reliar modules it requires, after rewriting
}

// findModules returns every module of the tree rooted at dir, in dependency
// order (a module after every Reliar module it requires).
func findModules(dir string) ([]*mod, error) {
	work, err := workspaceDirs(dir)
	if err != nil {
		return nil, err
	}
	var mods []*mod
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if p != dir && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != "go.mod" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		mp := modfile.ModulePath(data)
		if mp == "" {
			return fmt.Errorf("%s: no module line", p)
		}
		rel, err := filepath.Rel(dir, filepath.Dir(p))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		want := rootPath
		if rel != "." {
			want = rootPath + "/" + rel
		}
		if mp != want {
			return fmt.Errorf("%s: module %s, want %s (module paths follow directories)", p, mp, want)
		}
		mods = append(mods, &mod{Path: mp, Dir: rel, Released: work[rel] && !unreleased[rel]})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(mods, func(m *mod) bool { return m.Dir == "." }) {
		return nil, errors.New("no root go.mod in " + dir)
	}
	return mods, nil
}

// workspaceDirs returns the directories that go.work uses.
func workspaceDirs(dir string) (map[string]bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, "go.work"))
	if err != nil {
		return nil, err
	}
	wf, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, err
	}
	dirs := map[string]bool{}
	for _, u := range wf.Use {
		dirs[filepath.ToSlash(filepath.Clean(u.Path))] = true
	}
	return dirs, nil
}

// isReliar reports whether path is the path of a module of the tree.
func isReliar(mods []*mod, path string) bool {
	return byPath(mods, path) != nil
}

func byPath(mods []*mod, path string) *mod {
	for _, m := range mods {
		if m.Path == path {
			return m
		}
	}
	return nil
}

// order sorts mods so that each comes after the Reliar modules it requires,
// and fails on a cycle: a module's go.sum holds the hash of each module it
// requires, so the graph must be acyclic for the hashes to exist. Ties keep
// directory order, so the order is stable.
func order(mods []*mod) ([]*mod, error) {
	const (
		unseen = iota
		visiting
		done
	)
	state := map[string]int{}
	var out []*mod
	var visit func(m *mod, stack []string) error
	visit = func(m *mod, stack []string) error {
		switch state[m.Path] {
		case done:
			return nil
		case visiting:
			return fmt.Errorf("the Reliar modules require each other in a cycle: %s", strings.Join(append(stack, m.Path), " -> "))
		}
		state[m.Path] = visiting
		reqs := slices.Clone(m.Requires)
		slices.Sort(reqs)
		for _, r := range reqs {
			dep := byPath(mods, r)
			if dep == nil {
				return fmt.Errorf("%s requires %s, which is not a module of the tree", m.Path, r)
			}
			if m.Released && !dep.Released {
				return fmt.Errorf("released module %s requires %s, which is not released", m.Path, r)
			}
			if err := visit(dep, append(stack, m.Path)); err != nil {
				return err
			}
		}
		state[m.Path] = done
		out = append(out, m)
		return nil
	}
	for _, m := range mods {
		if err := visit(m, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// closure returns the modules in dirs and every Reliar module they require,
// directly or not.
func closure(mods []*mod, dirs []string) (map[string]bool, error) {
	keep := map[string]bool{}
	var add func(m *mod)
	add = func(m *mod) {
		if keep[m.Path] {
			return
		}
		keep[m.Path] = true
		for _, r := range m.Requires {
			if dep := byPath(mods, r); dep != nil {
				add(dep)
			}
		}
	}
	for _, d := range dirs {
		d = strings.Trim(filepath.ToSlash(filepath.Clean(d)), "/")
		var found *mod
		for _, m := range mods {
			if m.Dir == d {
				found = m
			}
		}
		if found == nil || !found.Released {
			return nil, fmt.Errorf("--modules: %q is not the directory of a released module", d)
		}
		add(found)
	}
	return keep, nil
}
