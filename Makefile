# Reliar's build. `make test` is what CI runs: it starts (or installs) every
# service the tests need, vets every module, checks module hygiene and runs
# every module's tests with the race detector.

SHELL := /bin/bash
GO ?= go
TESTFLAGS ?= -race -count=1 -timeout 30m
MODULES = $(shell $(GO) list -m -f '{{.Dir}}')

.PHONY: test services vet fmt hygiene unit bench cover bench-peers bench-quick bench-check release-check

test: services fmt vet hygiene unit bench-check release-check chaos-quick

services:
	@bash scripts/services.sh

fmt:
	@out=$$(gofmt -l $(MODULES)); if [ -n "$$out" ]; then echo "gofmt: not formatted:"; echo "$$out"; exit 1; fi

vet:
	@set -e; for m in $(MODULES); do echo "vet $$m"; (cd $$m && $(GO) vet ./...); done
	@echo "vet chaos scenarios (-tags chaos)"; cd chaos && $(GO) vet -tags chaos ./...

hygiene:
	@bash scripts/hygiene.sh

unit:
	@set -e; for m in $(MODULES); do echo "test $$m"; (cd $$m && $(GO) test $(TESTFLAGS) ./...); done

cover:
	@set -e; for m in $(MODULES); do (cd $$m && $(GO) test -race -count=1 -cover ./...); done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./outbox/

# Peer comparison (River, watermill, raw SQL, JetStream, SQLite). bench is
# its own module outside go.work, so peers never enter the workspace's
# versions. BENCH_FLAGS adds flags: BENCH_FLAGS='-only "reliar defaults" -reps 5'.
BENCH_FLAGS ?=
bench-peers:
	cd bench && GOWORK=off $(GO) run ./cmd/peers $(BENCH_FLAGS)

bench-quick:
	cd bench && GOWORK=off $(GO) run ./cmd/peers -quick $(BENCH_FLAGS)

bench-check:
	cd bench && GOWORK=off $(GO) vet ./... && GOWORK=off $(GO) test -race -count=1 ./...

# The release tool (tools/release, outside go.work) and a module outside the
# repository built against a dry-run release of this tree: go get of every
# public module, the README tutorial, go install of the CLI and its demo, and
# every Reliar requirement at the one release version (scripts/release-check.sh,
# RELEASING.md).
# The last line is `release-check: modules=N tutorial=ok install=ok demo=ok`.
release-check:
	@out=$$(gofmt -l tools/release); if [ -n "$$out" ]; then echo "gofmt: not formatted:"; echo "$$out"; exit 1; fi
	@cd tools/release && GOWORK=off $(GO) vet ./... && GOWORK=off $(GO) test -race -count=1 ./...
	@bash scripts/release-check.sh

# Chaos suite (chaos/, build tag chaos): every scenario runs the relay as a
# child process against PostgreSQL and NATS JetStream with injected faults.
# `make chaos-quick` runs one iteration of each (part of `make test`);
# `make chaos ITER=20` runs twenty. The last line printed is the totals.
ITER ?= 1
CHAOS_SOAK ?= 20s
CHAOS_TIMEOUT ?= 60m
CHAOS_SUMMARY := $(CURDIR)/chaos/.summary.txt

.PHONY: chaos chaos-quick

chaos-quick: ITER = 1
chaos-quick: CHAOS_TIMEOUT = 10m
chaos-quick: chaos

chaos:
	@rm -f $(CHAOS_SUMMARY); \
	(cd chaos && CHAOS_ITER=$(ITER) CHAOS_SOAK=$(CHAOS_SOAK) CHAOS_SUMMARY=$(CHAOS_SUMMARY) \
		$(GO) test -tags chaos -race -count=1 -timeout $(CHAOS_TIMEOUT) .); status=$$?; \
	if [ -f $(CHAOS_SUMMARY) ]; then cat $(CHAOS_SUMMARY); \
	else echo "chaos: no summary: the suite did not finish"; fi; exit $$status
