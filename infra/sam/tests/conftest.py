"""Fixtures of the infrastructure tests: the SAM template, its translation, the watch router."""

import sys
import tomllib
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import deploy_local  # noqa: E402


@pytest.fixture(scope="session")
def template():
    """The SAM template, intrinsics in long form."""
    return deploy_local.load_template()


@pytest.fixture(scope="session")
def translated():
    """The CloudFormation template the SAM translator makes of it (default parameters)."""
    return deploy_local.translate(deploy_local.parse_params([]), None)


@pytest.fixture(scope="session")
def router():
    """`[workspace.metadata.lambda.watch.router]`: path -> function binary (what `make run` serves)."""
    manifest = tomllib.loads((deploy_local.ROOT / "Cargo.toml").read_text())
    return manifest["workspace"]["metadata"]["lambda"]["watch"]["router"]
