#!/usr/bin/env python3
"""`make bench`: every benchmark of the gateway in one go, against the running local stack.

Runs each benchmark binary (release builds of the examples of `tests/`) several times, collects
the `FIGURE <bench> <measure> <value> <unit>` lines they print beside their own tables, zips
each release function as Lambda would take it (`bootstrap`), and writes the medians with the
machine, date and commit into docs/benchmarks.md between the `make bench` markers (the rest of
that file is the benchmarks' narrative and stays as written). Progress goes to stderr.

Usage: tests/bench/run.py [--runs N] [--only NAME[,NAME...]] [--no-write]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
RELEASE = TARGET / "release"
DOC = ROOT / "docs" / "benchmarks.md"
BEGIN = "<!-- make bench: begin (written by tests/bench/run.py; edit the script, not this table) -->"
END = "<!-- make bench: end -->"

# (name, example binary, arguments): each prints FIGURE lines.
BENCHES = [
    ("decode", "decode-bench", ["1000", "100", "5"]),
    ("write", "write-bench", ["1000", "300", "500"]),
    ("lookup", "lookup-bench", ["100", "300", "1000"]),
    ("read", "read-bench", ["3000000", "5", "50"]),
    ("footprint", "footprint-bench", []),
    ("coldstart", "coldstart-bench", []),
    ("concurrency", "concurrency-bench", ["5", "100"]),
    ("otlp", "otlp-bench", ["1000", "50", "5", "100"]),
    ("arrow", "arrow-bench", ["10000", "60", "5"]),
]

# The functions a deployment packages (infra/sam/template.yaml), and the all-in-one server.
FUNCTIONS = [
    "fluss-write",
    "fluss-ddl",
    "fluss-lookup",
    "fluss-config",
    "fluss-otlp",
    "fluss-ingest",
    "fluss-authorizer",
    "fluss-gateway",
]

# (bench, measure) -> (comparison, goal, words): the goals of the [scale] issue (#42), raised
# from the [performance] issue's and put as ratios inside one run where a rate moves with the
# machine. The decoder's 2x is of its 1,170,000 rows/s in the table of 9e57519.
GOALS = {
    ("decode", "streaming_parse_decode"): (">=", 2_340_000, "≥ 2,340,000 rows/s on one core (2× 9e57519)"),
    ("decode", "streaming_vs_skip"): (">=", 0.5, "≥ 0.5× serde's IgnoredAny skip of the same bodies"),
    ("write", "batch_ratio"): (">=", 0.98, "≥ 0.98× direct"),
    ("write", "batch_cpu_overhead_share"): ("<=", 0.2, "≤ 0.20 of the direct client's CPU per batch"),
    ("write", "single_p50_overhead"): ("<=", 0.3, "≤ 0.3 ms"),
    ("lookup", "batch_ratio"): (">=", 0.98, "≥ 0.98× direct"),
    ("read", "arrow_ratio"): (">=", 0.9, "≥ 0.9× direct batch scanner"),
    ("footprint", "rss_idle"): ("<=", 30, "≤ 30 MB"),
    ("footprint", "rss_peak_under_load"): ("<=", 100, "≤ 100 MB"),
    ("coldstart", "spawn_to_first_200"): ("<=", 25, "≤ 25 ms"),
    ("concurrency", "direct_ratio_n16"): (">=", 0.95, "≥ 0.95× direct with 16 writers"),
    ("otlp", "decode_protobuf_to_rows"): (">=", 500_000, "≥ 500,000 records/s on one core"),
    ("otlp", "e2e_ratio"): (">=", 0.9, "≥ 0.9× NDJSON, same rows"),
    ("arrow", "decode_to_batches"): (">=", 5_000_000, "≥ 5,000,000 rows/s on one core"),
    ("arrow", "route_ratio"): (">=", 0.95, "≥ 0.95× direct append_arrow_batch"),
    ("package", "zip"): ("<=", 6, "≤ 6 MB"),
}

FIGURE = re.compile(r"^FIGURE (\S+) (\S+) (\S+) (\S+)$")


def progress(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def run_bench(name: str, binary: str, args: list[str], runs: int) -> dict:
    """Runs one benchmark `runs` times; {(bench, measure): (unit, [values])}."""
    path = RELEASE / "examples" / binary
    if not path.exists():
        raise SystemExit(f"{path} is missing: make bench builds it (cargo build --release -p integration-tests --features bench --examples)")
    figures: dict = {}
    for run in range(1, runs + 1):
        progress(f"{name}: run {run}/{runs} ({binary} {' '.join(args)})")
        started = time.monotonic()
        done = subprocess.run([str(path), *args], cwd=ROOT, capture_output=True, text=True)
        if done.returncode != 0:
            sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
            raise SystemExit(f"{binary} failed (exit {done.returncode})")
        found = 0
        goals = []
        for line in done.stdout.splitlines():
            m = FIGURE.match(line.strip())
            if m:
                bench, measure, value, unit = m.groups()
                figures.setdefault((bench, measure), (unit, []))[1].append(float(value))
                found += 1
                # Each run's goal figures at full precision: the table keeps only the median
                # and the spread, and a figure near its goal needs its runs to be judged.
                if (bench, measure) in GOALS:
                    goals.append(f"{measure} {float(value):.4g} {unit}")
        if not found:
            raise SystemExit(f"{binary} printed no FIGURE line")
        detail = f": {', '.join(goals)}" if goals else ""
        progress(f"{name}: run {run} done in {time.monotonic() - started:.1f} s, {found} figures{detail}")
    return figures


def package_sizes() -> dict:
    """Each function's release binary zipped as `bootstrap` (what a `provided.al2023` function
    deploys), in MB."""
    figures: dict = {}
    out = TARGET / "bench-zips"
    out.mkdir(parents=True, exist_ok=True)
    for function in FUNCTIONS:
        binary = RELEASE / function
        if not binary.exists():
            raise SystemExit(f"{binary} is missing: make bench builds it (cargo build --release --bins)")
        archive = out / f"{function}.zip"
        with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
            info = zipfile.ZipInfo("bootstrap")
            info.external_attr = 0o755 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, binary.read_bytes(), compresslevel=9)
        zipped = archive.stat().st_size / 1e6
        figures[("package", f"zip_{function}")] = ("MB", [zipped])
        figures[("package", f"binary_{function}")] = ("MB", [binary.stat().st_size / 1e6])
        progress(f"package: {function} {binary.stat().st_size / 1e6:.1f} MB, zipped {zipped:.2f} MB")
    return figures


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        mem_kb = next(
            int(line.split()[1])
            for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("MemTotal")
        )
        mem = f"{mem_kb / 1024 / 1024:.0f} GiB"
    except (OSError, StopIteration, ValueError):
        mem = "? GiB"
    return f"{os.cpu_count()} cores ({model}), {mem}, {platform.system()} {platform.release()}"


def commit() -> str:
    sha = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return sha + ("-dirty" if dirty else "")


# The all-in-one server: local runs and self-hosting, not one of the template's functions, so
# the per-function zip goal does not apply (its size is still printed).
NOT_A_FUNCTION = "fluss-gateway"


def verdict(key: tuple, value: float) -> str:
    if key == ("package", f"zip_{NOT_A_FUNCTION}"):
        return "not a deployed function (all-in-one server)"
    goal = GOALS.get(key) or (GOALS.get(("package", "zip")) if key[1].startswith("zip_") else None)
    if not goal:
        return ""
    op, target, words = goal
    met = value >= target if op == ">=" else value <= target
    return f"{words}: {'met' if met else 'NOT met'}"


def fmt(value: float, unit: str) -> str:
    if unit in ("rows/s", "keys/s", "records/s"):
        return f"{value:,.0f}"
    # Ratios and package sizes sit near their goals (0.95×, 8 MB): two decimals would round
    # 0.947 up to a goal it misses.
    if unit in ("x", "MB") and value < 10:
        return f"{value:.3f}"
    return f"{value:.2f}"


def table(figures: dict, runs: int) -> str:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        BEGIN,
        "",
        f"Machine: {machine()}. Date: {now}. Commit: `{commit()}`. Median of {runs} runs per "
        "benchmark figure (the package sizes are one build). Reproduce with `make bench`.",
        "",
        "| benchmark | measure | median | unit | runs (min – max) | goal |",
        "|---|---|---|---|---|---|",
    ]
    for (bench, measure), (unit, values) in figures.items():
        median = statistics.median(values)
        spread = f"{fmt(min(values), unit)} – {fmt(max(values), unit)}" if len(values) > 1 else "1 build"
        lines.append(
            f"| {bench} | {measure} | {fmt(median, unit)} | {unit} | {spread} | {verdict((bench, measure), median)} |"
        )
    lines += ["", END]
    return "\n".join(lines)


def write_doc(section: str) -> None:
    text = DOC.read_text()
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
        text = head + section + tail
    else:
        marker = "\n## "
        at = text.find(marker)
        intro = "\n## `make bench` (latest run)\n\n"
        text = text[:at] + intro + section + "\n" + text[at:] if at >= 0 else text + intro + section + "\n"
    DOC.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", default="", help="comma-separated benchmark names (and/or `package`)")
    parser.add_argument("--no-write", action="store_true", help="print the table, leave docs/ alone")
    opts = parser.parse_args()
    only = {n for n in opts.only.split(",") if n}
    figures: dict = {}
    for name, binary, args in BENCHES:
        if only and name not in only:
            continue
        figures.update(run_bench(name, binary, args, opts.runs))
    if not only or "package" in only:
        figures.update(package_sizes())
    section = table(figures, opts.runs)
    print(section)
    if not opts.no_write:
        write_doc(section)
        progress(f"wrote {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
