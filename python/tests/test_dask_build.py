"""lesshash.dask.build, both ways it runs:

* on a distributed client (``compute=True``): one filter per worker
  process, filled where the partitions were read, combined slice by slice
  (a reduce-scatter: each process ORs one slice of every filter);
  bit for bit the one-process filter (insert counter included) for any
  number of workers, threads and partitions, also when a worker's filter
  is lost before it was collected;
* the tree of pure tasks (``compute=False``, local schedulers): at most
  ``max_filters`` partial filters, one per group of
  ceil(partitions / max_filters) consecutive partitions (by default one per
  worker of the client), with the same bits."""

from __future__ import annotations

import math
import os

# Plain imports: Dask is in the `test` extra (a missing one fails the suite).
import dask.dataframe as dd
import distributed
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


# --- the distributed build: one filter per worker process --------------------


def _task_counts(client, run) -> dict:
    """Task prefix -> how many ran, over ``run()``."""
    with distributed.get_task_stream(client) as ts:
        out = run()
    counts: dict = {}
    for t in ts.data:
        prefix = distributed.utils.key_split(t["key"])
        counts[prefix] = counts.get(prefix, 0) + 1
    return out, counts


@pytest.mark.parametrize("workers,threads", [(1, 1), (2, 2), (3, 1)])
def test_one_filter_per_worker_process_and_the_same_bits(workers, threads):
    """For 1, 2 and 3 worker processes and 1, 8 and 43 partitions: the
    filter of one process, bit for bit (header and insert counter too);
    one filter per process that read partitions, never one per partition
    or per thread, and every worker's filter forgotten once combined."""
    ref = reference()
    with distributed.LocalCluster(
        n_workers=workers, threads_per_worker=threads, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster, set_as_default=False) as client:
        for partitions in [1, 8, 43]:
            series = dd.from_array(keys(), chunksize=math.ceil(N / partitions))
            assert series.npartitions == partitions
            bf, counts = _task_counts(
                client, lambda: ld.build(series, N, 0.01, seed=5, split_every=2, client=client)
            )
            assert bf.to_bytes() == ref.to_bytes(), (workers, partitions)
            assert counts["lesshash-fill"] == partitions, counts
            # P processes hold filters: each cut into P slices, slice j of
            # every filter OR-ed by one task (the reduce-scatter).
            procs = counts["lesshash-or"]
            assert 1 <= procs <= min(workers, partitions), counts
            assert counts["lesshash-slice"] == procs * procs, counts
            assert "build_partitions" not in counts, counts
            held = client.run(lambda: len(ld._LOCAL))
            assert set(held.values()) == {0}, held


def test_a_filter_lost_before_collection_is_rebuilt(dask_client, monkeypatch):
    """A worker restarted after its partitions went into its filter (the
    filter gone with the process): its partitions are read and added
    again, and the result is still the one-process filter, insert counter
    included."""
    series = dd.from_array(keys(), chunksize=math.ceil(N / 10))
    restarted = []

    def restart_one(client, token):
        holders = [w for w, n in client.run(lambda: len(ld._LOCAL)).items() if n]
        client.restart_workers(holders[:1])
        restarted.append(holders[0])

    monkeypatch.setattr(ld, "_AFTER_FILL", restart_one)
    bf, counts = _task_counts(dask_client, lambda: ld.build(series, N, 0.01, seed=5))
    assert restarted
    assert bf.to_bytes() == reference().to_bytes()
    assert counts.get("build_partitions") == 1, counts


def test_a_filter_with_some_slices_lost_is_rebuilt(dask_client, monkeypatch):
    """A process whose filter arrived in part (one slice lost, as when its
    worker dies between slice tasks): its partitions are built again and
    OR-ed in, its slices that did arrive change nothing (they hold only
    bits of those keys), and the result is the one-process filter."""
    series = dd.from_array(keys(), chunksize=math.ceil(N / 10))

    def lose_slice_one(client, token):
        holders = [w for w, n in client.run(lambda: len(ld._LOCAL)).items() if n]
        assert len(holders) == 2, holders

        def lose():
            ld._LOSE_SLICES.add(1)

        client.run(lose, workers=holders[:1])

    def restore():
        ld._LOSE_SLICES.clear()

    monkeypatch.setattr(ld, "_AFTER_FILL", lose_slice_one)
    try:
        bf, counts = _task_counts(dask_client, lambda: ld.build(series, N, 0.01, seed=5))
    finally:
        dask_client.run(restore)
    assert bf.to_bytes() == reference().to_bytes()
    assert bf.insert_calls == N
    assert counts.get("build_partitions") == 1, counts


def test_a_partition_in_two_filters_counts_once(dask_client, monkeypatch):
    """Were a partition's task run on two workers (a retry), both filters
    hold its keys: the bits are the same (OR is idempotent), and the
    insert counter counts the partition once."""
    series = dd.from_array(keys(), chunksize=math.ceil(N / 6))
    first = series.to_delayed()[0].compute()

    def fill_everywhere(client, token):
        # Partition 0 added again on every worker: one of them holds it
        # already (a no-op there), the other now too.
        params = (N, 0.01, None, None, 5)
        for w in client.scheduler_info()["workers"]:
            client.submit(ld._fill, first, token, params, 0, workers=[w],
                          allow_other_workers=False, pure=False).result()
        held = client.run(lambda: [0 in e[1] for e in ld._LOCAL.values()])
        assert sum(map(sum, held.values())) == 2, held

    monkeypatch.setattr(ld, "_AFTER_FILL", fill_everywhere)
    bf = ld.build(series, N, 0.01, seed=5)
    assert bf.to_bytes() == reference().to_bytes()


def test_the_local_scheduler_and_compute_false_keep_the_pure_tree(dask_client):
    series = dd.from_array(keys(), chunksize=math.ceil(N / 9))
    lazy = ld.build(series, N, 0.01, seed=5, compute=False)
    assert partial_filters(lazy) == 2
    assert "lesshash-fill" not in str(dict(lazy.__dask_graph__()).keys())
    assert lazy.compute().to_bytes() == reference().to_bytes()
    local = ld.build(series, N, 0.01, seed=5, client=False)
    assert local.to_bytes() == reference().to_bytes()
    assert os.getpid() and not ld._LOCAL  # nothing left in this process


@pytest.mark.parametrize("on_workers", [True, False])
def test_a_random_seed_is_drawn_once_for_every_part(dask_client, on_workers):
    """``seed="random"``: one secret seed drawn on the client and used by
    every part, on the workers and in the pure tree, so the parts combine
    and the result is the single-process filter under that seed."""
    series = dd.from_array(keys(), chunksize=math.ceil(N / 9))
    client = dask_client if on_workers else False
    bf = ld.build(series, N, 0.01, seed="random", client=client)
    assert bf.seed != BloomFilter(N, 0.01).seed
    ref = BloomFilter(N, 0.01, seed=bf.seed)
    ref.add_many(keys())
    assert bf.to_bytes() == ref.to_bytes()
    other = ld.build(series, N, 0.01, seed="random", client=client)
    assert other.seed != bf.seed
