#!/usr/bin/env bash
# make release-check: Reliar as a user gets it. tools/release writes a dry-run
# release of this tree into a module proxy directory (the layout of the Go
# module proxy protocol) at a version unique to this run, since the module
# cache never re-reads a version it holds. Then, in modules outside the
# repository and outside any workspace:
#   - go get every public module, and build every package of them;
#   - compile the tutorial program of README.md as README.md shows it;
#   - go install github.com/reliar/reliar/cmd/reliar@VERSION, and run the
#     installed binary's demo to lost=0;
#   - check the lockstep: every public module requires every Reliar module
#     it uses at exactly this version. The driver-side helpers the stores
#     share with the root module (outboxsql, outboxsqltest, HandoffBook,
#     WakeHub) are compatible only within one release, so a store module
#     must never pull in another version of the root.
# Everything the run put in the module cache is removed at the end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/reliar-release-check.XXXXXX")
stamp="$(date +%s).$$"
base=${RELEASE_CHECK_BASE:-v0.1.0}
new="$base-check.$stamp"
tool="$tmp/release"
say() { echo "release-check: $*"; }
fail() { echo "release-check: FAIL: $*" >&2; exit 1; }
cleanup() {
  [ -x "$tool" ] && "$tool" --clean-cache "$new" >/dev/null || true
  chmod -R u+w "$tmp" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

(cd "$root/tools/release" && GOWORK=off go build -o "$tool" .)

# The dry run: every module of this tree.
"$tool" --repo "$root" --dry-run "$tmp/new" --proxy "$tmp/proxy" "$new" | sed 's/^release: /release-check: /'

upstream=$(go env GOPROXY)
export GOWORK=off GOFLAGS="-mod=mod -modcacherw" GONOSUMDB=github.com/reliar GOPRIVATE= GONOPROXY= \
  GOPROXY="file://$tmp/proxy,$upstream" GOBIN="$tmp/bin" TMPDIR="$tmp/tmp"
mkdir -p "$tmp/tmp" "$tmp/user"

# Every public module, as `go get` gives it to a user.
mapfile -t mods < <(cut -d' ' -f1 "$tmp/new/modules.txt")
n=${#mods[@]}
cd "$tmp/user"
go mod init example.com/releasecheck >/dev/null 2>&1
go get "${mods[@]/%/@$new}" >/dev/null 2>"$tmp/get.log" || { cat "$tmp/get.log" >&2; fail "go get of the $n modules"; }
for m in "${mods[@]}"; do
  got=$(go list -m -f '{{.Version}}' "$m")
  [ "$got" = "$new" ] || fail "$m resolved to $got, want $new"
done
go build github.com/reliar/reliar/... || fail "the packages of the $n modules do not build"
say "go get: $n modules at $new; $(go list github.com/reliar/reliar/... | wc -l) packages build"

# The tutorial, as README.md shows it at this moment.
awk '
  /<!-- release-check: tutorial main.go -->/ { marked = NR; next }
  marked && NR == marked + 1 { if ($0 != "```go") exit 1; inside = 1; next }
  inside && /^```$/ { done = 1; exit }
  inside { print }
  END { if (!done) exit 1 }
' "$root/README.md" >main.go || fail "README.md has no Go block right after <!-- release-check: tutorial main.go -->"
go build -o "$tmp/tutorial" . || fail "the README tutorial does not compile against $new"
go vet . || fail "go vet of the README tutorial"
tutorial=ok
say "tutorial: README.md's program ($(wc -l <main.go) lines) compiles against $new"

# go install, the way Go users install a CLI: no -mod=mod, so the module's
# own go.mod and go.sum must be complete.
(cd "$tmp" && GOFLAGS=-modcacherw go install "github.com/reliar/reliar/cmd/reliar@$new") ||
  fail "go install github.com/reliar/reliar/cmd/reliar@$new"
version=$("$GOBIN/reliar" version)
case "$version" in *"$new"*) ;; *) fail "the installed reliar reports \"$version\", not $new" ;; esac
install=ok
say "install: $version"

"$GOBIN/reliar" demo --messages 1000 >"$tmp/demo.out" 2>"$tmp/demo.err" || {
  cat "$tmp/demo.out" "$tmp/demo.err" >&2
  fail "the installed reliar demo failed"
}
summary=$(tail -n 1 "$tmp/demo.out")
case " $summary " in *" lost=0 "*) ;; *) fail "demo: $summary" ;; esac
demo=ok
say "$summary"

# Lockstep: in the module graph of a user of every public module, each
# requirement a Reliar module at $new has on a Reliar module is at $new.
cd "$tmp/user"
skew=$(go mod graph | awk -v v="$new" '
  $1 ~ /^github.com\/reliar\// && $2 ~ /^github.com\/reliar\// {
    split($1, a, "@"); split($2, b, "@")
    if (a[2] == v && b[2] != v) print $1 " requires " $2
  }')
[ -z "$skew" ] || fail "modules not in lockstep (the driver-side helpers are same-version-only):
$skew"
edges=$(go mod graph | grep -c "^github.com/reliar/[^ ]*@$new github.com/reliar/" || true)
[ "$edges" -gt 0 ] || fail "no requirement between Reliar modules at $new in the module graph"
say "lockstep: $edges requirements between Reliar modules, all at $new"

say "modules=$n tutorial=$tutorial install=$install demo=$demo"
