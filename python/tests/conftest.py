"""Shared fixtures: the repository root, the Rust CLI (built on demand) and
one Dask LocalCluster per session."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def repo() -> pathlib.Path:
    return REPO


@pytest.fixture(scope="session")
def cli() -> str:
    """The `lesshash` command-line tool of this checkout: $LESSHASH_CLI, or
    built with cargo (debug) if absent. Never skipped: the cross-language
    tests must run wherever the package is tested."""
    path = os.environ.get("LESSHASH_CLI")
    if path:
        assert pathlib.Path(path).is_file(), f"LESSHASH_CLI={path} does not exist"
        return path
    cargo = shutil.which("cargo")
    assert cargo, "cargo is needed to build the CLI for the cross-language tests"
    subprocess.run(
        [cargo, "build", "--quiet", "--features", "cli", "--bin", "lesshash"],
        cwd=REPO,
        check=True,
    )
    return str(REPO / "target" / "debug" / "lesshash")


@pytest.fixture(scope="session")
def dask_client():
    """A real distributed cluster: two worker processes, one thread each."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
