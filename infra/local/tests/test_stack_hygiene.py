"""Secret hygiene of infra/local/stack.py, without starting anything.

Fluss logs server.yaml (JAAS config included) in clear at start-up, so the stack masks secrets in
its log4j pattern, keeps its files 0600 in 0700 folders and runs its children with umask 077.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import stack  # noqa: E402

JAAS = (
    "org.apache.fluss.security.auth.sasl.plain.PlainLoginModule required "
    'user_admin="Adm1n-Secret_x" user_alice="al1ce-Secret" user_bob="b0b-Secret";'
)
SECRETS = ["Adm1n-Secret_x", "al1ce-Secret", "b0b-Secret"]


def log4j_mask(text: str) -> str:
    """What the log4j `%replace` chain does to a formatted line (java.util.regex == re here)."""
    for regex, replacement in stack.LOG_MASKS:
        text = re.sub(regex, re.sub(r"\$(\d)", r"\\\1", replacement), text)
    return text


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_pattern_applies_every_mask_to_message_and_exception():
    pattern = next(
        line.split("=", 1)[1].strip()
        for line in stack.LOG4J_CONFIG.splitlines()
        if line.startswith("appender.main.layout.pattern")
    )
    for regex, replacement in stack.LOG_MASKS:
        assert f"{{{regex}}}{{{replacement}}}" in pattern
        # Characters log4j's pattern parser or the properties format would interpret.
        assert not set(regex + replacement) & set("{}%\\"), regex
    assert "%m%n%xEx" in pattern
    assert "appender.main.layout.alwaysWriteExceptions = false" in stack.LOG4J_CONFIG
    assert "appender.main.filePermissions = rw-------" in stack.LOG4J_CONFIG


def test_masks_the_config_line_fluss_logs_at_start_up():
    line = f"Loading configuration property: security.sasl.plain.jaas.config={JAAS}"
    masked = log4j_mask(line)
    assert masked == "Loading configuration property: security.sasl.plain.jaas.config=******"


@pytest.mark.parametrize(
    "line",
    [
        f"bad JAAS: {JAAS}",
        f"Security.SASL.Plain.JAAS.Config: {JAAS}",
        'login failed: PlainLoginModule required username="admin" password="Adm1n-Secret_x";',
    ],
)
def test_masks_secrets_anywhere(line):
    masked = log4j_mask(line)
    assert not any(s in masked for s in SECRETS), masked


def test_leaves_other_lines_alone():
    line = "Loading configuration property: zookeeper.address=127.0.0.1:2181"
    assert log4j_mask(line) == line


def test_spawn_runs_children_with_umask_077_and_a_private_out_file(tmp_path, monkeypatch):
    s = stack.Settings(stack_dir=tmp_path)
    stack._private_dir(s.log_dir)
    seen = {}

    class FakePopen:
        pid = 4242

        def __init__(self, cmd, **kwargs):
            seen.update(kwargs)

    monkeypatch.setattr(subprocess, "Popen", FakePopen)
    out = s.log_dir / "tablet.out"
    out.write_text("old")
    out.chmod(0o644)
    stack._spawn(s, "tablet", ["true"], {})
    assert seen["umask"] == 0o077 == stack.CHILD_UMASK
    assert seen["start_new_session"] is True
    assert mode(out) == 0o600 and out.read_text() == ""
    assert mode(s.pid_file) == 0o600
    assert mode(s.log_dir) == 0o700


def test_umask_reaches_a_real_child(tmp_path):
    made = tmp_path / "made-by-child"
    subprocess.run(["touch", str(made)], umask=stack.CHILD_UMASK, check=True)
    assert mode(made) == 0o600


def test_private_helpers_fix_existing_modes(tmp_path):
    d = tmp_path / "conf"
    d.mkdir(mode=0o755)
    d.chmod(0o755)
    stack._private_dir(d)
    assert mode(d) == 0o700
    f = d / "server.yaml"
    f.write_text("x")
    f.chmod(0o644)
    stack._private_file(f, f"security.sasl.plain.jaas.config: {JAAS}\n")
    assert mode(f) == 0o600


def test_env_file_is_private(tmp_path):
    s = stack.Settings(stack_dir=tmp_path)
    s.env_file.write_text("stale")
    s.env_file.chmod(0o644)
    ports = {k: 1 for k in ["coordinator_plain", "coordinator_sasl", "tablet_plain", "tablet_sasl", "zookeeper", "moto"]}
    stack.write_env(s, ports, {"admin": "Adm1n-Secret_x"}, tmp_path)
    assert mode(s.env_file) == 0o600
    assert "FLUSS_SASL_ADMIN_PASSWORD=Adm1n-Secret_x" in s.env_file.read_text()


def test_server_yaml_keeps_the_jaas_key():
    # The gateway's config route test expects the key listed (and redacts it itself).
    yaml = stack._server_yaml(2181, Path("/r"), (1, 2, 3), JAAS, stack.SHAPES["dev"], None)
    assert f"security.sasl.plain.jaas.config: {JAAS}\n" in yaml


def test_the_production_shape_replicates_three_times_and_needs_two_in_sync():
    shape = stack.SHAPES["production"]
    assert shape.tablets == 3
    yaml = stack._server_yaml(2181, Path("/r"), (1, 2, 3), JAAS, shape, (2, Path("/d")))
    assert "default.replication.factor: 3\n" in yaml
    assert "log.replica.min-in-sync-replicas-number: 2\n" in yaml
    assert "tablet-server.id: 2\n" in yaml and "data.dir: /d\n" in yaml
    dev = stack._server_yaml(2181, Path("/r"), (1, 2, 3), JAAS, stack.SHAPES["dev"], None)
    assert "default.replication.factor: 1\n" in dev and "tablet-server.id" not in dev
    assert [stack.tablet_name(i) for i in range(3)] == ["tablet", "tablet-1", "tablet-2"]


def test_an_unknown_shape_is_refused_by_name(monkeypatch):
    monkeypatch.setenv("FLUSS_STACK_SHAPE", "huge")
    with pytest.raises(stack.StackError, match="huge"):
        stack.Settings().shape


def test_restart_reads_the_ports_of_a_servers_own_yaml(tmp_path):
    yaml = stack._server_yaml(2181, tmp_path, (11, 12, 13), JAAS, stack.SHAPES["production"], (1, tmp_path))
    (tmp_path / "server.yaml").write_text(yaml)
    assert stack._listener_ports(tmp_path / "server.yaml") == [11, 12, 13]


def test_process_umask_is_restored_after_start(monkeypatch, tmp_path):
    monkeypatch.setattr(stack, "fetch", lambda s: tmp_path)
    monkeypatch.setattr(stack, "_read_pids", lambda s: {})

    def fake_start(s, lib):
        raise stack.StackError(f"umask {os.umask(0o077):o}")

    monkeypatch.setattr(stack, "_start", fake_start)
    before = os.umask(0o022)
    try:
        with pytest.raises(stack.StackError, match="umask 77"):
            stack.start(stack.Settings(stack_dir=tmp_path))
        assert os.umask(0o022) == 0o022
    finally:
        os.umask(before)
