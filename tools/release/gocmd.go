package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// goEnv is the environment in which the go command sees the release as a
// user would: no workspace, the Reliar modules from the proxy directory
// first and everything else from the usual proxy, no checksum database for
// Reliar (its release versions are not public yet) and GOPROXY not bypassed
// for it (GOPRIVATE would).
func goEnv(proxy proxyDir, upstream string) ([]string, error) {
	abs, err := filepath.Abs(string(proxy))
	if err != nil {
		return nil, err
	}
	env := os.Environ()
	set := func(k, v string) { env = append(env, k+"="+v) }
	set("GOWORK", "off")
	set("GOFLAGS", "-mod=mod -modcacherw")
	set("GOPROXY", "file://"+filepath.ToSlash(abs)+","+upstream)
	set("GONOSUMDB", rootPath)
	set("GOPRIVATE", "")
	set("GONOPROXY", "")
	return env, nil
}

// goCmd runs the go command in dir with env and returns its standard output.
func goCmd(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go %s in %s: %w\n%s", strings.Join(args, " "), dir, err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// upstreamProxy is the GOPROXY the go command uses here, for the modules
// that are not Reliar's.
func upstreamProxy(ctx context.Context) (string, error) {
	out, err := goCmd(ctx, ".", os.Environ(), "env", "GOPROXY")
	if err != nil {
		return "", err
	}
	p := strings.TrimSpace(string(out))
	if p == "" {
		p = "https://proxy.golang.org,direct"
	}
	return p, nil
}

// modCache is the module cache the go command uses here (GOMODCACHE).
func modCache(ctx context.Context) (string, error) {
	out, err := goCmd(ctx, ".", os.Environ(), "env", "GOMODCACHE")
	if err != nil {
		return "", err
	}
	c := strings.TrimSpace(string(out))
	if c == "" {
		return "", fmt.Errorf("go env GOMODCACHE is empty")
	}
	return c, nil
}
