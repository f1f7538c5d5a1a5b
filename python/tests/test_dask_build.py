"""lesshash.dask.build's grouping of partitions into at most `max_filters`
filters: every grouping gives the one-process filter bit for bit, with the
number of partial filters the docstring promises (one per group of
ceil(partitions / max_filters) consecutive partitions; by default one per
worker of the client)."""

from __future__ import annotations

import math

# Plain imports: Dask is in the `test` extra (a missing one fails the suite).
import dask.dataframe as dd
import numpy as np
import pytest

import lesshash.dask as ld
from lesshash import BloomFilter

N = 200_000


def keys() -> np.ndarray:
    return np.random.default_rng(28).integers(-(2**63), 2**63 - 1, size=N, dtype=np.int64)


def reference() -> BloomFilter:
    ref = BloomFilter(N, 0.01, seed=5)
    ref.add_many(keys())
    return ref


def partial_filters(lazy) -> int:
    """How many partial filters a `build(..., compute=False)` graph makes:
    its `_build_partitions` tasks (an empty collection: one `_empty`)."""
    graph = dict(lazy.__dask_graph__())
    return sum(isinstance(k, str) and k.startswith("_build_partitions-") for k in graph)


@pytest.mark.parametrize("partitions", [1, 7, 43])
@pytest.mark.parametrize("max_filters", [1, 2, 3, 5, 8, 100])
def test_max_filters_groups_partitions_and_keeps_the_bits(dask_client, partitions, max_filters):
    series = dd.from_array(keys(), chunksize=math.ceil(N / partitions))
    assert series.npartitions == partitions
    per = math.ceil(partitions / max_filters)
    expected = math.ceil(partitions / per)  # <= max_filters, <= partitions
    lazy = ld.build(series, N, 0.01, seed=5, max_filters=max_filters, split_every=2,
                    compute=False)
    assert partial_filters(lazy) == expected
    assert expected <= max_filters
    bf = ld.build(series, N, 0.01, seed=5, max_filters=max_filters, split_every=2)
    ref = reference()
    assert bf.to_bytes() == ref.to_bytes()
    assert bf.insert_calls == N


def test_default_max_filters_is_the_number_of_workers(dask_client):
    workers = len(dask_client.nthreads())
    assert workers == 2
    series = dd.from_array(keys(), chunksize=math.ceil(N / 43))
    lazy = ld.build(series, N, 0.01, seed=5, compute=False)
    assert partial_filters(lazy) == workers
    assert lazy.compute() == reference()
    # Without a client (client=False: the local scheduler) the default is 8.
    local = ld.build(series, N, 0.01, seed=5, compute=False, client=False)
    assert partial_filters(local) == 8
    assert local.compute(scheduler="threads") == reference()


def test_max_filters_and_split_every_are_checked(dask_client):
    series = dd.from_array(keys(), chunksize=N // 4)
    with pytest.raises(ValueError, match="max_filters"):
        ld.build(series, N, 0.01, max_filters=0)
    with pytest.raises(ValueError, match="split_every"):
        ld.build(series, N, 0.01, split_every=1)
