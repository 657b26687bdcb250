package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// checkGoSum fails unless the go.sum of m records, for the release version,
// the go.mod hash of every Reliar module m requires directly or not, and the
// zip hash of every one it requires directly; and unless every zip hash it
// records for the release is the hash of the zip that was published.
// `go install pkg@version` builds with the go.sum of that module, and a user
// checks the same hashes against the checksum database.
func checkGoSum(dir string, m *mod, mods []*mod, version string, hashes map[string]string) error {
	file := filepath.Join(dir, filepath.FromSlash(m.Dir), "go.sum")
	data, err := os.ReadFile(file)
	if err != nil {
		if os.IsNotExist(err) && len(m.Requires) == 0 {
			return nil
		}
		return err
	}
	zipSum := map[string]string{}
	modSum := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || !isReliar(mods, f[0]) {
			continue
		}
		switch f[1] {
		case version:
			zipSum[f[0]] = f[2]
		case version + "/go.mod":
			modSum[f[0]] = true
		}
	}
	for p, h := range zipSum {
		if want, ok := hashes[p]; ok && h != want {
			return fmt.Errorf("%s/go.sum: %s %s %s, but the published zip hashes %s", m.Dir, p, version, h, want)
		}
	}
	seen := map[string]bool{}
	var walk func(x *mod) error
	walk = func(x *mod) error {
		for _, r := range x.Requires {
			if seen[r] {
				continue
			}
			seen[r] = true
			if !modSum[r] {
				return fmt.Errorf("%s/go.sum: no go.mod hash of %s %s", m.Dir, r, version)
			}
			if err := walk(byPath(mods, r)); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(m); err != nil {
		return err
	}
	for _, r := range m.Requires {
		if _, ok := zipSum[r]; !ok {
			return fmt.Errorf("%s/go.sum: no hash of the zip of %s %s, which it requires", m.Dir, r, version)
		}
	}
	return nil
}
