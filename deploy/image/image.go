// Package image builds the relay's OCI image without a container engine:
// the static reliar binary (CGO_ENABLED=0, -trimpath) in one layer on an
// empty base, with a CA bundle, the time-zone database and a non-root user,
// every file with the same fixed modification time, so that two builds of
// the same source tree give the same image digest.
//
// The CA bundle is the NSS root store that golang.org/x/crypto's
// x509roots/fallback/bundle embeds, pinned by this module's go.sum; the
// time-zone database is the one the Go toolchain ships
// ($GOROOT/lib/time/zoneinfo.zip). Neither depends on the building
// machine's files.
package image

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Paths inside the image.
const (
	BinaryPath   = "/usr/local/bin/reliar"
	CABundlePath = "/etc/ssl/certs/ca-certificates.crt"
	ZoneinfoDir  = "/usr/share/zoneinfo"
)

// The user the relay runs as: not root, and the same id as distroless'
// nonroot user, so that a pod's runAsUser matches.
const (
	UID      = 65532
	UserName = "nonroot"
)

// MetricsPort is the port the image's default command serves /metrics,
// /healthz and /readyz on.
const MetricsPort = 9090

// Options says what to build.
type Options struct {
	// Repo is the root of the Reliar repository (the folder of go.work).
	Repo string
	// Arch is the GOARCH of the image; empty means the building machine's.
	Arch string
	// Epoch is the modification time of every file and the image's creation
	// time; the zero value means the Unix epoch.
	Epoch time.Time
}

func (o Options) arch() string {
	if o.Arch == "" {
		return runtime.GOARCH
	}
	return o.Arch
}

func (o Options) epoch() time.Time {
	if o.Epoch.IsZero() {
		return time.Unix(0, 0).UTC()
	}
	return o.Epoch.UTC()
}

// ErrBuild is matched (with errors.Is) by the error Build returns when the
// relay binary does not compile.
var ErrBuild = errors.New("image: go build of the relay failed")

// Build compiles the relay and returns its image.
func Build(ctx context.Context, o Options) (v1.Image, error) {
	bin, goroot, err := buildBinary(ctx, o)
	if err != nil {
		return nil, err
	}
	files, err := rootFS(bin, goroot)
	if err != nil {
		return nil, err
	}
	return assemble(files, o)
}

// buildBinary compiles ./cmd/reliar of o.Repo: static, without the
// building machine's paths, for linux/o.Arch. It also returns the GOROOT of
// the toolchain that compiled it, whose time-zone database the image gets.
func buildBinary(ctx context.Context, o Options) (bin []byte, goroot string, err error) {
	dir, err := os.MkdirTemp("", "reliar-image-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "reliar")
	env := append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+o.arch(), "GOFLAGS=")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./cmd/reliar")
	cmd.Dir, cmd.Env = o.Repo, env
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("%w: %v\n%s", ErrBuild, err, msg)
	}
	cmd = exec.CommandContext(ctx, "go", "env", "GOROOT")
	cmd.Dir, cmd.Env = o.Repo, env
	root, err := cmd.Output()
	if err != nil {
		return nil, "", fmt.Errorf("%w: go env GOROOT: %v", ErrBuild, err)
	}
	bin, err = os.ReadFile(out)
	return bin, strings.TrimSpace(string(root)), err
}

// file is one entry of the image's filesystem.
type file struct {
	name string // without the leading slash
	mode int64
	dir  bool
	body []byte
}

// rootFS lists the image's files: the binary, the CA bundle, the time-zone
// database, the user, and /tmp.
func rootFS(bin []byte, goroot string) ([]file, error) {
	ca, err := caBundle()
	if err != nil {
		return nil, err
	}
	zones, err := zoneinfo(goroot)
	if err != nil {
		return nil, err
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/home/%s:/sbin/nologin\n", UserName, UID, UID, UserName, UserName)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", UserName, UID)
	files := []file{
		{name: strings.TrimPrefix(BinaryPath, "/"), mode: 0o755, body: bin},
		{name: strings.TrimPrefix(CABundlePath, "/"), mode: 0o644, body: ca},
		{name: "etc/passwd", mode: 0o644, body: []byte(passwd)},
		{name: "etc/group", mode: 0o644, body: []byte(group)},
		{name: "tmp", mode: 0o1777, dir: true},
		{name: "home/" + UserName, mode: 0o755, dir: true},
	}
	return append(files, zones...), nil
}

// tarLayer writes files, with their parent folders, as one tar stream in
// name order, every entry owned by root and dated epoch.
func tarLayer(files []file, epoch time.Time) ([]byte, error) {
	entries := map[string]file{}
	for _, f := range files {
		entries[f.name] = f
		for d := path.Dir(f.name); d != "."; d = path.Dir(d) {
			if _, ok := entries[d]; !ok {
				entries[d] = file{name: d, mode: 0o755, dir: true}
			}
		}
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	slices.Sort(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		f := entries[n]
		h := &tar.Header{Name: f.name, Mode: f.mode, ModTime: epoch, Format: tar.FormatPAX}
		if f.dir {
			h.Typeflag, h.Name = tar.TypeDir, f.name+"/"
		} else {
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// assemble puts files in one layer on an empty OCI image and configures it
// to run `reliar relay` as the non-root user.
func assemble(files []file, o Options) (v1.Image, error) {
	epoch := o.epoch()
	tb, err := tarLayer(files, epoch)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(tb)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	base := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	base, err = mutate.ConfigFile(base, &v1.ConfigFile{
		Architecture: o.arch(),
		OS:           "linux",
		Config: v1.Config{
			User:         fmt.Sprintf("%d:%d", UID, UID),
			Entrypoint:   []string{BinaryPath},
			Cmd:          []string{"relay", "--metrics-addr", fmt.Sprintf(":%d", MetricsPort)},
			Env:          []string{"PATH=/usr/local/bin", "SSL_CERT_FILE=" + CABundlePath},
			WorkingDir:   "/home/" + UserName,
			ExposedPorts: map[string]struct{}{fmt.Sprintf("%d/tcp", MetricsPort): {}},
			Labels: map[string]string{
				"org.opencontainers.image.title":       "reliar relay",
				"org.opencontainers.image.description": "The Reliar outbox relay: publishes an outbox table's rows to a broker.",
				"org.opencontainers.image.source":      "https://github.com/reliar/reliar",
			},
		},
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.Append(base, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: v1.Time{Time: epoch}, CreatedBy: "deploy/image: reliar relay, CA bundle, zoneinfo, user " + UserName},
	})
	if err != nil {
		return nil, err
	}
	return mutate.CreatedAt(img, v1.Time{Time: epoch})
}

// WriteLayout writes img as an OCI image layout in dir, which must not
// exist or be empty (crane, skopeo and oras push from it).
func WriteLayout(dir string, img v1.Image) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendImage(img)
}
