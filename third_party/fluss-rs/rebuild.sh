#!/usr/bin/env bash
# `make vendor-check`: rebuilds this directory from the published fluss-rs crate, the import step
# below and the patch series in patches/, and fails on any difference from the directory.
#
#   rebuild.sh            rebuild in a temporary directory, compare, exit 1 on any difference
#   rebuild.sh --git DIR  rebuild in DIR (new) as a git repository, one commit per patch (git am),
#                         to edit the series; PATCHES.md says how to write it back
#
# The crate comes from cargo's download cache, else from static.crates.io into the project cache,
# and must have the sha256 pinned below: the registry index's checksum of the published crate
# (what a Cargo.lock records for it; no lock here does, as both workspaces use this copy).
#
# Compared: every file, byte for byte, and which files are executable. Not compared, because the
# published crate has no such files and they are this directory's own: patches/, PATCHES.md and
# the two scripts (rebuild.sh, test-lib.sh) and TESTED (test-lib.sh's record).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
name=fluss-rs
version=1.0.0
crate_file="$name-$version.crate"
url="https://static.crates.io/crates/$name/$crate_file"
ours=(patches PATCHES.md rebuild.sh test-lib.sh TESTED)

# sha256 of fluss-rs-1.0.0.crate as published (https://index.crates.io/fl/us/fluss-rs, `cksum`).
published_sha=a496c796a0e7831d4e1d5679f5e7b5973948f612108d70461143994bdff2a848

crate_path() {
  local cached
  for cached in "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/"$crate_file"; do
    if [[ -f "$cached" ]]; then echo "$cached"; return; fi
  done
  local dl="${FLUSS_GW_CACHE:-$HOME/.cache/fluss-lambda-gateway}/crates/$crate_file"
  if [[ ! -f "$dl" ]]; then
    mkdir -p "$(dirname "$dl")"
    curl -fsSL --retry 3 -o "$dl.part" "$url"
    mv "$dl.part" "$dl"
  fi
  echo "$dl"
}

# The import: the crate as published, without what the workspace cannot use. tests/ and the
# [[test]] tables: integration tests against a live cluster (and a proto check of upstream's
# repository), not vendored. regen.sh: it runs a generator crate (gen/) that is not published.
# .cargo_vcs_info.json and Cargo.lock: packaging records; a path dependency's lock is ignored.
import_crate() {
  local dir="$1"
  rm -r "$dir/tests" "$dir/regen.sh" "$dir/.cargo_vcs_info.json" "$dir/Cargo.lock"
  awk '/^\[\[test\]\]$/ { skip = 1; next } skip && /^$/ { skip = 0; next } !skip' \
    "$dir/Cargo.toml" > "$dir/Cargo.toml.new"
  mv "$dir/Cargo.toml.new" "$dir/Cargo.toml"
}

unpack() {
  local into="$1" crate sha want
  crate="$(crate_path)"
  want="$published_sha"
  sha="$(sha256sum "$crate" | cut -d' ' -f1)"
  if [[ -z "$want" || "$sha" != "$want" ]]; then
    echo "$crate: sha256 $sha, expected $want (remove the file to fetch it again)" >&2
    exit 1
  fi
  tar -xzf "$crate" -C "$into"
  import_crate "$into/$name-$version"
}

patches=("$here"/patches/*.patch)

if [[ "${1:-}" == "--git" ]]; then
  dest="${2:?usage: rebuild.sh --git DIR}"
  [[ ! -e "$dest" ]] || { echo "$dest exists" >&2; exit 1; }
  mkdir -p "$dest.unpack"
  unpack "$dest.unpack"
  mv "$dest.unpack/$name-$version" "$dest"
  rmdir "$dest.unpack"
  export GIT_COMMITTER_NAME="${GIT_COMMITTER_NAME:-rebuild.sh}"
  export GIT_COMMITTER_EMAIL="${GIT_COMMITTER_EMAIL:-rebuild.sh@localhost}"
  git -C "$dest" init -q
  git -C "$dest" add -A
  git -C "$dest" -c user.name="$GIT_COMMITTER_NAME" -c user.email="$GIT_COMMITTER_EMAIL" \
    commit -q -m "fluss-rs $version as published, imported (rebuild.sh)"
  git -C "$dest" am -q --keep-non-patch "${patches[@]}"
  git -C "$dest" log --oneline
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
unpack "$tmp"
built="$tmp/$name-$version"
# git apply outside any repository: inside one it would take the paths as relative to its root.
for patch in "${patches[@]}"; do
  (cd "$built" && GIT_CEILING_DIRECTORIES="$tmp" git apply --whitespace=nowarn "$patch") \
    || { echo "patches/${patch##*/} does not apply" >&2; exit 1; }
done

excludes=()
for f in "${ours[@]}"; do excludes+=(-x "$f"); done
status=0
diff -r "${excludes[@]}" "$built" "$here" || status=1
executables() {
  (cd "$1" && find . -type f -perm -u+x | { grep -v -x -F -e ./rebuild.sh -e ./test-lib.sh || true; } | sort)
}
if ! diff <(executables "$built") <(executables "$here") > "$tmp/modes"; then
  echo "executable bits differ (< rebuilt, > third_party/fluss-rs):" >&2
  cat "$tmp/modes" >&2
  status=1
fi
if [[ $status -ne 0 ]]; then
  echo "third_party/fluss-rs differs from fluss-rs $version + ${#patches[@]} patches (above:" \
    "< rebuilt, > tree): change the tree through a patch (PATCHES.md)" >&2
  exit 1
fi
echo "third_party/fluss-rs = fluss-rs $version (sha256 verified) + import + ${#patches[@]} patches," \
  "byte for byte"
