// Command image builds the relay's OCI image (package image) into an OCI
// image layout folder and prints its digest, without a container engine:
//
//	go run ./cmd/image -out ../dist/reliar-image
//
// run from the deploy folder. Push it with any tool that reads OCI layouts,
// for example `crane push dist/reliar-image registry.example.com/reliar:v1`
// or `skopeo copy oci:dist/reliar-image docker://registry.example.com/reliar:v1`.
// The same source tree and Go toolchain give the same digest.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"time"

	"github.com/reliar/reliar/deploy/image"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run() error {
	out := flag.String("out", "", "OCI image layout folder to write (must not exist, or be empty)")
	repo := flag.String("repo", "", "root of the Reliar repository (default: the folder of the go.work above the current one)")
	arch := flag.String("arch", "", "GOARCH of the image (default: this machine's)")
	epoch := flag.Int64("epoch", -1, "modification time of every file, in Unix seconds (default: $SOURCE_DATE_EPOCH, else 0)")
	flag.Parse()
	if *out == "" {
		return errors.New("-out is required")
	}
	if *repo == "" {
		r, err := findRepo()
		if err != nil {
			return err
		}
		*repo = r
	}
	when, err := epochTime(*epoch)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	img, err := image.Build(ctx, image.Options{Repo: *repo, Arch: *arch, Epoch: when})
	if err != nil {
		return err
	}
	if err := image.WriteLayout(*out, img); err != nil {
		return err
	}
	d, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s %s\n", *out, d)
	return nil
}

// epochTime returns the files' time: the flag, else SOURCE_DATE_EPOCH,
// else the Unix epoch.
func epochTime(flagValue int64) (time.Time, error) {
	if flagValue >= 0 {
		return time.Unix(flagValue, 0).UTC(), nil
	}
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds", s)
		}
		return time.Unix(n, 0).UTC(), nil
	}
	return time.Unix(0, 0).UTC(), nil
}

// findRepo walks up from the current folder to the one holding go.work.
func findRepo() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work above the current folder: give -repo")
		}
		dir = parent
	}
}
