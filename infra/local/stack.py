#!/usr/bin/env python3
"""Local development stack of the Fluss Lambda Gateway: one entry point.

Starts a *real* Apache Fluss cluster (ZooKeeper + CoordinatorServer + TabletServer from the
Maven Central jars) and moto in server mode on 127.0.0.1, and writes every address the tests and
`make run` need into one env file.

    stack.py fetch    download and verify the Fluss jars (idempotent, cached outside the clone)
    stack.py start    fetch, then start everything in a fresh state folder and wait for readiness
    stack.py stop     stop every process of the stack and delete its state (logs are kept)
    stack.py status   show what runs, where, and where the logs are
    stack.py restart NAME    start one server again on its data after a test stopped it (`tablet`,
                             `tablet-1`, `tablet-2`, `coordinator`); `restart-tablet` = `restart tablet`
    stack.py env      print the path of the env file

Only the Python standard library is used; Maven (`mvn`) and Java 17 must be on PATH.
Settings come from environment variables (see `Settings`); ports default to free ones.

`FLUSS_STACK_SHAPE` picks the cluster's shape (see `SHAPES`): `dev` (the default: one
TabletServer, replication 1, what `make run` and most tests use) or `production` (three
TabletServers, default replication 3, at least two in-sync replicas for a write: the shape whose
acknowledged rows survive the loss of one server; the durability suite runs on it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

# The one place the Fluss version is pinned. 1.0.0 (which matches fluss-rs 1.0.0) is not served
# by Maven Central as of 2026-12-02 (`mvn dependency:copy` answers "not found"), so the stack runs
# the previous release. Override with FLUSS_VERSION to try another one.
FLUSS_VERSION = os.environ.get("FLUSS_VERSION", "0.9.1-incubating")
# The log4j jars of the binary distribution's lib/ for that version (SLF4J 1.x binding).
LOG4J_VERSION = os.environ.get("FLUSS_LOG4J_VERSION", "2.25.4")
LOG4J_ARTIFACTS = ["log4j-slf4j-impl", "log4j-api", "log4j-core", "log4j-1.2-api"]

# Classes whose presence proves the jar is the self-contained server (incl. shaded ZooKeeper).
REQUIRED_CLASSES = [
    "org/apache/fluss/server/coordinator/CoordinatorServer.class",
    "org/apache/fluss/server/tablet/TabletServer.class",
    "org/apache/fluss/shaded/zookeeper3/org/apache/zookeeper/server/quorum/QuorumPeerMain.class",
]
ZK_MAIN = "org.apache.fluss.shaded.zookeeper3.org.apache.zookeeper.server.quorum.QuorumPeerMain"
COORDINATOR_MAIN = "org.apache.fluss.server.coordinator.CoordinatorServer"
TABLET_MAIN = "org.apache.fluss.server.tablet.TabletServer"

# SASL/PLAIN users of the local cluster. `admin` is a super user; alice and bob are not.
SASL_USERS = ["admin", "alice", "bob"]

# Stop order: dependants first (every TabletServer before these).
STOP_ORDER = ["coordinator", "zookeeper", "moto"]


@dataclass(frozen=True)
class Shape:
    """How many TabletServers run and what replication tables get by default."""

    tablets: int
    # `default.replication.factor`: tables created without their own factor get this one.
    replication: int
    # `log.replica.min-in-sync-replicas-number`: a write with acks=all (the gateway's) is refused
    # unless this many replicas hold it, so an acknowledged row is on two servers at least.
    min_in_sync: int


SHAPES = {
    "dev": Shape(tablets=1, replication=1, min_in_sync=1),
    "production": Shape(tablets=3, replication=3, min_in_sync=2),
}


def tablet_name(server_id: int) -> str:
    """The process name of TabletServer `server_id` (pids.json, logs): `tablet` for 0, as it
    always was, `tablet-1`, `tablet-2` for the others."""
    return "tablet" if server_id == 0 else f"tablet-{server_id}"

JVM_COMMON = [
    "-XX:+UseG1GC",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
]


def _cache_dir() -> Path:
    return Path(os.environ.get("FLUSS_GW_CACHE", Path.home() / ".cache" / "fluss-lambda-gateway"))


@dataclass
class Settings:
    """Everything configurable, read from the environment once."""

    cache: Path = field(default_factory=_cache_dir)
    # Where the running stack keeps its state, logs, pid file and env file.
    stack_dir: Path = field(
        default_factory=lambda: Path(os.environ.get("FLUSS_STACK_DIR", _cache_dir() / "stack"))
    )
    # 0 means "pick a free port".
    ports: dict = field(
        default_factory=lambda: {
            name: int(os.environ.get(var, "0"))
            for name, var in [
                ("zookeeper", "FLUSS_ZK_PORT"),
                ("coordinator_internal", "FLUSS_CS_INTERNAL_PORT"),
                ("coordinator_sasl", "FLUSS_CS_SASL_PORT"),
                ("coordinator_plain", "FLUSS_CS_PLAIN_PORT"),
                ("tablet_internal", "FLUSS_TS_INTERNAL_PORT"),
                ("tablet_sasl", "FLUSS_TS_SASL_PORT"),
                ("tablet_plain", "FLUSS_TS_PLAIN_PORT"),
                ("moto", "MOTO_PORT"),
            ]
        }
    )
    start_timeout_s: float = float(os.environ.get("FLUSS_STACK_START_TIMEOUT", "150"))
    # A binary that exits 0 once a real Fluss client call succeeds (see tests/src/bin/fluss-probe.rs).
    probe: str | None = os.environ.get("FLUSS_PROBE_BIN")
    # Extra server.yaml entries for both servers, `key=value` separated by commas (disruptive
    # tests shorten idle and session timeouts, e.g. `netty.connection.max-idle-time=3s`).
    server_conf: str = os.environ.get("FLUSS_STACK_SERVER_CONF", "")
    # The cluster's shape, a key of SHAPES.
    shape_name: str = field(default_factory=lambda: os.environ.get("FLUSS_STACK_SHAPE", "dev"))

    @property
    def shape(self) -> Shape:
        try:
            return SHAPES[self.shape_name]
        except KeyError:
            raise StackError(
                f"FLUSS_STACK_SHAPE={self.shape_name!r} is not one of {', '.join(SHAPES)}"
            ) from None

    @property
    def lib_dir(self) -> Path:
        return self.cache / "fluss" / FLUSS_VERSION / "lib"

    @property
    def env_file(self) -> Path:
        return self.stack_dir / "stack.env"

    @property
    def pid_file(self) -> Path:
        return self.stack_dir / "pids.json"

    @property
    def log_dir(self) -> Path:
        return self.stack_dir / "logs"

    @property
    def venv_bin(self) -> Path:
        return self.cache / "venv" / "bin"


class StackError(Exception):
    """A failure the user can act on; printed without a traceback."""


def log(msg: str) -> None:
    print(f"[stack] {msg}", flush=True)


# ---------------------------------------------------------------------------------------------
# fetch


def _mvn_copy(artifact: str, out_dir: Path) -> None:
    cmd = ["mvn", "-B", "-q", "dependency:copy", f"-Dartifact={artifact}", f"-DoutputDirectory={out_dir}"]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-8:])
        raise StackError(f"could not fetch {artifact} from Maven Central:\n{tail}")


def fetch(s: Settings) -> Path:
    """Download the server jar and the log4j jars once; verify the server jar's classes."""
    s.lib_dir.mkdir(parents=True, exist_ok=True)
    wanted = [("org.apache.fluss", "fluss-server", FLUSS_VERSION)] + [
        ("org.apache.logging.log4j", a, LOG4J_VERSION) for a in LOG4J_ARTIFACTS
    ]
    for group, artifact, version in wanted:
        jar = s.lib_dir / f"{artifact}-{version}.jar"
        if jar.exists() and jar.stat().st_size > 0:
            continue
        log(f"fetching {group}:{artifact}:{version}")
        _mvn_copy(f"{group}:{artifact}:{version}", s.lib_dir)
        if not jar.exists():
            raise StackError(f"Maven reported success but {jar} is missing")
    server_jar = s.lib_dir / f"fluss-server-{FLUSS_VERSION}.jar"
    try:
        names = set(zipfile.ZipFile(server_jar).namelist())
    except zipfile.BadZipFile as e:
        server_jar.unlink(missing_ok=True)
        raise StackError(f"{server_jar} is not a valid jar ({e}); deleted, run again") from e
    missing = [c for c in REQUIRED_CLASSES if c not in names]
    if missing:
        raise StackError(f"{server_jar} lacks {missing}: not the self-contained server jar")
    return s.lib_dir


# ---------------------------------------------------------------------------------------------
# processes


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def _zk_ruok(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
            sock.sendall(b"ruok")
            return sock.recv(16) == b"imok"
    except OSError:
        return False


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as resp:
            return 200 <= resp.status < 500
    except OSError:
        return False


def _probe_ok(probe: str, env: dict) -> bool:
    try:
        return subprocess.run([probe], env=env, capture_output=True, timeout=30).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child of ours counts as dead.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        pass
    # A zombie nobody reaps (its parent, `stack.py start`, is gone and PID 1 of a container
    # may not reap) is dead too.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _read_pids(s: Settings) -> dict:
    try:
        return json.loads(s.pid_file.read_text())
    except (OSError, ValueError):
        return {}


def _write_pids(s: Settings, pids: dict) -> None:
    _private_file(s.pid_file, json.dumps(pids, indent=2))


# The stack's files hold the SASL passwords (server.yaml, stack.env) or may echo them (logs):
# directories are 0700, files 0600, and every child process runs with this umask so that what
# it creates itself (Fluss and log4j logs, RocksDB LOG files, ZooKeeper data) is private too.
CHILD_UMASK = 0o077


def _private_dir(path: Path) -> Path:
    """Create `path` (and parents) if needed and make it 0700."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def _private_open(path: Path) -> int:
    """Open `path` for writing (truncated) as a 0600 file, also when it existed with another mode."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    return fd


def _private_file(path: Path, text: str) -> None:
    with os.fdopen(_private_open(path), "w") as f:
        f.write(text)


def _spawn(s: Settings, name: str, cmd: list[str], pids: dict, env: dict | None = None) -> subprocess.Popen:
    out = os.fdopen(_private_open(s.log_dir / f"{name}.out"), "wb")
    # A new session per process: stop() signals the whole group, so nothing is left behind.
    proc = subprocess.Popen(
        cmd,
        stdout=out,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env=env,
        umask=CHILD_UMASK,
    )
    # The child holds its own copy of the descriptor.
    out.close()
    pids[name] = proc.pid
    _write_pids(s, pids)
    return proc


def _java(heap: str, direct: str | None, log_file: Path, log4j: Path, lib: Path, main: str, args: list[str]) -> list[str]:
    cmd = ["java", f"-Xms{heap}", f"-Xmx{heap}"] + JVM_COMMON
    if direct:
        cmd.append(f"-XX:MaxDirectMemorySize={direct}")
    cmd += [f"-Dlog.file={log_file}", f"-Dlog4j.configurationFile=file:{log4j}", "-cp", f"{lib}/*", main]
    return cmd + args


def _extra_conf(spec: str) -> list[str]:
    """`key=value,key=value` as server.yaml lines; a malformed entry stops the start."""
    lines = []
    for entry in filter(None, (e.strip() for e in spec.split(","))):
        key, sep, value = entry.partition("=")
        if not sep or not key.strip() or not value.strip() or ":" in key:
            raise StackError(f"FLUSS_STACK_SERVER_CONF: `{entry}` is not key=value")
        lines.append(f"{key.strip()}: {value.strip()}")
    return lines


def _server_yaml(
    zk_port: int,
    remote: Path,
    ports: tuple[int, int, int],
    jaas: str,
    shape: Shape,
    tablet: tuple[int, Path] | None,
    extra: str = "",
) -> str:
    internal, sasl, plain = ports
    lines = [
        f"zookeeper.address: 127.0.0.1:{zk_port}",
        "zookeeper.path.root: /fluss",
        f"remote.data.dir: {remote}",
        "default.bucket.number: 1",
        f"default.replication.factor: {shape.replication}",
        f"log.replica.min-in-sync-replicas-number: {shape.min_in_sync}",
        "internal.listener.name: INTERNAL",
        f"bind.listeners: INTERNAL://127.0.0.1:{internal},CLIENT://127.0.0.1:{sasl},PLAIN_CLIENT://127.0.0.1:{plain}",
        "security.protocol.map: CLIENT:SASL",
        "security.sasl.enabled.mechanisms: PLAIN",
        f"security.sasl.plain.jaas.config: {jaas}",
        "authorizer.enabled: true",
        # Plaintext clients authenticate as ANONYMOUS; the local stack lets them do everything.
        "super.users: User:admin;User:ANONYMOUS",
        # Small thread pools and buffers: this runs beside the build on a 2-core machine.
        "netty.server.num-network-threads: 1",
        "netty.server.num-worker-threads: 3",
        "server.io-pool.size: 4",
        "server.buffer.memory-size: 64mb",
        # A new auto-partitioned table gets its partitions from the coordinator at once; when
        # that first attempt fails (seen under the whole suite's load: no partition after 90 s),
        # the next comes at this interval (Fluss's default: 10 min).
        "auto-partition.check.interval: 5s",
    ]
    if tablet is not None:
        server_id, data = tablet
        lines += [f"tablet-server.id: {server_id}", f"data.dir: {data}"]
    lines += _extra_conf(extra)
    return "\n".join(lines) + "\n"


# Fluss logs every property of server.yaml in clear at start-up ("Loading configuration property:
# security.sasl.plain.jaas.config=... user_admin=\"...\""), and the JAAS config has to stay in
# server.yaml: the gateway's config route must see it listed (tests/tests/stack/config_route.rs checks it
# comes back redacted). So every log line, message and stack trace alike, goes through these
# java.util.regex replacements (log4j2 `%replace`, applied in order). They must not contain `{`,
# `}`, `%` or `\` (log4j's pattern and properties syntax); infra/local/tests checks them.
LOG_MASKS = [
    # The whole value of any `...jaas.config` key, up to the end of the line.
    ("(?i)(jaas[.]config[=: ]+).+", "$1******"),
    # A JAAS option holding a secret anywhere else (an exception echoing the config, say).
    ('(?i)((user_[a-z0-9_]+|password)=)"[^"]*"', '$1"******"'),
]


def _masked(pattern: str) -> str:
    for regex, replacement in LOG_MASKS:
        pattern = f"%replace{{{pattern}}}{{{regex}}}{{{replacement}}}"
    return pattern


LOG4J_CONFIG = f"""\
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = MainAppender
appender.main.name = MainAppender
appender.main.type = File
appender.main.append = false
appender.main.fileName = ${{sys:log.file}}
appender.main.filePermissions = rw-------
appender.main.layout.type = PatternLayout
appender.main.layout.alwaysWriteExceptions = false
appender.main.layout.pattern = %d{{yyyy-MM-dd HH:mm:ss,SSS}} %-5p %-60c %x - {_masked("%m%n%xEx")}
logger.zookeeper.name = org.apache.fluss.shaded.zookeeper3
logger.zookeeper.level = WARN
"""


class Starter:
    """Starts the processes in order and watches them while waiting for readiness."""

    def __init__(self, s: Settings):
        self.s = s
        self.pids: dict = {}
        self.procs: dict[str, subprocess.Popen] = {}
        self.deadline = time.monotonic() + s.start_timeout_s

    def spawn(self, name: str, cmd: list[str], env: dict | None = None) -> None:
        self.procs[name] = _spawn(self.s, name, cmd, self.pids, env)

    def check_alive(self) -> None:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                log_file = self.s.log_dir / f"{name}.log"
                if not log_file.exists():
                    log_file = self.s.log_dir / f"{name}.out"
                raise StackError(
                    f"{name} exited with code {proc.returncode} during start; last lines of {log_file}:\n"
                    + _tail(log_file)
                    + f"\n--- {name}.out ---\n"
                    + _tail(self.s.log_dir / f"{name}.out", 15)
                )

    def wait(self, what: str, ready) -> None:
        started = time.monotonic()
        while True:
            self.check_alive()
            if ready():
                log(f"{what} ready after {time.monotonic() - started:.1f}s")
                return
            if time.monotonic() > self.deadline:
                raise StackError(f"timed out waiting for {what}; logs are in {self.s.log_dir}")
            time.sleep(0.3)


def start(s: Settings) -> None:
    lib = fetch(s)
    if _read_pids(s):
        log("a previous stack is recorded; stopping it first")
        stop(s)
    # What this process creates is private too (explicit modes below; this is the safety net).
    old_umask = os.umask(CHILD_UMASK)
    try:
        _start(s, lib)
    finally:
        os.umask(old_umask)


def _start(s: Settings, lib: Path) -> None:
    s.stack_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    if s.log_dir.exists():
        shutil.rmtree(s.log_dir)
    _private_dir(s.log_dir)
    # Fresh state for every run: after a kill -9, reusing ZooKeeper data stalls on old sessions.
    # mkdtemp makes it 0700.
    state = Path(tempfile.mkdtemp(prefix="fluss-stack-", dir=s.stack_dir))
    _private_file(s.stack_dir / "state_dir", str(state))

    ports = {k: (v or _free_port()) for k, v in s.ports.items()}
    passwords = {u: secrets.token_urlsafe(18) for u in SASL_USERS}
    jaas = "org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required " + " ".join(
        f'user_{u}="{p}"' for u, p in passwords.items()
    ) + ";"
    log4j = state / "log4j.properties"
    _private_file(log4j, LOG4J_CONFIG)

    st = Starter(s)
    try:
        log(f"Fluss {FLUSS_VERSION}; state in {state}; logs in {s.log_dir}")
        # ZooKeeper
        zk_dir = state / "zookeeper"
        _private_dir(zk_dir)
        zoo_cfg = state / "zoo.cfg"
        _private_file(
            zoo_cfg,
            f"tickTime=2000\ninitLimit=10\nsyncLimit=5\ndataDir={zk_dir}\nclientPort={ports['zookeeper']}\n"
            "clientPortAddress=127.0.0.1\n4lw.commands.whitelist=ruok,srvr\nadmin.enableServer=false\n"
            "maxClientCnxns=0\n",
        )
        st.spawn(
            "zookeeper",
            _java("256m", None, s.log_dir / "zookeeper.log", log4j, lib, ZK_MAIN, [str(zoo_cfg)]),
        )
        st.wait("zookeeper", lambda: _zk_ruok(ports["zookeeper"]))

        remote = state / "remote"
        _private_dir(remote)
        shape = s.shape
        log(f"shape {s.shape_name}: {shape.tablets} TabletServer(s), replication {shape.replication}, "
            f"min in-sync replicas {shape.min_in_sync}")
        servers = [("coordinator", (ports["coordinator_internal"], ports["coordinator_sasl"], ports["coordinator_plain"]), None)]
        servers.append(("tablet", (ports["tablet_internal"], ports["tablet_sasl"], ports["tablet_plain"]), 0))
        # The other TabletServers' ports are in their own server.yaml (restart reads them there).
        servers += [(tablet_name(i), (_free_port(), _free_port(), _free_port()), i) for i in range(1, shape.tablets)]
        for name, trio, server_id in servers:
            conf = state / f"{name}-conf"
            _private_dir(conf)
            tablet = None if server_id is None else (server_id, state / f"{name}-data")
            # Holds the JAAS config with every password: 0600 in a 0700 folder.
            _private_file(
                conf / "server.yaml",
                _server_yaml(ports["zookeeper"], remote, trio, jaas, shape, tablet, s.server_conf),
            )
            st.spawn(name, _server_cmd(s, lib, state, name))
            st.wait(f"{name} ports", lambda trio=trio: all(_port_open(p) for p in trio))

        # moto (AWS APIs) from the project virtualenv.
        moto = s.venv_bin / "moto_server"
        if not moto.exists():
            raise StackError(f"{moto} not found; run `make tools` (creates the virtualenv)")
        st.spawn("moto", [str(moto), "-H", "127.0.0.1", "-p", str(ports["moto"])])
        st.wait("moto", lambda: _http_ok(f"http://127.0.0.1:{ports['moto']}/moto-api/"))

        write_env(s, ports, passwords, state)

        if s.probe:
            env = _probe_env(s)
            st.wait("fluss client call (probe)", lambda: _probe_ok(s.probe, env))
        else:
            log("FLUSS_PROBE_BIN not set: readiness was checked on ports only")
    except BaseException:
        # Never leave half a stack behind.
        stop(s, quiet=True)
        raise
    log(f"stack is up; env file: {s.env_file}")


# Main class, heap and direct memory of each Fluss server.
SERVERS = {
    "coordinator": (COORDINATOR_MAIN, "512m", "256m"),
    "tablet": (TABLET_MAIN, "1g", "512m"),
}


def _server_cmd(s: Settings, lib: Path, state: Path, name: str) -> list[str]:
    main, heap, direct = SERVERS["coordinator" if name == "coordinator" else "tablet"]
    conf = state / f"{name}-conf"
    return _java(heap, direct, s.log_dir / f"{name}.log", state / "log4j.properties", lib, main, ["--configDir", str(conf)])


def _probe_env(s: Settings) -> dict:
    """The probe's environment: this stack's env file, and ready only once every TabletServer
    of the running stack's shape (its env file says how many) is registered: a replication-3
    table cannot be created with fewer."""
    env = dict(line.split("=", 1) for line in s.env_file.read_text().splitlines() if "=" in line)
    tablets = env.get("FLUSS_TABLET_SERVERS", "1")
    return dict(os.environ, FLUSS_STACK_ENV=str(s.env_file), FLUSS_PROBE_TABLETS=tablets)


def _listener_ports(server_yaml: Path) -> list[int]:
    """The ports of `bind.listeners` in one server's server.yaml."""
    for line in server_yaml.read_text().splitlines():
        if line.startswith("bind.listeners:"):
            return [int(p) for p in re.findall(r":(\d+)(?:,|$)", line.strip())]
    raise StackError(f"{server_yaml} has no bind.listeners")


def restart(s: Settings, name: str) -> None:
    """Starts one Fluss server again on its configuration and data after a test stopped or
    killed it: same id, ports and data.dir, so a TabletServer recovers its logs and takes its
    buckets back, and a coordinator takes the cluster over again."""
    pids = _read_pids(s)
    if not pids or not s.env_file.exists():
        raise StackError("no stack is running here; `stack.py start` first")
    if name != "coordinator" and not name.startswith("tablet") or name not in pids:
        servers = ", ".join(n for n in pids if n == "coordinator" or n.startswith("tablet"))
        raise StackError(f"`{name}` is not a server of this stack (servers: {servers})")
    # A SIGKILL is delivered asynchronously: give the old process a moment to be gone.
    until = time.monotonic() + 10
    while _alive(pids[name]) and time.monotonic() < until:
        time.sleep(0.05)
    if _alive(pids[name]):
        raise StackError(f"{name} still runs (pid {pids[name]}); stop it first")
    state = Path((s.stack_dir / "state_dir").read_text().strip())
    ports = _listener_ports(state / f"{name}-conf" / "server.yaml")
    lib = fetch(s)
    old_umask = os.umask(CHILD_UMASK)
    try:
        st = Starter(s)
        # _spawn rewrites pids.json from this dict: keep the other processes in it.
        st.pids = dict(pids)
        st.spawn(name, _server_cmd(s, lib, state, name))
        st.wait(f"{name} ports", lambda: all(_port_open(p) for p in ports))
        if s.probe:
            probe_env = _probe_env(s)
            st.wait("fluss client call (probe)", lambda: _probe_ok(s.probe, probe_env))
    finally:
        os.umask(old_umask)
    log(f"{name} restarted")


def write_env(s: Settings, ports: dict, passwords: dict, state: Path) -> None:
    """The one env file tests and `make run` read (mode 0600: it holds the local passwords)."""
    cs_plain = f"127.0.0.1:{ports['coordinator_plain']}"
    moto = f"http://127.0.0.1:{ports['moto']}"
    entries = {
        "FLUSS_VERSION": FLUSS_VERSION,
        "FLUSS_STACK_SHAPE": s.shape_name,
        "FLUSS_TABLET_SERVERS": str(s.shape.tablets),
        "FLUSS_BOOTSTRAP_PLAINTEXT": cs_plain,
        "FLUSS_BOOTSTRAP_SASL": f"127.0.0.1:{ports['coordinator_sasl']}",
        "FLUSS_TABLET_PLAINTEXT": f"127.0.0.1:{ports['tablet_plain']}",
        "FLUSS_TABLET_SASL": f"127.0.0.1:{ports['tablet_sasl']}",
        "FLUSS_ZOOKEEPER": f"127.0.0.1:{ports['zookeeper']}",
        "FLUSS_STACK_LOG_DIR": str(s.log_dir),
        "FLUSS_STACK_STATE_DIR": str(state),
        # Gateway configuration in its environment form (one cluster named "default").
        "FLUSS_GATEWAY__CLUSTERS": "default",
        "FLUSS_GATEWAY__CLUSTER__DEFAULT__BOOTSTRAP__SERVERS": cs_plain,
        # AWS APIs go to moto; the SDKs honour AWS_ENDPOINT_URL.
        "AWS_ENDPOINT_URL": moto,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
    }
    for user, password in passwords.items():
        entries[f"FLUSS_SASL_{user.upper()}_USER"] = user
        entries[f"FLUSS_SASL_{user.upper()}_PASSWORD"] = password
    text = "# written by infra/local/stack.py start; read by tests and make run\n"
    text += "".join(f"{k}={v}\n" for k, v in entries.items())
    _private_file(s.env_file, text)


def stop(s: Settings, quiet: bool = False) -> None:
    pids = _read_pids(s)
    tablets = sorted(n for n in pids if n.startswith("tablet"))
    for name in tablets + STOP_ORDER + [n for n in pids if n not in STOP_ORDER and n not in tablets]:
        pid = pids.get(name)
        if not pid:
            continue
        if _alive(pid):
            if not quiet:
                log(f"stopping {name} (pid {pid})")
            _signal_group(pid, signal.SIGTERM)
            end = time.monotonic() + 15
            while _alive(pid) and time.monotonic() < end:
                time.sleep(0.2)
            if _alive(pid):
                log(f"{name} ignored SIGTERM; killing it")
        # Whatever is left in the group (forked children included) goes too.
        _signal_group(pid, signal.SIGKILL)
    s.pid_file.unlink(missing_ok=True)
    s.env_file.unlink(missing_ok=True)
    marker = s.stack_dir / "state_dir"
    if marker.exists():
        shutil.rmtree(marker.read_text().strip(), ignore_errors=True)
        marker.unlink()
    if not quiet:
        log("stack stopped")


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def status(s: Settings) -> int:
    pids = _read_pids(s)
    if not pids:
        print("stack: not running")
        return 1
    ok = True
    tablets = sorted(n for n in pids if n.startswith("tablet"))
    for name in ["zookeeper", "coordinator", *tablets, "moto"]:
        pid = pids.get(name)
        alive = bool(pid) and _alive(pid)
        ok &= alive
        print(f"{name:12} pid {pid}  {'running' if alive else 'DEAD'}")
    if s.env_file.exists():
        for line in s.env_file.read_text().splitlines():
            # Passwords, API keys and secret keys stay in the (0600) file: never on a terminal.
            if line and not line.startswith("#") and not re.search(r"PASSWORD|SECRET|_KEY=", line):
                print(f"  {line}")
    print(f"logs: {s.log_dir}")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["fetch", "start", "stop", "status", "env", "restart", "restart-tablet"])
    parser.add_argument("server", nargs="?", help="restart: the server to start again (tablet, tablet-1, coordinator, ...)")
    args = parser.parse_args()
    s = Settings()
    try:
        s.shape  # an unknown shape stops every command before it does anything
        if args.command == "fetch":
            print(fetch(s))
        elif args.command == "start":
            start(s)
        elif args.command == "stop":
            stop(s)
        elif args.command == "status":
            return status(s)
        elif args.command == "env":
            print(s.env_file)
        elif args.command == "restart-tablet":
            restart(s, "tablet")
        elif args.command == "restart":
            if not args.server:
                raise StackError("restart: name the server (tablet, tablet-1, coordinator, ...)")
            restart(s, args.server)
    except StackError as e:
        print(f"[stack] error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
