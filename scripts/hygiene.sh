#!/usr/bin/env bash
# Module hygiene: a user module that imports only the core (reliar and
# outbox) must not inherit any driver's or broker's dependencies. Builds such
# a module in a temporary folder, outside the workspace, and fails if its
# go.sum names one.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
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
)

func main() {
	_ = outbox.DefaultSettings()
	_, _ = memstore.New()
	_ = reliar.NewMessageID()
}
SRC
cd "$tmp"
GOWORK=off GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || { GOWORK=off go mod tidy; exit 1; }
GOWORK=off go build ./...
heavy='jackc/pgx|twmb/franz-go|nats-io|rabbitmq/amqp091|redis/go-redis|modernc.org/sqlite|go-sql-driver/mysql|prometheus|opentelemetry|spf13/cobra'
if grep -E "$heavy" go.sum; then
  echo "hygiene: FAIL: a module importing only the core pulls in the drivers or brokers above" >&2
  exit 1
fi
echo "hygiene: ok: the core pulls in only: $(cut -d' ' -f1 go.sum | sort -u | tr '\n' ' ')"
