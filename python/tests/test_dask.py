"""lesshash.dask on a real distributed.LocalCluster with two worker
processes: builds are bit-identical to one process, masks and filtered
frames are exact on members, and the filter enters the graph once."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

dd = pytest.importorskip("dask.dataframe")
db = pytest.importorskip("dask.bag")
pd = pytest.importorskip("pandas")

import lesshash.dask as ld  # noqa: E402
from lesshash import BloomFilter  # noqa: E402


def test_build_over_a_series_is_bit_identical(dask_client):
    keys = np.arange(300_000, dtype=np.int64) * 7 - 1_000_000
    ref = BloomFilter(300_000, 0.01, seed=3)
    ref.add_many(keys)
    for chunks in [300_000, 40_000, 7_001]:  # 1, 8 and 43 partitions
        series = dd.from_array(keys, chunksize=chunks)
        bf = ld.build(series, 300_000, 0.01, seed=3, split_every=4)
        assert bf == ref and bf.to_bytes() == ref.to_bytes(), chunks


@pytest.mark.parametrize("layout", ["classic", "split-block"])
def test_build_over_a_column_and_a_bag(dask_client, layout):
    words = [f"w{i}" for i in range(5000)]
    frame = pd.DataFrame({"key": words, "n": range(5000)})
    ddf = dd.from_pandas(frame, npartitions=5)
    ref = BloomFilter(5000, 0.001, layout=layout)
    ref.add_many(words)
    assert ld.build(ddf, 5000, 0.001, column="key", layout=layout) == ref
    bag = db.from_sequence(words, npartitions=3)
    assert ld.build(bag, 5000, 0.001, layout=layout) == ref
    lazy = ld.build(bag, 5000, 0.001, layout=layout, compute=False)
    assert lazy.compute() == ref
    with pytest.raises(TypeError, match="column"):
        ld.build(ddf, 5000, 0.001)
    with pytest.raises(ValueError, match="fpr"):
        ld.build(bag, 5000, 2.0)


def test_isin_and_filter_frame(dask_client):
    members = np.arange(0, 20_000, 2, dtype=np.int64)
    bf = BloomFilter(len(members), 0.01)
    bf.add_many(members)
    frame = pd.DataFrame({"id": np.arange(20_000, dtype=np.int64), "v": np.arange(20_000) * 0.5})
    ddf = dd.from_pandas(frame, npartitions=6)
    mask = ld.isin(ddf["id"], bf).compute()
    expected = bf.contains_many(frame["id"])
    assert mask.dtype == bool and (mask.to_numpy() == expected).all()
    assert mask[frame["id"] % 2 == 0].all(), "false negative"
    kept = ld.filter_frame(ddf, "id", bf).compute()
    dropped = ld.filter_frame(ddf, "id", bf, invert=True).compute()
    assert len(kept) + len(dropped) == len(frame)
    assert set(members) <= set(kept["id"])
    assert not (dropped["id"] % 2 == 0).any()
    assert (kept.columns == frame.columns).all()
    # The false positives among the odd ids are at the filter's rate.
    fp = (kept["id"] % 2 == 1).sum() / 10_000
    assert fp < 0.02
    with pytest.raises(KeyError, match="nope"):
        ld.filter_frame(ddf, "nope", bf)


def test_the_filter_enters_the_graph_once():
    """One graph node holds the filter, whatever the number of partitions:
    the scheduler ships it to each worker once."""
    bf = BloomFilter(1_000_000, 0.01)  # 1.2 MB
    frame = pd.DataFrame({"id": np.arange(64_000, dtype=np.int64)})
    ddf = dd.from_pandas(frame, npartitions=32)
    for result in (ld.isin(ddf["id"], bf), ld.filter_frame(ddf, "id", bf)):
        graph = dict(result.__dask_graph__())
        holders = [k for k in graph if "lesshash-bloom" in str(k)]
        assert len(holders) == 1, holders
        size = len(pickle.dumps(graph))
        assert bf.nbytes < size < 2 * bf.nbytes, size


def test_string_keys_from_arrow_backed_partitions(dask_client):
    words = pd.Series([f"k{i}" for i in range(3000)], dtype="string[pyarrow]")
    ddf = dd.from_pandas(pd.DataFrame({"k": words}), npartitions=3)
    bf = ld.build(ddf, 3000, 0.01, column="k")
    assert bf.contains_many(words).all()
    assert ld.isin(ddf["k"], bf).compute().all()
