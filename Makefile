# Fluss Lambda Gateway — developer entry points. Two commands matter:
#   make run    start the local stack (real Fluss + moto) and serve the functions on 127.0.0.1:9000
#   make test   everything CI runs: format, lints, unit and integration tests against the real stack
# Everything is installed idempotently into caches outside the clone.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

CACHE ?= $(HOME)/.cache/fluss-lambda-gateway
export FLUSS_GW_CACHE := $(CACHE)
export CARGO_TARGET_DIR ?= $(CACHE)/target
export FLUSS_STACK_DIR ?= $(CACHE)/stack
export FLUSS_STACK_ENV := $(FLUSS_STACK_DIR)/stack.env
export FLUSS_PROBE_BIN := $(CARGO_TARGET_DIR)/debug/fluss-probe

VENV := $(CACHE)/venv
# Python tools of the project, pinned here once.
PY_TOOLS := moto[server]==5.2.5 cargo-lambda==1.9.2
PY_STAMP := $(VENV)/.installed-$(shell echo '$(PY_TOOLS)' | md5sum | cut -c1-12)
export PATH := $(VENV)/bin:$(PATH)

STACK := python3 infra/local/stack.py
GATEWAY_PORT ?= 9000

.PHONY: help tools otelcol fetch build stack-up stack-down stop status run test test-only lint fmt

help:
	@echo "make run    - start the local stack and serve the gateway on 127.0.0.1:$(GATEWAY_PORT)"
	@echo "make test   - fmt check, clippy, and all tests against a fresh local stack"
	@echo "make stop   - stop a stack left running"
	@echo "make status - show the running stack and its addresses"

## tools: project virtualenv with moto (AWS emulator) and cargo-lambda.
tools: $(PY_STAMP)
$(PY_STAMP):
	@command -v java >/dev/null || { echo "Java 17 is required (java not on PATH)"; exit 1; }
	@command -v mvn >/dev/null || { echo "Maven is required (mvn not on PATH)"; exit 1; }
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet $(PY_TOOLS)
	rm -f $(VENV)/.installed-* && touch $@

## otelcol: the OpenTelemetry Collector the telemetry tests export to, built from the Go module
## proxy into the cache (idempotent; the first build takes a minute or two).
otelcol:
	@bash infra/local/otelcol/build.sh | sed '$$d'

## fetch: Fluss server and log4j jars from Maven Central (cached).
fetch:
	$(STACK) fetch

## build: every binary of the workspace (functions and the stack probe).
build:
	cargo build --workspace --bins

stack-up: tools fetch build
	$(STACK) start

stack-down stop:
	$(STACK) stop

status:
	$(STACK) status

run: tools fetch build
	infra/local/run.sh $(GATEWAY_PORT)

fmt:
	cargo fmt --all

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo clippy -p integration-tests --features bench --bins -- -D warnings

## test: compile first (before the JVMs compete for the two cores), then run every test with a
## fresh stack that is stopped again whatever the outcome.
test: tools otelcol fetch lint
	cargo test --workspace --no-run
	cargo build --workspace --bins
	infra/local/with-stack.sh cargo test --workspace

## test-only: tests against an already running stack (make stack-up), for quick iterations.
test-only:
	cargo test --workspace
