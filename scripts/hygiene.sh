#!/usr/bin/env bash
# Module hygiene, two checks:
#  1. Every module is tidy on its own (`go mod tidy -diff` with GOWORK=off,
#     which is how a user's go command sees it), and the modules that are not
#     in go.work (bench, tools/release) and chaos also build with GOWORK=off.
#  2. A user module that imports only the core (reliar and outbox) does not
#     inherit any driver's or broker's dependencies: such a module is built in
#     a temporary folder, outside the workspace, and its go.sum must name none.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

untidy=0
mods=$(cd "$root" && git ls-files -co --exclude-standard -- '*go.mod' 'go.mod' | sort -u)
for mod in $mods; do
  dir=$(dirname "$mod")
  if ! out=$(cd "$root/$dir" && GOWORK=off GOFLAGS=-mod=mod go mod tidy -diff 2>&1); then
    echo "hygiene: FAIL: module $dir is not tidy (GOWORK=off go mod tidy -diff):" >&2
    echo "$out" >&2
    untidy=1
  fi
done
for dir in chaos bench tools/release; do
  [ -f "$root/$dir/go.mod" ] || continue
  # -o: a directory in $tmp, so that no command's binary lands in the tree.
  # A module without commands (chaos) builds without -o, which go refuses
  # there, and writes nothing then.
  build=(go build -o "$tmp/bin/" ./...)
  if ! (cd "$root/$dir" && GOWORK=off go list -f '{{.Name}}' ./... | grep -qx main); then
    build=(go build ./...)
  fi
  if ! out=$(cd "$root/$dir" && GOWORK=off "${build[@]}" 2>&1 && GOWORK=off go vet -tags chaos ./... 2>&1); then
    echo "hygiene: FAIL: $dir does not build with GOWORK=off:" >&2
    echo "$out" >&2
    untidy=1
  fi
done
[ "$untidy" = 0 ] || exit 1
echo "hygiene: ok: $(echo "$mods" | wc -l) modules tidy; chaos, bench and tools build with GOWORK=off"

cat >"$tmp/go.mod" <<MOD
module example.com/hygiene

go 1.26.0

require github.com/reliar/reliar v0.0.0

replace github.com/reliar/reliar => $root
MOD
cat >"$tmp/main.go" <<'SRC'
package main

import (
	"github.com/reliar/reliar"
	"github.com/reliar/reliar/outbox"
	"github.com/reliar/reliar/outbox/memstore"
	"github.com/reliar/reliar/outbox/outboxtest"
)

func main() {
	_ = outbox.DefaultSettings()
	_, _ = memstore.New()
	_ = reliar.NewMessageID()
	var _ reliar.Publisher = new(outboxtest.RecordingPublisher)
}
SRC
cd "$tmp"
GOWORK=off GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || { GOWORK=off go mod tidy; exit 1; }
GOWORK=off go build ./...
heavy='jackc/pgx|twmb/franz-go|nats-io|rabbitmq/amqp091|redis/go-redis|modernc.org/sqlite|go-sql-driver/mysql|prometheus|opentelemetry|spf13/cobra|golang.org/x/mod'
if grep -E "$heavy" go.sum; then
  echo "hygiene: FAIL: a module importing only the core pulls in the drivers or brokers above" >&2
  exit 1
fi
echo "hygiene: ok: the core pulls in only: $(cut -d' ' -f1 go.sum | sort -u | tr '\n' ' ')"
