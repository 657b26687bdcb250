package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
)

// cpuProfiler returns a harness hook that writes a CPU profile of every
// Reliar drain run into dir, as <system>-rep<N>.pprof.
func cpuProfiler(dir string, stderr io.Writer) func(system string, rep int) func() {
	return func(system string, rep int) func() {
		if !strings.HasPrefix(system, "reliar") {
			return func() {}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(stderr, "cpuprofile:", err)
			return func() {}
		}
		name := filepath.Join(dir, fmt.Sprintf("%s-rep%d.pprof", fileName(system), rep))
		f, err := os.Create(name)
		if err != nil {
			fmt.Fprintln(stderr, "cpuprofile:", err)
			return func() {}
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(stderr, "cpuprofile:", err)
			f.Close()
			return func() {}
		}
		return func() {
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintln(stderr, "cpuprofile:", err)
			}
		}
	}
}

// fileName turns a system name into a file name of letters, digits and
// dashes.
func fileName(system string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(system) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}
