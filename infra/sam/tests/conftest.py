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


# The watch router's catch-all: it plays the template's `$default` route (paths no route serves).
WATCH_CATCH_ALL = "/{*proxy}"


@pytest.fixture(scope="session")
def watch_router():
    """`[workspace.metadata.lambda.watch.router]` as written: path -> function binary."""
    manifest = tomllib.loads((deploy_local.ROOT / "Cargo.toml").read_text())
    return manifest["workspace"]["metadata"]["lambda"]["watch"]["router"]


@pytest.fixture(scope="session")
def router(watch_router):
    """The routes `make run` serves (path -> function binary), the catch-all aside: each is one
    route of the template."""
    return {p: b for p, b in watch_router.items() if p != WATCH_CATCH_ALL}
