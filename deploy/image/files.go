package image

import (
	"archive/zip"
	"bytes"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// ErrNoZoneinfo is matched (with errors.Is) by the error of a build whose
// Go toolchain has no time-zone database.
var ErrNoZoneinfo = errors.New("image: the Go toolchain has no lib/time/zoneinfo.zip")

// caBundle returns the NSS root certificates as PEM, in the bundle's
// order. A root the NSS store constrains (trusted only for certificates
// issued before a date) cannot be expressed in a PEM file and is left out
// rather than trusted without its constraint.
func caBundle() ([]byte, error) {
	var buf bytes.Buffer
	n := 0
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		if err := pem.Encode(&buf, &pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate}); err != nil {
			return nil, err
		}
		n++
	}
	if n == 0 {
		return nil, errors.New("image: the CA bundle is empty")
	}
	return buf.Bytes(), nil
}

// zoneinfo returns the time-zone files of the zoneinfo.zip of the Go
// toolchain at goroot, under usr/share/zoneinfo, in name order.
func zoneinfo(goroot string) ([]file, error) {
	zr, err := zip.OpenReader(filepath.Join(goroot, "lib", "time", "zoneinfo.zip"))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoZoneinfo, err)
	}
	defer zr.Close()
	var out []file
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, file{name: path.Join(ZoneinfoDir[1:], path.Clean(f.Name)), mode: 0o644, body: b})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: it is empty", ErrNoZoneinfo)
	}
	slices.SortFunc(out, func(a, b file) int { return strings.Compare(a.name, b.name) })
	return out, nil
}
