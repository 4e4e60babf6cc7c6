#!/usr/bin/env bash
# `make vendor-test`: the vendored crate's own unit tests (`cargo test --lib`), the patches' tests
# among them, twice: with the workspace's features (no `arrow-batch-cast`), and with the cast
# (patch 5's five conversion tests run only with it).
#
# `test-lib.sh --workspace-features` (what `make test` runs): the first run only. Every patch's
# own test runs there; the cast run adds upstream's conversion tests, which patch 5 put behind the
# feature, and costs a second build of the crate and of arrow's cast kernels (minutes on a fresh
# machine).
#
# `test-lib.sh --if-changed` (what `make test` runs): the first run, unless TESTED records that
# these very inputs passed it — the crate's sources, its manifest, this script, the workspace's
# lock and dev profile, hashed. A passing run writes TESTED (commit it): a fresh machine then
# skips the crate's ~5 minutes of dependency builds (their features differ from the workspace's),
# and any change to the crate, a patch or a dependency version runs the tests again.
#
# In a copy outside the workspace: cargo tests no dependency that has dev-dependencies, and the
# workspace does not list the crate as a member (its clippy and fmt would then cover upstream
# code). The copy keeps its place in the project cache and the sources' times, so that an
# unchanged crate is not rebuilt; it takes the workspace's Cargo.lock (the versions the gateway
# ships; cargo adds the crate's dev-dependencies) and its dev profile for dependencies, so that
# they come out of the shared target directory as the workspace built them.
#
# Skipped: client::write::batch::tests::test_arrow_log_write_batch_estimated_size, which fails on
# the unpatched 1.0.0 sources with this lock too (PATCHES.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${FLUSS_GW_CACHE:-$HOME/.cache/fluss-lambda-gateway}"
copy="$cache/fluss-rs-test"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$cache/target}"
known_failure=test_arrow_log_write_batch_estimated_size
# Each patch's test, and patch 5's conversion tests: a rename or a lost cfg fails the run here
# instead of dropping the test silently.
without_cast=(
  row::decimal::tests::unscaled_long_precision_matches_compute_precision
  client::write::accumulator::tests::aborted_batches_leave_the_writer_usable_until_the_memory_limiter_closes
  record::arrow::tests::without_the_cast_feature_encoding_differences_are_refused
  client::table::scanner::tests::a_scan_s_fetch_limits_replace_the_connection_s_in_its_fetch_requests
  client::write::sender::tests::a_shutdown_drain_that_cannot_send_yields_and_can_be_aborted
  rpc::server_connection::tests::control_requests_are_counted_by_api_apart_from_the_data_path_series
  row::binary_map::tests::a_reset_writer_builds_the_same_maps_as_fresh_writers
  client::write::accumulator::tests::flush_counter_decremented_when_the_wait_is_dropped
  client::lookup::lookup_queue::tests::send_now_ends_the_window_once_it_holds_a_lookup
  client::table::lookup::tests::test_decoder_cache_missing_lists_unknown_schema_ids_once
)
with_cast=(
  record::arrow::tests::encoding_differences_are_converted_not_rejected
  record::arrow::tests::names_are_checked_even_when_a_column_converts
  record::arrow::tests::converting_column_reports_not_null_violations_consistently
  record::arrow::tests::nested_encoding_differences_are_converted
  record::arrow::tests::nested_column_types_must_match_the_table
)

# The inputs of a run, hashed with paths relative to this directory (the same in every clone).
inputs_hash() {
  local LC_ALL=C; export LC_ALL
  (cd "$here" && {
    find src proto -type f -print0 | sort -z | xargs -0 sha256sum
    sha256sum Cargo.toml test-lib.sh ../../Cargo.lock
    awk '/^\[/ { p = ($0 ~ /^\[profile\.dev[].]/) } p' ../../Cargo.toml
  } | sha256sum | cut -d' ' -f1)
}
hash="$(inputs_hash)"
if [[ "${1:-}" == --if-changed ]]; then
  if [[ -f "$here/TESTED" ]] && grep -q -x -F "inputs $hash" "$here/TESTED"; then
    echo "fluss-rs lib tests: skipped, these inputs passed on $(sed -n 's/^date //p' "$here/TESTED")" \
      "(third_party/fluss-rs/TESTED; make vendor-test runs them anyway)"
    exit 0
  fi
  set -- --workspace-features
fi

mkdir -p "$copy"
for d in src proto; do
  rm -rf "${copy:?}/$d"
  cp -a "$here/$d" "$copy/$d"
done
cp -a "$here/README.md" "$here/LICENSE" "$here/NOTICE" "$copy/"
# Rewritten only when it changes, so that cargo sees the same manifest.
{
  cat "$here/Cargo.toml"
  echo
  echo "# The workspace's dev profile (test-lib.sh)."
  awk '/^\[/ { p = ($0 ~ /^\[profile\.dev[].]/) } p' "$root/Cargo.toml"
} > "$copy/Cargo.toml.new"
if cmp -s "$copy/Cargo.toml.new" "$copy/Cargo.toml"; then
  rm "$copy/Cargo.toml.new"
else
  mv "$copy/Cargo.toml.new" "$copy/Cargo.toml"
fi
# The workspace's lock, again whenever it changes (cargo prunes it and adds the dev-dependencies).
if ! cmp -s "$root/Cargo.lock" "$copy/workspace.lock"; then
  cp "$root/Cargo.lock" "$copy/workspace.lock"
  cp "$root/Cargo.lock" "$copy/Cargo.lock"
fi

run() {
  local features="$1" log="$copy/test-$1.log"
  shift
  echo "fluss-rs lib tests, features $features"
  (cd "$copy" && cargo test --lib --no-default-features --features "$features" \
    -- --skip "$known_failure") 2>&1 | tee "$log" | grep -E '^(test result|error|failures)' || true
  grep -q '^test result: ok\.' "$log" || { cat "$log"; exit 1; }
  for t in "$@"; do
    grep -q -x -F "test $t ... ok" "$log" || { echo "$t did not run and pass" >&2; exit 1; }
  done
}
run storage-memory "${without_cast[@]}"
printf 'inputs %s\ndate %s\n' "$hash" "$(date -u +%F)" > "$here/TESTED"
if [[ "${1:-}" != --workspace-features ]]; then
  run storage-memory,arrow-batch-cast "${with_cast[@]}"
fi
