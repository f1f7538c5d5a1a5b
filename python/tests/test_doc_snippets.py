"""The Python snippets of README.md and docs/python.md, run as written.

Each ```python block runs in a fresh temporary directory, in the order of
its file, with a namespace that carries the names earlier text introduces
(a filter ``bf`` for a fragment that continues one, ``ids``, ``events``,
...) and the data files the snippet reads. Paths that name storage the
test cannot reach (``s3://bucket/...``, ``/shared/...``) and the Dask
``Client()`` (the session's cluster instead of a new one) are replaced by
the substitutions below, each listed where it applies: nothing else in a
snippet is changed. One block is not run, and the test says which and why
(``NOT_RUN``); a block added to either file runs unless it is listed
there.
"""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

from lesshash import BloomFilter, CountMinSketch

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", REPO / "docs" / "python.md"]

# The first line of a block that is not run -> why.
NOT_RUN = {
    "from lesshash import BloomFilter\n\nN, P = 50_000_000, 0.01": (
        "the Spark recipe needs a Spark session (pyspark is not a test "
        "dependency); its lesshash calls (the constructor, add_many, `|`, "
        "contains_many) are each tested in test_bloom.py"
    ),
}

# Storage the snippets name, on this machine.
SUBSTITUTIONS = {
    "s3://bucket/users/": "{tmp}/users/",
    "s3://bucket/events/day=1/": "{tmp}/events/",
    "s3://bucket/events/day=2/": "{tmp}/events/",
    "s3://bucket/events/": "{tmp}/events/",
    "/shared/": "{tmp}/",
    # The session's LocalCluster, not a second one.
    "from distributed import Client\n": "",
}


def blocks():
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for m in re.finditer(r"^```python\n(.*?)^```", text, re.S | re.M):
            line = text.count("\n", 0, m.start()) + 1
            out.append(pytest.param(m.group(1), id=f"{doc.name}:{line}"))
    return out


def not_run(code: str) -> str | None:
    return next((why for start, why in NOT_RUN.items() if code.startswith(start)), None)


def test_every_block_is_found_and_only_the_listed_ones_are_not_run():
    codes = [p.values[0] for p in blocks()]
    assert len(codes) >= 9, "README.md and docs/python.md lost their snippets"
    skipped = [c.splitlines()[0] for c in codes if not_run(c)]
    assert len(skipped) == len(NOT_RUN), skipped


@pytest.fixture
def namespace(tmp_path, monkeypatch, dask_client):
    """The names and files the snippets assume, in a fresh directory."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    monkeypatch.chdir(tmp_path)
    users = np.arange(1_000, dtype=np.int64)
    table = pa.table({"user_id": users})
    for name in ["users", "events"]:
        (tmp_path / name).mkdir()
        pq.write_table(table, tmp_path / name / "part-0.parquet")
    pq.write_table(table, tmp_path / "events.parquet")
    pq.write_table(pa.table({"user_id": users, "page": users % 7}), tmp_path / "clicks.parquet")
    bf = BloomFilter(len(users), 0.01)
    bf.add_many(users)
    bf.save(tmp_path / "users.lhbf")
    dd = pytest.importorskip("dask.dataframe")
    import lesshash.dask as ld

    return {
        "BloomFilter": BloomFilter,
        "bf": bf,
        "ids": users[:10],
        "ld": ld,
        "events": dd.from_pandas(table.to_pandas(), npartitions=2),
        "df": dd.from_pandas(table.to_pandas().rename(columns={"user_id": "user"}), npartitions=2),
        "words": ["the", "cat", "the"],
        "keys": ["a", "b", "c"],
        "other": CountMinSketch(epsilon=0.001, delta=0.01),
        "Client": lambda: dask_client,
    }


@pytest.mark.parametrize("code", [b for b in blocks() if not not_run(b.values[0])])
def test_snippet_runs(code, namespace, tmp_path):
    for old, new in SUBSTITUTIONS.items():
        code = code.replace(old, new.format(tmp=tmp_path))
    exec(compile(code, "<snippet>", "exec"), namespace)  # noqa: S102
