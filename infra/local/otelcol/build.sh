#!/usr/bin/env bash
# Builds the minimal OpenTelemetry Collector (otelcol-fluss) from the Go module
# proxy into ${FLUSS_GW_CACHE:-$HOME/.cache/fluss-lambda-gateway}/bin/otelcol-fluss.
# Idempotent: a stamp next to the binary records the sha256 of go.mod, go.sum
# and main.go; when it matches, nothing is rebuilt. Prints the binary's path
# on success as the last line.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${FLUSS_GW_CACHE:-$HOME/.cache/fluss-lambda-gateway}"
bin_dir="$cache/bin"
bin="$bin_dir/otelcol-fluss"
stamp="$bin.stamp"

command -v go >/dev/null 2>&1 || { echo "otelcol-fluss: 'go' not found on PATH" >&2; exit 1; }
mkdir -p "$bin_dir"

# Serialise concurrent builds (parallel test runners) when flock is available.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$bin_dir/.otelcol-fluss.lock"
  flock 9
fi

want="$(cd "$here" && cat go.mod go.sum main.go | sha256sum | cut -d' ' -f1)"
if [[ -x "$bin" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
  echo "otelcol-fluss: up to date"
  echo "$bin"
  exit 0
fi

export GOMODCACHE="$cache/go/mod"
export GOCACHE="$cache/go/build"
export GOPATH="$cache/go/path"
# -modcacherw: keep the module cache deletable with a plain rm -rf.
# -mod=readonly: go.sum is complete; never rewrite go.mod/go.sum here.
# -buildvcs=false: the source sits inside the project's git tree.
export GOFLAGS="-modcacherw -mod=readonly -buildvcs=false"
export CGO_ENABLED=0

tmp="$bin_dir/.otelcol-fluss.tmp.$$"
trap 'rm -f "$tmp" "$stamp.tmp.$$"' EXIT

echo "otelcol-fluss: building the OpenTelemetry Collector (first time: a few minutes)"
start=$SECONDS
(cd "$here" && go build -trimpath -ldflags='-s -w' -o "$tmp" .)
mv -f "$tmp" "$bin"
printf '%s\n' "$want" >"$stamp.tmp.$$"
mv -f "$stamp.tmp.$$" "$stamp"
echo "otelcol-fluss: built in $((SECONDS - start))s"
echo "$bin"
