"""`make run` as a user runs it, then stopped as a terminal or a supervisor stops it: SIGTERM to
its whole process group, with the reader of its output already gone. Nothing it started may be
left: not the Fluss processes, not moto, not `cargo lambda watch`. Its output must not hold an
API key, and the function log it writes is private (0600).

Runs against a private stack folder and a free port (the suite's own stack is not touched).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purpose.
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False


def watchers(port: int) -> list[int]:
    """Processes of `cargo lambda watch` (and its children) serving `port`."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "lambda" in cmd and f"-P {port}" in cmd and alive(int(proc.name)):
            found.append(int(proc.name))
    return found


def process_group(pgid: int) -> str:
    """One line per process of the group `pgid`: pid, state, where it waits, its ignored and
    caught signal masks, and its command line."""
    lines = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid:
                continue
            status = dict(
                line.split(":\t", 1)
                for line in (proc / "status").read_text().splitlines()
                if ":\t" in line
            )
            wchan = (proc / "wchan").read_text()
            cmd = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue
        lines.append(
            f"  {proc.name} {fields[0]} wchan={wchan} SigIgn={status.get('SigIgn', '?').strip()} "
            f"SigCgt={status.get('SigCgt', '?').strip()} {cmd[:160]}"
        )
    return "\n".join(sorted(lines)) or "  (none)"


def health(port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5) as r:
            return r.status
    except Exception:  # noqa: BLE001 - not up yet, whatever the reason
        return 0


def test_sigterm_to_make_runs_process_group_stops_everything(tmp_path):
    stack_dir = tmp_path / "stack"
    port = free_port()
    env = dict(os.environ, FLUSS_STACK_DIR=str(stack_dir))
    env.pop("MAKEFLAGS", None)
    env.pop("MAKELEVEL", None)
    out_path = tmp_path / "make-run.out"
    reader = open(out_path, "wb")
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "run", f"GATEWAY_PORT={port}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    pgid = proc.pid
    try:
        started = time.monotonic()
        served = False
        while time.monotonic() - started < 600:
            line = proc.stdout.readline()
            if not line:
                break
            reader.write(line)
            if b"is serving on" in line:
                served = True
                break
        reader.close()
        assert served, f"make run did not serve; output:\n{out_path.read_text()[-3000:]}"
        # The banner's remaining lines, then the reader goes away (a closed terminal, a pipe
        # whose reader exited with make).
        time.sleep(1)
        banner = out_path.read_text() + proc.stdout.read1(65536).decode(errors="replace")
        assert health(port) == 200
        pids = json.loads((stack_dir / "pids.json").read_text())
        assert set(pids) >= {"zookeeper", "coordinator", "tablet", "moto"}, pids
        assert watchers(port), "cargo lambda watch is not running"
        env_text = (stack_dir / "stack.env").read_text()
        keys = [l.split("=", 1)[1] for l in env_text.splitlines() if l.startswith(("GATEWAY_API_KEY=", "ALICE_API_KEY="))]
        assert len(keys) == 2 and all(keys), "make run writes both keys to the env file"
        for key in keys:
            assert key not in banner, "make run printed an API key"
        log = stack_dir / "logs" / "cargo-lambda.log"
        assert stat.S_IMODE(log.stat().st_mode) == 0o600, oct(log.stat().st_mode)

        group_before = process_group(pgid)
        proc.stdout.close()
        t0 = time.monotonic()
        os.killpg(pgid, signal.SIGTERM)
        left: list[str] = []
        while time.monotonic() - t0 < 60:
            left = [f"{n} ({p})" for n, p in pids.items() if alive(p)]
            left += [f"watch ({p})" for p in watchers(port)]
            if not left:
                break
            time.sleep(0.5)
        # What the group was doing when the signal went out, and what is left of it: which
        # process ignored or never saw SIGTERM (SigIgn / SigCgt), and where each one waits.
        assert not left, (
            f"left running {time.monotonic() - t0:.0f}s after SIGTERM: {left}\n"
            f"make run's process group before the signal:\n{group_before}\n"
            f"after:\n{process_group(pgid)}\nrun.sh's output:\n{out_path.read_text()[-1500:]}"
        )
        print(f"make run: served after {t0 - started:.0f}s; everything stopped {time.monotonic() - t0:.1f}s after SIGTERM")
    finally:
        for pid in [pgid] + watchers(port):
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        subprocess.run(
            ["python3", str(ROOT / "infra/local/stack.py"), "stop"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )
