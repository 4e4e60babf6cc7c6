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
# The shared target directory outlives every clone CI builds, and each clone's path gives its
# crates new hashes: incremental caches (never reused by a fresh clone) are off, and
# `sweep-target` removes artifacts no build has read for three days. Without both the directory
# grew past 45 GB and filled the disk (2026-12-06).
export CARGO_INCREMENTAL := 0

VENV := $(CACHE)/venv
# Python tools of the project, pinned here once: moto (AWS), cargo-lambda, and the OpenTelemetry
# SDK with its OTLP/HTTP exporter (the OTLP receiver's tests export through it), and the
# Prometheus client library whose parser reads the standalone server's `/metrics` in a test.
# pyarrow and polars write Arrow bodies and read the Arrow answers of the read route as a data
# team would.
PY_TOOLS := moto[server]==5.2.5 cargo-lambda==1.9.2 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2 prometheus-client==0.26.0 pyarrow==26.0.1 polars==2.1.0
PY_STAMP := $(VENV)/.installed-$(shell echo '$(PY_TOOLS)' | md5sum | cut -c1-12)
export PATH := $(VENV)/bin:$(PATH)

# Infrastructure tools (make lint-infra, package, deploy-local), each pinned in a venv of its own:
# the SAM CLI, checkov and cfn-lint pin conflicting versions of their shared dependencies.
SAM_VENV := $(CACHE)/sam-venv
LINT_VENV := $(CACHE)/lint-venv
CHECKOV_VENV := $(CACHE)/checkov-venv
SAM_TOOLS := aws-sam-cli==1.170.0 aws-sam-translator==1.115.0 pytest==9.2.0
LINT_TOOLS := cfn-lint==1.58.0 cfn-lint-serverless==0.3.6
CHECKOV_TOOLS := checkov==3.3.30
# API fuzzing (make fuzz-api, and the short run of make test): schemathesis in its own venv.
FUZZ_VENV := $(CACHE)/fuzz-venv
FUZZ_TOOLS := schemathesis==4.32.5
stamp = $(1)/.installed-$(shell echo '$(2)' | md5sum | cut -c1-12)
SAM_STAMP := $(call stamp,$(SAM_VENV),$(SAM_TOOLS))
LINT_STAMP := $(call stamp,$(LINT_VENV),$(LINT_TOOLS))
CHECKOV_STAMP := $(call stamp,$(CHECKOV_VENV),$(CHECKOV_TOOLS))
FUZZ_STAMP := $(call stamp,$(FUZZ_VENV),$(FUZZ_TOOLS))
export SAM_VENV LINT_VENV CHECKOV_VENV FUZZ_VENV
export SAM_CLI_TELEMETRY := 0

STACK := python3 infra/local/stack.py
# $(call on_stack,CMD): CMD against the running stack (make stack-up) when there is one, else
# under a fresh stack that is stopped again afterwards.
on_stack = if $(STACK) status >/dev/null 2>&1; then $(1); else infra/local/with-stack.sh $(1); fi
GATEWAY_PORT ?= 9000

.PHONY: help prepare tools lint-tools infra-tools otelcol rie fetch scale build sweep-target stack-up stack-down stop status run test test-only lint fmt \
	lint-infra package deploy-local fuzz-tools fuzz-api soak durability reads bench vendor-check vendor-test

help:
	@echo "make run    - start the local stack and serve the gateway on 127.0.0.1:$(GATEWAY_PORT)"
	@echo "make test   - fmt check, clippy, and all tests against a fresh local stack"
	@echo "make stop   - stop a stack left running"
	@echo "make status - show the running stack and its addresses"
	@echo "make lint-infra   - sam validate --lint, cfn-lint (serverless rules), checkov, template tests"
	@echo "make package      - sam build: one release artifact per function, sizes printed"
	@echo "make deploy-local - the SAM stack created in moto's CloudFormation (offline)"
	@echo "make fuzz-api     - schemathesis over docs/openapi.yaml, standalone server and cargo lambda watch"
	@echo "make soak         - 50 clients for 10 min (SOAK_SECS, SOAK_CLIENTS): no lost row, no 5xx, no RSS trend"
	@echo "make durability   - the durability suite's long form (3 TabletServers, kill -9, rolling restart)"
	@echo "make reads        - 1,000,000 rows read exactly once through cursors across kills and a restart"
	@echo "make bench        - every benchmark on a fresh stack (BENCH_RUNS=3), table written to docs/benchmarks.md"
	@echo "make vendor-check - rebuild third_party/fluss-rs from the published crate and patches/, fail on any difference"
	@echo "make vendor-test  - the vendored fluss-rs crate's unit tests (the patches' tests among them)"

## tools: project virtualenv with moto (AWS emulator) and cargo-lambda.
tools: $(PY_STAMP)
$(PY_STAMP):
	@command -v java >/dev/null || { echo "Java 17 is required (java not on PATH)"; exit 1; }
	@command -v mvn >/dev/null || { echo "Maven is required (mvn not on PATH)"; exit 1; }
	test -x $(VENV)/bin/python || python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet $(PY_TOOLS)
	rm -f $(VENV)/.installed-* && touch $@

## infra-tools: the SAM CLI (with the SAM translator and pytest), cfn-lint with the serverless
## rules, and checkov, each in its own venv (idempotent).
infra-tools: $(SAM_STAMP) $(LINT_STAMP) $(CHECKOV_STAMP)
$(SAM_STAMP):
	test -x $(SAM_VENV)/bin/python || python3 -m venv $(SAM_VENV)
	$(SAM_VENV)/bin/pip install --quiet $(SAM_TOOLS)
	rm -f $(SAM_VENV)/.installed-* && touch $@
$(LINT_STAMP):
	test -x $(LINT_VENV)/bin/python || python3 -m venv $(LINT_VENV)
	$(LINT_VENV)/bin/pip install --quiet $(LINT_TOOLS)
	rm -f $(LINT_VENV)/.installed-* && touch $@
$(CHECKOV_STAMP):
	test -x $(CHECKOV_VENV)/bin/python || python3 -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --quiet $(CHECKOV_TOOLS)
	rm -f $(CHECKOV_VENV)/.installed-* && touch $@

## fuzz-tools: schemathesis in its own venv (idempotent).
fuzz-tools: $(FUZZ_STAMP)
$(FUZZ_STAMP):
	test -x $(FUZZ_VENV)/bin/python || python3 -m venv $(FUZZ_VENV)
	$(FUZZ_VENV)/bin/pip install --quiet $(FUZZ_TOOLS)
	rm -f $(FUZZ_VENV)/.installed-* && touch $@

## fuzz-api: the long API fuzz run (schemathesis over docs/openapi.yaml, through the standalone
## server and through `cargo lambda watch`), against a running stack (make stack-up) when there
## is one, else a fresh stack stopped afterwards. FUZZ_ARGS=--short is the CI size (make test).
FUZZ_ARGS ?=
fuzz-api: tools fuzz-tools build
	$(call on_stack,python3 tests/fuzz-api/run.py $(FUZZ_ARGS))

## soak: the reliability suite's soak (tests/tests/disruptive/reliability.rs) for SOAK_SECS
## seconds (default 600) with SOAK_CLIENTS clients (50): no lost row, no 5xx, no hang, no RSS
## trend above 40 bytes a request (a line fitted through a reading a second). make test runs the
## same test for 60 s, where part of the warm-up is still in the readings: bound 160.
## A fresh stack for the soak runs in the production shape (3 TabletServers, replication 3);
## a stack already running (make stack-up) is used as it is.
SOAK_SECS ?= 600
SOAK_CLIENTS ?= 50
soak: export FLUSS_STACK_SHAPE ?= production
soak: tools build
	cargo test -p integration-tests --test disruptive --no-run
	$(call on_stack,env SOAK_SECS=$(SOAK_SECS) SOAK_CLIENTS=$(SOAK_CLIENTS) \
	  cargo test -p integration-tests --test disruptive reliability::a_soak -- --nocapture)

## durability: the durability suite's long form (tests/tests/disruptive/durability.rs) on a
## private cluster in the production shape (3 TabletServers, replication 3, min in-sync 2):
## DURABILITY_ROUNDS kills of the leading TabletServer, each down DURABILITY_DOWN_SECS, then a
## rolling restart and a coordinator kill, each followed by DURABILITY_SETTLE_SECS of writes.
## make test runs it once with 6 s down and 4 s settles.
DURABILITY_ROUNDS ?= 3
DURABILITY_DOWN_SECS ?= 20
DURABILITY_SETTLE_SECS ?= 20
durability: tools build
	cargo test -p integration-tests --test disruptive --no-run
	DURABILITY_ROUNDS=$(DURABILITY_ROUNDS) DURABILITY_DOWN_SECS=$(DURABILITY_DOWN_SECS) \
	  DURABILITY_SETTLE_SECS=$(DURABILITY_SETTLE_SECS) \
	  cargo test -p integration-tests --test disruptive durability -- --nocapture

## reads: the exactly-once read test's acceptance form (tests/tests/disruptive/reads.rs): a
## consumer reads READS_ROWS rows through cursors while it is killed again and again and the
## TabletServer restarts; make test runs it with 60,000 rows.
READS_ROWS ?= 1000000
reads: tools build
	cargo test -p integration-tests --test disruptive --no-run
	READS_ROWS=$(READS_ROWS) cargo test -p integration-tests --test disruptive reads:: -- --nocapture

## lint-infra: infra/sam/template.yaml through every linter, zero findings (part of make test).
lint-infra: infra-tools
	infra/sam/lint.sh

## package: `sam build` of every function (cargo-lambda, release) into .aws-sam/build; prints each
## zip's size. ARCH=arm64 builds for Graviton (cargo-lambda cross-compiles with zig).
ARCH ?= x86_64
package: tools infra-tools
	infra/sam/package.sh $(ARCH)

## deploy-local: the SAM stack in moto (its own moto server): functions from .aws-sam/build when
## packaged, else the debug binaries.
deploy-local: tools infra-tools build
	MOTO_SERVER=$(VENV)/bin/moto_server $(SAM_VENV)/bin/python infra/sam/deploy_local.py deploy

## otelcol: the OpenTelemetry Collector the telemetry tests export to, built from the Go module
## proxy into the cache (idempotent; the first build takes a minute or two).
otelcol:
	@bash infra/local/otelcol/build.sh | sed '$$d'

## rie: the AWS Lambda Runtime Interface Emulator (a real Lambda runtime API, for the cold-start
## benchmark and the Managed Instances test and benchmark), built from the Go module proxy into
## the cache (idempotent).
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d
RIE := $(CACHE)/bin/aws-lambda-rie
RIE_STAMP := $(RIE).$(RIE_VERSION)
rie: $(RIE_STAMP)
$(RIE_STAMP):
	@command -v go >/dev/null || { echo "Go is required (go not on PATH)"; exit 1; }
	mkdir -p $(CACHE)/bin
	GOBIN=$(CACHE)/bin GOMODCACHE=$(CACHE)/go/mod GOCACHE=$(CACHE)/go/build GOPATH=$(CACHE)/go/path \
	  GOFLAGS="-modcacherw -buildvcs=false" CGO_ENABLED=0 \
	  go install github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)
	rm -f $(RIE).v* && touch $@

## bench: every benchmark (codec, write, lookup, memory, cold start under the runtime interface
## emulator, package sizes) in one go against a fresh stack, BENCH_RUNS runs each; the medians go
## into docs/benchmarks.md with the machine, date and commit (tests/bench/run.py).
BENCH_RUNS ?= 3
# The benchmark binaries run.py drives (each release link takes minutes on two cores).
BENCH_EXAMPLES := decode-bench write-bench lookup-bench read-bench footprint-bench coldstart-bench concurrency-bench otlp-bench arrow-bench
bench: tools fetch rie build
	cargo build --release --workspace --bins
	cargo build --release -p integration-tests --features bench $(BENCH_EXAMPLES:%=--example %)
	infra/local/with-stack.sh python3 tests/bench/run.py --runs $(BENCH_RUNS)

## scale: the scale model's measurements (docs/scale.md): N = 1, 8, 32, 128 production-like
## gateway processes (SCALE_NS) writing against a fresh stack (FLUSS_STACK_SHAPE=production for
## three TabletServers); prints its table. Minutes, and about 5 GB of memory at N = 128.
SCALE_NS ?= 1,8,32,128
scale: tools fetch build
	cargo build --release -p fluss-gateway
	cargo build --release -p integration-tests --features bench --example scale-bench
	SCALE_NS=$(SCALE_NS) infra/local/with-stack.sh $(CARGO_TARGET_DIR)/release/examples/scale-bench

## fetch: Fluss server and log4j jars from Maven Central (cached).
fetch:
	$(STACK) fetch

## build: every binary of the workspace (functions and the stack probe).
build:
	cargo build --workspace --bins

## sweep-target: drop build artifacts no build has read for three days (cargo rebuilds any it
## still needs) and the incremental caches.
sweep-target:
	@rm -rf $(CARGO_TARGET_DIR)/debug/incremental $(CARGO_TARGET_DIR)/release/incremental
	@find $(CARGO_TARGET_DIR) -mindepth 2 -type f -atime +3 -delete 2>/dev/null || true

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

## lint-tools: cargo-deny, built once into the cache (no prebuilt binary is served here; the
## PyPI wheel is too old for this Cargo.lock). A debug build: 1.5 min instead of about 5 on two
## cores, for a check that then takes 4 s instead of 1.
CARGO_TOOLS := $(CACHE)/cargo-tools
CARGO_DENY_VERSION := 0.20.2
CARGO_DENY := $(CARGO_TOOLS)/bin/cargo-deny
lint-tools: $(CARGO_DENY)
$(CARGO_DENY):
	cargo install --quiet --debug --locked --no-default-features cargo-deny@$(CARGO_DENY_VERSION) \
	  --root $(CARGO_TOOLS) --target-dir $(CACHE)/cargo-tools-target
	rm -rf $(CACHE)/cargo-tools-target

## lint: the house rules of CONTRIBUTING.md: format, clippy under the workspace lints, docs,
## the dependency policy (deny.toml), no import circle in any crate, file sizes.
lint: lint-tools
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --quiet --no-deps --workspace
	$(CARGO_DENY) --log-level error check bans licenses sources
	python3 tools/import-circles.py shared/*/src functions/*/src tools/keys/src
	python3 tools/file-sizes.py shared functions tools
	cargo clippy -p integration-tests --features bench --bins --examples -- -D warnings
	# The fuzz targets are a workspace of their own that nothing else compiles: checked here
	# (without libFuzzer's instrumentation), or a codec change leaves them broken unnoticed.
	cargo fmt --manifest-path fuzz/Cargo.toml --all -- --check
	cargo clippy --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings

## prepare: every tool make test needs, installed side by side (idempotent): on a fresh machine
## the downloads and builds of the virtualenvs, the two Go tools, the Fluss jars and cargo-deny
## overlap (about 10 min one after the other on two cores) instead of queueing.
prepare:
	$(MAKE) --no-print-directory -j4 --output-sync=target \
	  tools otelcol rie fetch fuzz-tools infra-tools lint-tools

## test: compile first (before the JVMs compete for the two cores), then run every test with a
## fresh stack that is stopped again whatever the outcome. One `cargo build --all-targets` builds
## the tests, the examples and the binaries the tests spawn with one feature resolution (a
## separate `--bins` build resolves without the dev-dependencies' features and rebuilt ~40
## crates). The vendored crate's tests run when their inputs changed (PATCHES.md, TESTED).
test: prepare sweep-target
	$(MAKE) --no-print-directory lint lint-infra
	cargo build --workspace --all-targets
	$(MAKE) --no-print-directory vendor-check
	third_party/fluss-rs/test-lib.sh --if-changed
	MOTO_SERVER=$(VENV)/bin/moto_server $(SAM_VENV)/bin/python -m pytest -q -p no:cacheprovider \
	  infra/sam/tests/test_deploy_local.py
	$(SAM_VENV)/bin/python -m pytest -q -p no:cacheprovider infra/local/tests
	infra/local/with-stack.sh bash -c 'cargo test --workspace && python3 tests/fuzz-api/run.py --short'

## vendor-check: third_party/fluss-rs rebuilt from fluss-rs 1.0.0 as published (sha256 checked)
## and its patch series (third_party/fluss-rs/patches), compared byte for byte with the tree.
vendor-check:
	third_party/fluss-rs/rebuild.sh

## vendor-test: the vendored fluss-rs crate's own unit tests, the patches' tests among them, with
## and without its `arrow-batch-cast` feature (in a copy in the cache: cargo does not test a
## dependency that is not a workspace member).
vendor-test:
	third_party/fluss-rs/test-lib.sh

## test-only: tests against an already running stack (make stack-up), for quick iterations.
test-only:
	cargo test --workspace
