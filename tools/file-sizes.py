#!/usr/bin/env python3
"""Checks that no production Rust file is longer than the house limit (CONTRIBUTING.md).

Usage: python3 tools/file-sizes.py [--max N] DIR [DIR ...]

Counts the lines of each `.rs` file below the given folders above its first `#[cfg(test)]`
line (the in-file tests do not count); files that are tests as a whole (`*_tests.rs`,
`test_support.rs`, anything under a `tests/` or `benches/` folder) are skipped. Prints every
file over the limit and exits 1 if there is one.
"""

import os
import sys


def production_lines(path):
    with open(path, encoding="utf-8") as f:
        count = 0
        for line in f:
            if line.strip() == "#[cfg(test)]":
                break
            count += 1
    return count


def is_test_file(path):
    parts = path.split(os.sep)
    name = parts[-1]
    return (
        name.endswith("_tests.rs")
        or name == "test_support.rs"
        or "tests" in parts[:-1]
        or "benches" in parts[:-1]
    )


def main(argv):
    limit = 600
    if len(argv) > 2 and argv[1] == "--max":
        limit = int(argv[2])
        argv = argv[2:]
    dirs = argv[1:]
    if not dirs:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    over = []
    checked = 0
    for top in dirs:
        for root, subdirs, files in os.walk(top):
            subdirs[:] = [d for d in subdirs if d != "target"]
            for name in files:
                path = os.path.join(root, name)
                if not name.endswith(".rs") or is_test_file(path):
                    continue
                checked += 1
                n = production_lines(path)
                if n > limit:
                    over.append((n, path))
    for n, path in sorted(over, reverse=True):
        print(f"{path}: {n} lines above its tests (limit {limit})")
    if over:
        return 1
    print(f"{checked} production files, none over {limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
