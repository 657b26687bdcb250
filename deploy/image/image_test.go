package image_test

import (
	"archive/tar"
	"crypto/x509"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/reliar/reliar/deploy/image"
)

// TestImage builds the image twice from this source tree — compiling the
// relay each time — and checks that both have the same digest, then
// unpacks it and runs the relay from its filesystem.
func TestImage(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	epoch := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	opts := image.Options{Repo: repo, Epoch: epoch}
	first, err := image.Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	second, err := image.Build(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	d1, d2 := digest(t, first), digest(t, second)
	if d1 != d2 {
		t.Fatalf("two builds of the same tree gave digests %s and %s", d1, d2)
	}
	t.Logf("image digest %s", d1)

	// The layout on disk holds the same image.
	dir := filepath.Join(t.TempDir(), "layout")
	if err := image.WriteLayout(dir, first); err != nil {
		t.Fatal(err)
	}
	idx, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 || m.Manifests[0].Digest != d1 {
		t.Fatalf("layout index %+v, want the one image %s", m.Manifests, d1)
	}

	cfg, err := first.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" || cfg.OS != "linux" || !cfg.Created.Time.Equal(epoch) {
		t.Fatalf("config user %q, os %q, created %v; want 65532:65532, linux, %v", cfg.Config.User, cfg.OS, cfg.Created.Time, epoch)
	}
	if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != image.BinaryPath {
		t.Fatalf("entrypoint %v, want %s", cfg.Config.Entrypoint, image.BinaryPath)
	}
	layers, err := first.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d, %v; want one on an empty base", len(layers), err)
	}

	root := unpack(t, first, epoch)
	bin := filepath.Join(root, image.BinaryPath)
	checkStatic(t, bin)
	checkCABundle(t, filepath.Join(root, image.CABundlePath))
	for _, zone := range []string{"Europe/Paris", "America/New_York", "Asia/Tokyo"} {
		b, err := os.ReadFile(filepath.Join(root, image.ZoneinfoDir, zone))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := time.LoadLocationFromTZData(zone, b); err != nil {
			t.Fatalf("zoneinfo %s: %v", zone, err)
		}
	}
	passwd, err := os.ReadFile(filepath.Join(root, "etc/passwd"))
	if err != nil || !strings.Contains(string(passwd), "nonroot:x:65532:65532:") {
		t.Fatalf("etc/passwd = %q, %v; want the nonroot user", passwd, err)
	}

	out := runInImage(t, root, cfg, "version")
	if !strings.HasPrefix(out, "reliar ") || !strings.Contains(out, "linux/") {
		t.Fatalf("reliar version printed %q", out)
	}
	out = runInImage(t, root, cfg, "relay", "--help")
	for _, want := range []string{"reliar relay [flags]", "--metrics-addr", "--database-url"} {
		if !strings.Contains(out, want) {
			t.Fatalf("reliar relay --help does not mention %q:\n%s", want, out)
		}
	}
}

func digest(t *testing.T, img v1.Image) v1.Hash {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// unpack writes the image's filesystem to a temporary folder, checking
// that every entry is dated epoch and owned by root.
func unpack(t *testing.T, img v1.Image, epoch time.Time) string {
	t.Helper()
	root := t.TempDir()
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if !h.ModTime.Equal(epoch) || h.Uid != 0 || h.Gid != 0 {
			t.Fatalf("%s: mtime %v, owner %d:%d; want %v, 0:0", h.Name, h.ModTime, h.Uid, h.Gid, epoch)
		}
		dst := filepath.Join(root, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(dst, root+string(filepath.Separator)) {
			t.Fatalf("entry %q leaves the root", h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, os.FileMode(h.Mode).Perm())
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("%s: unexpected entry type %c", h.Name, h.Typeflag)
		}
	}
	// tmp is world-writable with the sticky bit, as the relay's user needs.
	if fi, err := os.Stat(filepath.Join(root, "tmp")); err != nil || !fi.IsDir() {
		t.Fatalf("no /tmp in the image: %v", err)
	}
	return root
}

// checkStatic fails unless bin is an ELF executable without an interpreter
// or shared libraries: on an empty base there are none.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the relay binary needs a dynamic loader")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Fatalf("the relay binary needs shared libraries %v", libs)
	}
}

func checkCABundle(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatal("the CA bundle holds no certificate")
	}
	if n := strings.Count(string(b), "BEGIN CERTIFICATE"); n < 100 {
		t.Fatalf("the CA bundle holds %d certificates, want the NSS store's (over 100)", n)
	}
}

// runInImage runs the image's entrypoint with args and the image's
// environment. As root it runs inside the unpacked filesystem (chroot) as
// the image's user, so that nothing outside the image can help it; as
// another user it runs the unpacked binary directly, which checkStatic
// makes equivalent for these commands.
func runInImage(t *testing.T, root string, cfg *v1.ConfigFile, args ...string) string {
	t.Helper()
	ep := cfg.Config.Entrypoint[0]
	cmd := exec.CommandContext(t.Context(), filepath.Join(root, ep), args...)
	cmd.Env = cfg.Config.Env
	if os.Geteuid() == 0 {
		cmd.Path, cmd.Dir = ep, "/"
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: image.UID, Gid: image.UID}}
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("reliar %s in the image: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
