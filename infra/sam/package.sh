#!/usr/bin/env bash
# `make package [ARCH=arm64]`: `sam build` of every function of infra/sam/template.yaml (the
# rust-cargolambda build method: `cargo lambda build --release` per binary) into .aws-sam/build,
# then each function zipped as `sam deploy` uploads it, with its size against the 8 MB goal.
set -euo pipefail
arch="${1:-x86_64}"
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
command -v cargo-lambda >/dev/null || { echo "cargo-lambda is not on PATH (make tools installs it)"; exit 1; }
if [[ "$arch" == arm64 ]]; then
  # cargo-lambda cross-compiles with zig (from PyPI, with cargo-lambda); Rust needs the target.
  rustup target list --installed | grep -qx aarch64-unknown-linux-gnu \
    || rustup target add aarch64-unknown-linux-gnu
fi
started=$(date +%s)
"$SAM_VENV/bin/sam" build --template infra/sam/template.yaml --config-file "$here/samconfig.toml" \
  --beta-features --parameter-overrides "Architecture=$arch"
echo "sam build ($arch): $(( $(date +%s) - started )) s"
"$SAM_VENV/bin/python" - "$root/.aws-sam/build" <<'PY'
import io, sys, zipfile
from pathlib import Path
build = Path(sys.argv[1])
limit = 8 * 1024 * 1024
print(f"{'function':<20} {'bootstrap':>10} {'zip':>9}  (goal: zip <= 8 MB)")
worst = 0
for fn in sorted(p for p in build.iterdir() if (p / "bootstrap").is_file()):
    data = (fn / "bootstrap").read_bytes()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bootstrap", data)
    size = len(buf.getvalue())
    worst = max(worst, size)
    print(f"{fn.name:<20} {len(data) / 2**20:>8.1f}MB {size / 2**20:>7.1f}MB")
print("all within the goal" if worst <= limit else f"largest zip {worst / 2**20:.1f} MB is over the 8 MB goal")
PY
