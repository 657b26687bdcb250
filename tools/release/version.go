package main

import (
	"fmt"
	"path"

	"golang.org/x/mod/semver"
)

// checkVersion accepts a canonical semantic version of major 0 or 1, the only
// majors whose module paths carry no /vN suffix.
func checkVersion(v string) error {
	if !semver.IsValid(v) || semver.Canonical(v) != v {
		return fmt.Errorf("version %q is not a canonical semantic version such as v0.1.0", v)
	}
	if m := semver.Major(v); m != "v0" && m != "v1" {
		return fmt.Errorf("version %s: major %s needs /%s module paths, which Reliar does not have", v, m, m)
	}
	return nil
}

// tagName is the git tag of the module in dir (relative to the repository
// root, "." for the root module) at version v.
func tagName(dir, v string) string {
	if dir == "." {
		return v
	}
	return path.Join(dir, v)
}
