package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// built is a release tree: every go.mod rewritten and tidied, every
// released module zipped into a proxy.
type built struct {
	Mods      []*mod            // every module of the tree, in dependency order
	Published []*mod            // the released modules that were zipped
	Hashes    map[string]string // module path -> h1: hash of its zip
	Changed   []string          // slash paths of the go.mod and go.sum files that changed
}

// build rewrites the tree at dir for version and publishes its released
// modules (those of only, when it is not nil) into proxy, in dependency
// order: each module is tidied against the proxy once the Reliar modules it
// requires are in it, so its go.sum gets their hashes from the go command.
func build(ctx context.Context, dir string, proxy proxyDir, version string, only []string, stamp time.Time) (*built, error) {
	mods, err := findModules(dir)
	if err != nil {
		return nil, err
	}
	before := map[string][]byte{}
	for _, m := range mods {
		for _, name := range []string{"go.mod", "go.sum"} {
			p := pathIn(m.Dir, name)
			before[p], _ = os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		}
	}
	changed := map[string]bool{}
	for _, m := range mods {
		c, err := rewrite(dir, m, mods, version)
		if err != nil {
			return nil, err
		}
		changed[m.Path] = c
	}
	mods, err = order(mods)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{}
	if only != nil {
		if keep, err = closure(mods, only); err != nil {
			return nil, err
		}
	}
	upstream, err := upstreamProxy(ctx)
	if err != nil {
		return nil, err
	}
	env, err := goEnv(proxy, upstream)
	if err != nil {
		return nil, err
	}
	b := &built{Mods: mods, Hashes: map[string]string{}}
	for _, m := range mods {
		if only != nil && !keep[m.Path] {
			continue
		}
		mdir := filepath.Join(dir, filepath.FromSlash(m.Dir))
		if changed[m.Path] {
			if _, err := goCmd(ctx, mdir, env, "mod", "tidy"); err != nil {
				return nil, err
			}
		}
		if err := checkReleased(dir, m, mods, version); err != nil {
			return nil, err
		}
		if err := checkGoSum(dir, m, mods, version, b.Hashes); err != nil {
			return nil, err
		}
		if !m.Released {
			continue
		}
		h, err := proxy.publish(dir, m, version, stamp)
		if err != nil {
			return nil, err
		}
		b.Hashes[m.Path] = h
		b.Published = append(b.Published, m)
	}
	for p, old := range before {
		now, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
		if string(now) != string(old) {
			b.Changed = append(b.Changed, p)
		}
	}
	return b, nil
}

func pathIn(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// writeModuleList writes one line per published module: its path, its
// directory, its tag and the h1: hash of its zip.
func writeModuleList(file string, b *built, version string) error {
	var sb strings.Builder
	for _, m := range b.Published {
		fmt.Fprintf(&sb, "%s %s %s %s\n", m.Path, m.Dir, tagName(m.Dir, version), b.Hashes[m.Path])
	}
	return os.WriteFile(file, []byte(sb.String()), 0o644)
}
