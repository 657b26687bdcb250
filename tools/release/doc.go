// Command release cuts a lockstep release of every Reliar module, or writes
// one as a dry run.
//
// Every module in go.work except chaos and deploy is released at the same
// version. The release commit is REV (HEAD by default) with every go.mod
// rewritten: no replace directive, every Reliar requirement at the release
// version, and a go.sum that holds the hashes of the Reliar modules it
// needs, computed from the module zips this tool writes (the layout of the
// Go module proxy protocol). The commit is made on no branch, then tagged vX.Y.Z for the root
// module and <dir>/vX.Y.Z for each sub-module; main keeps its replace lines.
//
// Usage:
//
//	go run . [--rev REV] VERSION             # the release commit and its tags
//	go run . --dry-run DIR [flags] VERSION   # DIR/tree, DIR/proxy, DIR/modules.txt; tags nothing
//
// A dry run takes the working tree as it is (tracked and untracked files that
// git does not ignore) unless --rev names a commit. --proxy writes the module
// zips into another proxy directory, adding to what it holds, and --modules
// publishes only the named module directories and the Reliar modules they
// require. scripts/release-check.sh builds a user's module against a dry run.
//
// This module lives outside go.work so that golang.org/x/mod never enters the
// workspace's version selection, and it is never released.
package main
