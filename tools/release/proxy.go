package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/sumdb/dirhash"
	modzip "golang.org/x/mod/zip"
)

// proxyDir is a directory in the layout of the Go module proxy protocol,
// served to the go command as GOPROXY=file://<dir>:
//
//	<dir>/<escaped module path>/@v/list
//	<dir>/<escaped module path>/@v/<version>.info, .mod, .zip
type proxyDir string

// publish writes module m of the tree at dir into the proxy at version, and
// returns the h1: hash of its zip (what go.sum records). Files are zipped the
// way the go command zips a module from a git tag: the module's directory
// without nested modules or vendor trees, and the repository's LICENSE when
// the module's directory has none.
func (p proxyDir) publish(dir string, m *mod, version string, stamp time.Time) (string, error) {
	mv := module.Version{Path: m.Path, Version: version}
	files, err := moduleFiles(dir, m.Dir)
	if err != nil {
		return "", err
	}
	base, err := p.versionDir(m.Path)
	if err != nil {
		return "", err
	}
	ev, err := module.EscapeVersion(version)
	if err != nil {
		return "", err
	}
	stem := filepath.Join(base, ev)
	zf, err := os.Create(stem + ".zip")
	if err != nil {
		return "", err
	}
	if err := modzip.Create(zf, mv, files); err != nil {
		zf.Close()
		return "", fmt.Errorf("zip %s: %w", mv, err)
	}
	if err := zf.Close(); err != nil {
		return "", err
	}
	gomod, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(m.Dir), "go.mod"))
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(stem+".mod", gomod, 0o644); err != nil {
		return "", err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, stamp.UTC()})
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(stem+".info", info, 0o644); err != nil {
		return "", err
	}
	if err := addToList(filepath.Join(base, "list"), version); err != nil {
		return "", err
	}
	return dirhash.HashZip(stem+".zip", dirhash.Hash1)
}

// versionDir returns (and makes) the @v directory of module path.
func (p proxyDir) versionDir(path string) (string, error) {
	ep, err := module.EscapePath(path)
	if err != nil {
		return "", err
	}
	d := filepath.Join(string(p), filepath.FromSlash(ep), "@v")
	return d, os.MkdirAll(d, 0o755)
}

// addToList adds version to a proxy's list file, keeping what it holds.
func addToList(file, version string) error {
	data, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	vs := strings.Fields(string(data))
	if !slices.Contains(vs, version) {
		vs = append(vs, version)
	}
	semver.Sort(vs)
	return os.WriteFile(file, []byte(strings.Join(vs, "\n")+"\n"), 0o644)
}

// moduleFiles lists the files of the module in sub (relative to the tree at
// dir) that belong in its zip, and fails on a file the go command refuses.
func moduleFiles(dir, sub string) ([]modzip.File, error) {
	mdir := filepath.Join(dir, filepath.FromSlash(sub))
	cf, err := modzip.CheckDir(mdir)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", sub, err)
	}
	var files []modzip.File
	haveLicense := false
	for _, file := range cf.Valid { // CheckDir names the files by their path on disk
		rel, err := filepath.Rel(mdir, file)
		if err != nil {
			return nil, err
		}
		name := filepath.ToSlash(rel)
		files = append(files, diskFile{name: name, file: file})
		haveLicense = haveLicense || name == "LICENSE"
	}
	if !haveLicense && sub != "." {
		if data, err := os.ReadFile(filepath.Join(dir, "LICENSE")); err == nil {
			files = append(files, memFile{name: "LICENSE", data: data})
		}
	}
	return files, nil
}

// diskFile is a module file read from the tree.
type diskFile struct{ name, file string }

func (f diskFile) Path() string                 { return f.name }
func (f diskFile) Lstat() (os.FileInfo, error)  { return os.Lstat(f.file) }
func (f diskFile) Open() (io.ReadCloser, error) { return os.Open(f.file) }

// memFile is a module file held in memory: the repository's LICENSE added
// to a sub-module, or a file read from a commit.
type memFile struct {
	name string
	data []byte
}

func (f memFile) Path() string                 { return f.name }
func (f memFile) Lstat() (os.FileInfo, error)  { return memInfo{f}, nil }
func (f memFile) Open() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(f.data)), nil }

type memInfo struct{ f memFile }

func (i memInfo) Name() string       { return filepath.Base(i.f.name) }
func (i memInfo) Size() int64        { return int64(len(i.f.data)) }
func (i memInfo) Mode() os.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
