package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// rewrite turns the go.mod of m, in the tree at dir, into its release form:
// every replace of a Reliar module dropped, every Reliar requirement at
// version. A released module may keep no other replace either, since
// `go install pkg@version` refuses any. It records m's Reliar requirements
// and reports whether the file changed.
func rewrite(dir string, m *mod, mods []*mod, version string) (bool, error) {
	file := filepath.Join(dir, filepath.FromSlash(m.Dir), "go.mod")
	data, err := os.ReadFile(file)
	if err != nil {
		return false, err
	}
	f, err := modfile.Parse(file, data, nil)
	if err != nil {
		return false, err
	}
	for _, r := range f.Replace {
		switch {
		case isReliar(mods, r.Old.Path):
			if err := f.DropReplace(r.Old.Path, r.Old.Version); err != nil {
				return false, err
			}
		case m.Released:
			return false, fmt.Errorf("%s: replace %s: a released module cannot replace a dependency (go install refuses it)", m.Dir, r.Old.Path)
		}
	}
	m.Requires = nil
	for _, r := range f.Require {
		if !strings.HasPrefix(r.Mod.Path, rootPath) {
			continue
		}
		if !isReliar(mods, r.Mod.Path) {
			return false, fmt.Errorf("%s: requires %s, which is not a module of this tree", m.Dir, r.Mod.Path)
		}
		m.Requires = append(m.Requires, r.Mod.Path)
		if err := f.AddRequire(r.Mod.Path, version); err != nil {
			return false, err
		}
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return false, err
	}
	if string(out) == string(data) {
		return false, nil
	}
	return true, os.WriteFile(file, out, 0o644)
}

// checkReleased fails unless the go.mod of m, as tidy left it, has no replace
// and requires every Reliar module at version. Tidy adds a requirement for a
// Reliar package imported but not required; such a requirement must name the
// release too.
func checkReleased(dir string, m *mod, mods []*mod, version string) error {
	file := filepath.Join(dir, filepath.FromSlash(m.Dir), "go.mod")
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	f, err := modfile.Parse(file, data, nil)
	if err != nil {
		return err
	}
	if len(f.Replace) > 0 && m.Released {
		return fmt.Errorf("%s/go.mod: still has a replace after go mod tidy", m.Dir)
	}
	m.Requires = nil
	for _, r := range f.Require {
		if !isReliar(mods, r.Mod.Path) {
			continue
		}
		if r.Mod.Version != version {
			return fmt.Errorf("%s/go.mod: requires %s %s after go mod tidy, want %s", m.Dir, r.Mod.Path, r.Mod.Version, version)
		}
		m.Requires = append(m.Requires, r.Mod.Path)
	}
	return nil
}
