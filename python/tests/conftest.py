"""Shared fixtures: the repository root, the Rust CLI (built on demand) and
one Dask LocalCluster per session; and CI's rule that nothing is skipped.

With ``LESSHASH_CI=1`` (set by .ci/run's Python step) a skipped test is a
failed test: a missing or broken optional dependency (``importorskip`` of
pyarrow, pandas, distributed), a missing CLI, or any ``pytest.skip`` fails
the run instead of passing as a skip, except for the skips listed in
``CI_ALLOWED_SKIPS`` (one: Spark where Java is missing). The run must also pass at least one test
of every entry of ``CI_MUST_RUN``: a deselected, renamed or emptied module
fails it too. Outside CI skips stay skips (run ``pytest -rs`` to see them).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

CI = os.environ.get("LESSHASH_CI") == "1"

# Skips CI accepts: node id prefix -> why. Every other test runs in CI.
CI_ALLOWED_SKIPS: dict[str, str] = {
    # CI installs pyspark; the JVM it starts needs Java, which a CI machine
    # may lack (the golden files check the same bytes without Spark).
    "test_spark.py::test_spark_reads_the_filters_lesshash_writes": "needs Java",
}

# What CI must execute: node id prefixes (relative to python/tests) of
# which at least one test must pass in a CI run.
CI_MUST_RUN = [
    "test_bloom.py::test_every_batch_form_answers_as_single_keys",  # pyarrow, pandas
    "test_bloom.py::test_batches_release_the_gil",
    "test_count_min.py::test_pickled_sketch_answers_identically_in_another_process",
    "test_dask.py::",  # distributed.LocalCluster
    "test_dask_build.py::",
    "test_interop.py::test_rust_golden_files_answer_identically",
    "test_interop.py::test_python_golden_files_are_what_python_writes",
    "test_interop.py::test_golden_int_keys_are_their_documented_bytes",
    "test_interop.py::test_cli_built_filter_loads_in_python",  # the CLI
    "test_interop.py::test_python_built_filter_answers_in_the_cli",
    "test_key_paths.py::",
    "test_key_kinds.py::test_every_insert_records_its_keys_kind",
    "test_key_kinds.py::test_text_queries_of_an_int_filter_raise_naming_both_kinds",
    "test_key_kinds.py::test_int_keys_answer_alike_through_numpy_arrow_and_pandas",
    "test_key_kinds.py::test_int_keys_answer_alike_on_the_command_line",  # the CLI
    "test_key_kinds.py::test_str_keys_answer_alike_through_numpy_arrow_and_pandas",
    "test_key_kinds.py::test_str_keys_answer_alike_on_the_command_line",
    "test_mapped.py::",
    "test_nulls.py::",  # pyarrow, pandas, polars
    "test_duckdb.py::",  # duckdb
    "test_set_algebra.py::",
    "test_parquet_filters.py::",  # pyarrow writing Bloom filters
    "test_doc_snippets.py::test_snippet_runs",  # README and docs/python.md, Dask included
    "test_threads.py::",
    "test_polars_plugin.py::",  # the lesshash-polars plugin
    "test_spark.py::test_spark_filters_answer_as_spark_and_rebuild_byte_for_byte",
]

_passed: set[str] = set()


def _name(nodeid: str) -> str:
    """A node id relative to this directory, whatever pytest's rootdir."""
    file, sep, rest = nodeid.partition("::")
    return file.rsplit("/", 1)[-1] + sep + rest


def _allowed(nodeid: str) -> bool:
    return any(_name(nodeid).startswith(p) for p in CI_ALLOWED_SKIPS)


def _fail_skip(report) -> None:
    """Turns a skip report into a failure naming the skip's reason."""
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
    report.outcome = "failed"
    report.longrepr = (
        f"skipped under LESSHASH_CI=1, where every test must run ({reason}); "
        "allow a skip only in conftest.CI_ALLOWED_SKIPS, with its reason"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.passed and report.when == "call":
        _passed.add(_name(item.nodeid))
    if CI and report.skipped and not hasattr(report, "wasxfail") and not _allowed(item.nodeid):
        _fail_skip(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    # A module-level skip (an importorskip at import or parametrize time)
    # skips a whole file at collection.
    outcome = yield
    report = outcome.get_result()
    if CI and report.skipped and not _allowed(report.nodeid):
        _fail_skip(report)


def pytest_sessionfinish(session, exitstatus):
    if not CI or exitstatus not in (0, 1):
        return
    missing = [p for p in CI_MUST_RUN if not any(n.startswith(p) for n in _passed)]
    if missing:
        session.exitstatus = 1
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()
            reporter.write_line(
                "LESSHASH_CI=1: no passing test of " + ", ".join(missing)
                + " (conftest.CI_MUST_RUN)",
                red=True,
            )


@pytest.fixture(scope="session")
def repo() -> pathlib.Path:
    return REPO


@pytest.fixture(scope="session")
def cli() -> str:
    """The `lesshash` command-line tool of this checkout: $LESSHASH_CLI, or
    built with cargo (debug) if absent. Never skipped: the cross-language
    tests must run wherever the package is tested. Under LESSHASH_CI=1 the
    variable must name the CLI CI built (no build here)."""
    path = os.environ.get("LESSHASH_CLI")
    if CI:
        assert path, "LESSHASH_CI=1 needs LESSHASH_CLI: the CLI binary CI built"
    if path:
        assert pathlib.Path(path).is_file(), f"LESSHASH_CLI={path} does not exist"
        return path
    cargo = shutil.which("cargo")
    assert cargo, "cargo is needed to build the CLI for the cross-language tests"
    subprocess.run(
        [cargo, "build", "--quiet", "-p", "lesshash-cli", "--bin", "lesshash"],
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
