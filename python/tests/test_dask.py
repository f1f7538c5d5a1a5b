"""lesshash.dask on a real distributed.LocalCluster with two worker
processes: builds are bit-identical to one process (also when a worker
process is killed mid-build), masks and filtered frames are exact on
members, the filter reaches each worker once outside the graph and is
released with the last collection that uses it."""

from __future__ import annotations

import gc
import os
import pickle
import signal
import sys
import time
import warnings

# Plain imports, not importorskip: Dask and distributed are in the `test`
# extra, and a missing one must fail the suite, not skip the cluster tests.
import dask
import dask.bag as db
import dask.dataframe as dd
import distributed
import numpy as np
import pandas as pd
import pytest

import lesshash.dask as ld
from lesshash import BloomFilter


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


def test_filter_frame_selects_by_position_in_each_partition(dask_client, tmp_path):
    """Partitions whose index repeats (within and across partitions) and
    a Parquet dataset with unknown divisions: each partition's rows are
    chosen by its own mask, by position, the same rows as pandas' selection
    of the whole frame by contains_many."""
    members = np.arange(0, 3000, 3, dtype=np.int64)
    bf = BloomFilter(len(members), 0.01)
    bf.add_many(members)
    rng = np.random.default_rng(9)
    frame = pd.DataFrame(
        {"id": rng.integers(0, 3000, 6000), "v": np.arange(6000)},
        index=np.arange(6000) % 7,  # every label many times
    )
    want = frame[bf.contains_many(frame["id"])]
    ddf = dd.from_pandas(frame, npartitions=5, sort=False)
    got = ld.filter_frame(ddf, "id", bf).compute()
    assert got.sort_values("v").equals(want.sort_values("v"))
    (tmp_path / "d").mkdir()
    flat = frame.reset_index(drop=True)
    for i in range(4):
        flat.iloc[i * 1500 : (i + 1) * 1500].to_parquet(tmp_path / "d" / f"part-{i}.parquet")
    scanned = dd.read_parquet(tmp_path / "d")
    assert not scanned.known_divisions
    got = ld.filter_frame(scanned, "id", bf).compute()
    assert got["v"].sort_values().tolist() == want["v"].sort_values().tolist()
    got = ld.filter_frame(scanned, "id", bf, invert=True).compute()
    assert set(got["v"]).isdisjoint(want["v"]) and len(got) == len(frame) - len(want)


def _graph(collection) -> dict:
    return dict(collection.__dask_graph__())


# --- a filter file on shared storage, by its path ----------------------------


def _maps_held() -> list:
    """This worker process's mapped filter files (lesshash.dask's cache)."""
    return sorted(path for path, *_ in ld._MAPS)


def test_isin_and_filter_frame_with_a_path(dask_client, tmp_path):
    """A path to a filter file: checked on the client, then each worker
    process maps the file and answers as the filter in memory does; a
    replaced file is mapped anew."""
    bf = BloomFilter(20_000, 0.01, seed=8)
    bf.add_many(np.arange(0, 20_000, 2, dtype=np.int64))
    path = tmp_path / "members.lhbf"
    bf.save(path)
    frame = pd.DataFrame({"id": np.arange(20_000, dtype=np.int64), "v": np.arange(20_000) * 0.5})
    ddf = dd.from_pandas(frame, npartitions=6)
    expected = bf.contains_many(frame["id"])
    for given in (str(path), path):
        mask = ld.isin(ddf["id"], given).compute()
        assert mask.dtype == bool and (mask.to_numpy() == expected).all()
        kept = ld.filter_frame(ddf, "id", given).compute()
        assert (kept["id"].to_numpy() == frame["id"].to_numpy()[expected]).all()
        dropped = ld.filter_frame(ddf, "id", given, invert=True).compute()
        assert len(kept) + len(dropped) == len(frame)
        # Only the path travelled: no filter object or future in the graph.
        graph = _graph(ld.isin(ddf["id"], given))
        assert not any(isinstance(v, distributed.Future) for v in graph.values())
        assert len(pickle.dumps(graph)) < len(pickle.dumps(_graph(ddf["id"]))) + 4000
    assert ld.isin(ddf["id"], str(path), client=False).compute(scheduler="sync").equals(mask)
    held = dask_client.run(_maps_held)
    assert all(paths in ([], [str(path)]) for paths in held.values()), held
    assert any(held.values()), held

    # Replaced (save renames over it): the workers map the new file.
    everything = BloomFilter(20_000, 0.01, seed=8)
    everything.add_many(np.arange(20_000, dtype=np.int64))
    everything.save(path)
    assert ld.isin(ddf["id"], path).compute().all()

    # Fails on the client, before any task, for a path that is no filter.
    (tmp_path / "junk").write_bytes(b"junk" * 100)
    with pytest.raises(ValueError, match="not a lesshash filter file"):
        ld.isin(ddf["id"], tmp_path / "junk")
    with pytest.raises(ValueError, match="not a lesshash filter file"):
        ld.filter_frame(ddf, "id", str(tmp_path / "junk"))
    with pytest.raises(FileNotFoundError):
        ld.isin(ddf["id"], tmp_path / "missing.lhbf")


def test_a_mapped_filter_ships_by_path(dask_client, tmp_path, monkeypatch):
    """A filter from BloomFilter.open travels as its path: nothing is
    scattered, and the graph is as small for a 12 MB filter as for none."""
    _wait_released(dask_client)
    sent = []
    real = dask_client.scatter
    monkeypatch.setattr(dask_client, "scatter", lambda *a, **k: sent.append(1) or real(*a, **k))
    bf = BloomFilter(10_000_000, 0.01)  # 12 MB
    bf.add_many(np.arange(0, 40_000, 2, dtype=np.int64))
    bf.save(tmp_path / "big.lhbf")
    mapped = BloomFilter.open(tmp_path / "big.lhbf")
    ids = dd.from_pandas(pd.Series(np.arange(40_000, dtype=np.int64), name="id"), npartitions=8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mask = ld.isin(ids, mapped)
        rows = ld.filter_frame(ids.to_frame(), "id", mapped)
        graph_size = len(pickle.dumps(_graph(mask)))
        # The graph: the keys' partitions (320 kB) and a path.
        assert graph_size < len(pickle.dumps(_graph(ids))) + 4000 < bf.nbytes // 20
        assert mask.sum().compute() == 20_000
        assert (rows.compute()["id"] % 2 == 0).sum() == 20_000
    assert not [w for w in caught if "large graph" in str(w.message)], caught
    assert sent == [], "a mapped filter was scattered"
    assert dask_client.run_on_scheduler(_bloom_keys) == {}
    held = dask_client.run(_maps_held)
    assert any(str(tmp_path / "big.lhbf") in paths for paths in held.values()), held


def test_without_a_client_the_graph_holds_the_filter_itself(dask_client):
    """client=False (as with no client at all): one graph node holds the
    caller's filter object, whatever the number of partitions, so the
    local schedulers use it without a copy."""
    bf = BloomFilter(1_000_000, 0.01)  # 1.2 MB
    bf.add_many(np.arange(0, 64_000, 3, dtype=np.int64))
    frame = pd.DataFrame({"id": np.arange(64_000, dtype=np.int64)})
    ddf = dd.from_pandas(frame, npartitions=32)
    expected = bf.contains_many(frame["id"])
    for result in (ld.isin(ddf["id"], bf, client=False),
                   ld.filter_frame(ddf, "id", bf, client=False)):
        graph = _graph(result)
        holders = [k for k in graph if "lesshash-bloom" in str(k)]
        assert len(holders) == 1, holders
        assert getattr(graph[holders[0]], "value", None) is bf  # a DataNode of it
        assert not any(isinstance(v, distributed.Future) for v in graph.values())
    got = ld.isin(ddf["id"], bf, client=False).compute(scheduler="sync")
    assert (got.to_numpy() == expected).all()
    got = ld.filter_frame(ddf, "id", bf, client=False).compute(scheduler="threads")
    assert (got["id"].to_numpy() == frame["id"].to_numpy()[expected]).all()


def _bloom_keys(dask_scheduler) -> dict:
    """The scheduler's lesshash filter keys: key -> workers holding it."""
    return {
        k: sorted(ws.address for ws in ts.who_has or ())
        for k, ts in dask_scheduler.tasks.items()
        if str(k).startswith("lesshash-bloom")
    }


def _worker_copies(dask_worker) -> int:
    return sum(str(k).startswith("lesshash-bloom") for k in dask_worker.data)


def _wait_released(client, timeout=10.0):
    """Until no worker holds a filter and the scheduler forgot them all."""
    deadline = time.monotonic() + timeout
    while True:
        gc.collect()
        keys = client.run_on_scheduler(_bloom_keys)
        copies = sum(client.run(_worker_copies).values())
        if not keys and not copies:
            return
        assert time.monotonic() < deadline, (keys, copies)
        time.sleep(0.05)


def test_the_filter_reaches_each_worker_once_outside_the_graph(dask_client):
    """With a client: the graph holds a future, not the filter (no
    large-graph warning for a 12 MB filter); one copy per worker; the
    same filter twice is one key; a changed filter a new key, never a
    stale copy; everything released with the collections."""
    _wait_released(dask_client)
    # The Active Memory Manager drops replicas that no waiting task needs
    # (every 2 s): off here, so that the test sees where scatter put them.
    dask_client.amm.stop()
    try:
        _placement_and_release(dask_client)
    finally:
        dask_client.amm.start()


def _placement_and_release(dask_client):
    workers = sorted(dask_client.scheduler_info()["workers"])
    bf = BloomFilter(10_000_000, 0.01)  # 12 MB: over Dask's 10 MB warning
    bf.add_many(np.arange(0, 40_000, 2, dtype=np.int64))
    ids = dd.from_pandas(pd.Series(np.arange(40_000, dtype=np.int64), name="id"), npartitions=8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = ld.isin(ids, bf)
        # Broadcast: on every worker before any task asks for it.
        assert list(dask_client.run_on_scheduler(_bloom_keys).values()) == [workers]
        b = ld.filter_frame(ids.to_frame(), "id", bf)
        # The graph: the keys' partitions (320 kB) and a future.
        assert len(pickle.dumps(_graph(a))) < bf.nbytes // 20
        assert a.sum().compute() == 20_000
        assert (b.compute()["id"] % 2 == 0).sum() == 20_000
    assert not [w for w in caught if "large graph" in str(w.message)], caught
    keys = dask_client.run_on_scheduler(_bloom_keys)
    assert list(keys.values()) == [workers], keys  # one key, on every worker
    assert dask_client.run(_worker_copies) == dict.fromkeys(workers, 1)

    bf.add_many(np.arange(1, 40_000, 2, dtype=np.int64))  # now every id
    c = ld.isin(ids, bf)
    assert c.sum().compute() == 40_000, "a stale copy of the filter answered"
    assert a.sum().compute() == 20_000, "the earlier collection keeps its filter"
    assert len(dask_client.run_on_scheduler(_bloom_keys)) == 2
    del a, b, c
    _wait_released(dask_client)


def test_repeated_calls_do_not_accumulate_copies(dask_client):
    """A pipeline that calls isin again and again, with new filters, holds
    at most the filters of the collections it still has."""
    _wait_released(dask_client)
    ids = dd.from_pandas(pd.Series(np.arange(10_000, dtype=np.int64), name="id"), npartitions=4)
    kept = None
    for i in range(6):
        bf = BloomFilter(10_000, 0.01, seed=i)
        bf.add_many(np.arange(i, 10_000, 6, dtype=np.int64))
        mask = ld.isin(ids, bf)
        assert mask.sum().compute() >= len(range(i, 10_000, 6))
        if i == 0:
            kept = mask
        del mask
        gc.collect()
        deadline = time.monotonic() + 10
        while sum(dask_client.run(_worker_copies).values()) > 2 * (2 if i else 1):
            assert time.monotonic() < deadline, dask_client.run_on_scheduler(_bloom_keys)
            time.sleep(0.05)
    assert kept.sum().compute() == len(range(0, 10_000, 6))
    del kept
    _wait_released(dask_client)


def test_a_filter_scattered_once_serves_many_calls(dask_client, monkeypatch):
    """scatter() sends the filter once; isin and filter_frame take the
    future, and a filter whose contents the client already holds is not
    sent again."""
    _wait_released(dask_client)
    sent = []
    real = dask_client.scatter
    monkeypatch.setattr(dask_client, "scatter", lambda *a, **k: sent.append(1) or real(*a, **k))
    bf = BloomFilter(10_000, 0.01)
    bf.add_many(np.arange(0, 10_000, 5, dtype=np.int64))
    ids = dd.from_pandas(pd.Series(np.arange(10_000, dtype=np.int64), name="id"), npartitions=4)
    future = ld.scatter(bf)
    assert isinstance(future, distributed.Future) and len(sent) == 1
    for _ in range(3):
        assert ld.isin(ids, future).sum().compute() >= 2_000
        assert len(ld.filter_frame(ids.to_frame(), "id", future).compute()) >= 2_000
    again = ld.isin(ids, bf.copy())  # the same contents: the same key, reused
    assert again.sum().compute() >= 2_000
    assert len(sent) == 1
    with pytest.raises(TypeError, match="BloomFilter"):
        ld.scatter(np.arange(3))
    del future, again
    _wait_released(dask_client)


def test_a_fresh_cluster_receives_a_filter_first():
    """Workers that never ran a lesshash task still read a filter's frame
    (the deserialiser is registered on every worker): the scatter, with
    its worker-to-worker broadcast, as the cluster's very first work."""
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster, distributed.Client(cluster, set_as_default=False) as client:
        bf = BloomFilter(100_000, 0.01)
        bf.add_many(np.arange(0, 1000, 2, dtype=np.int64))
        # A lambda travels by value: a function of this module would make
        # the workers import it, and lesshash.dask with it.
        imported = lambda: "lesshash.dask" in sys.modules  # noqa: E731
        assert not any(client.run(imported).values())
        # Checked before the scatter, which distributed would retry forever
        # (a hang, not a failure) if a worker could not read the frame.
        ld._workers_import_this(client)
        assert all(client.run(imported).values())
        future = ld.scatter(bf, client=client)
        assert future.result(timeout=30) == bf
        assert len(client.who_has([future])[future.key]) == 2
        ids = dd.from_pandas(pd.Series(np.arange(1000, dtype=np.int64)), npartitions=4)
        mask = ld.isin(ids, future).compute(scheduler=client)
        assert (mask.to_numpy() == bf.contains_many(np.arange(1000))).all()


# --- how a filter crosses the cluster ------------------------------------------


def _address(buffer) -> int:
    return np.frombuffer(buffer, dtype=np.uint8).__array_interface__["data"][0]


def test_dask_frames_lend_the_bits_and_arrive_equal():
    """Dask's serialiser sends a filter as its header and a buffer over its
    own bits (the same address twice: no copy), and the receiver gets an
    equal filter, insert counter included; a change made while the frames
    live copies the bits first, so the frames keep the filter as it was."""
    from distributed.protocol import deserialize, serialize

    bf = BloomFilter(100_000, 0.01, layout="split-block", seed=9)
    bf.add_many(np.arange(5000, dtype=np.int64))
    header, frames = serialize(bf, serializers=["dask"])
    assert header["serializer"] == "dask" and len(frames) == 2
    assert len(frames[0]) == 64 and len(frames[1]) == bf.nbytes
    assert memoryview(frames[1]).readonly
    assert _address(bf._frames()[1]) == _address(frames[1]), "the payload was copied"
    got = deserialize(header, frames)
    assert got == bf and got.insert_calls == 5000 and got.to_bytes() == bf.to_bytes()

    before = bf.to_bytes()
    bf.add(10**9)  # while the frames live: copied first
    assert deserialize(header, frames).to_bytes() == before
    assert 10**9 in bf and bf.insert_calls == 5001
    del header, frames, got
    lent = _address(bf._frames()[1])
    bf.add(10**9 + 1)  # nothing lent any more: changed in place
    assert _address(bf._frames()[1]) == lent


def test_damaged_frames_are_refused_by_name():
    header, payload = BloomFilter(1000, 0.01)._frames()
    bad = bytearray(header)
    bad[33] ^= 1  # m
    with pytest.raises(ValueError, match="header_checksum"):
        BloomFilter._from_frames(bytes(bad), payload)
    with pytest.raises(ValueError, match="payload"):
        BloomFilter._from_frames(header, bytes(payload)[:-8])
    with pytest.raises(ValueError, match="header"):
        BloomFilter._from_frames(header + b"x", payload)
    # Unaligned payloads (a frame inside a larger message) are fine.
    shifted = memoryview(b"x" + bytes(payload))[1:]
    assert BloomFilter._from_frames(header, shifted) == BloomFilter(1000, 0.01)


def test_frames_joined_from_several_filters_take_the_unions_kind_and_count():
    """``_from_frames(..., insert_calls=, union_of=)``, what the distributed
    build joins its slices with: the key kind a union of the filters would
    have, the given insert counter, the bits as given."""
    ints, text, empty = (BloomFilter(1000, 0.01) for _ in range(3))
    ints.add_many(np.arange(10, dtype=np.int64))
    text.add_many(["a", "b"])
    union = ints.copy()
    union |= text
    header, payload = union._frames()
    for first, others, kind in [(ints, [text], "mixed"), (empty, [ints], "int64"),
                                (text, [empty], "text"), (ints, [], "int64")]:
        joined = BloomFilter._from_frames(first._frames()[0], payload, insert_calls=7,
                                          union_of=[o._frames()[0] for o in others])
        assert (joined.key_kind, joined.insert_calls) == (kind, 7)
        assert joined.to_bytes()[64:-8] == union.to_bytes()[64:-8]
    assert union.key_kind == "mixed"
    bad = bytearray(header)
    bad[33] ^= 1
    with pytest.raises(ValueError, match="header_checksum"):
        BloomFilter._from_frames(header, payload, union_of=[bytes(bad)])


def test_a_mapped_filter_sends_its_file_contents(tmp_path):
    bf = BloomFilter(10_000, 0.01)
    bf.add_many(["a", "b"])
    bf.save(tmp_path / "f.lhbf")
    mapped = BloomFilter.open(tmp_path / "f.lhbf")
    header, payload = mapped._frames()
    assert BloomFilter._from_frames(header, payload).to_bytes() == bf.to_bytes()
    assert mapped._digest() == bf._digest() == int.from_bytes(bf.to_bytes()[-8:], "little")


def _count_filter_arrivals(dask_worker=None):
    """Wraps this worker's deserialiser of filters with a counter."""
    from distributed.protocol.serialize import dask_deserialize

    real = dask_deserialize.dispatch(BloomFilter)
    if getattr(real, "counted", None) is not None:
        return
    counter = []

    def counted(header, frames):
        counter.append(1)
        return real(header, frames)

    counted.counted = counter
    dask_deserialize.register(BloomFilter)(counted)


def _filter_arrivals() -> int:
    from distributed.protocol.serialize import dask_deserialize

    return len(dask_deserialize.dispatch(BloomFilter).counted)


def test_a_filter_object_reaches_each_worker_once_for_many_calls(dask_client):
    """Five isin and five filter_frame calls with the same filter object,
    computed together, then one after another: each worker process
    receives (deserialises) the filter once. The Active Memory Manager is
    paused for the second part: between computations it drops the
    replicas no waiting task needs (every 2 s), and a worker then fetches
    the filter again when a task asks (docs/python.md)."""
    _wait_released(dask_client)
    dask_client.run(_count_filter_arrivals)
    before = dask_client.run(_filter_arrivals)
    bf = BloomFilter(50_000, 0.01)
    bf.add_many(np.arange(0, 50_000, 3, dtype=np.int64))
    members = len(range(0, 50_000, 3))
    ids = dd.from_pandas(pd.Series(np.arange(50_000, dtype=np.int64), name="id"), npartitions=8)
    masks = [ld.isin(ids, bf).sum() for _ in range(5)]
    frames = [ld.filter_frame(ids.to_frame(), "id", bf) for _ in range(5)]
    sums, kept = dask.compute(masks, frames)
    assert min(sums) >= members and min(map(len, kept)) >= members
    after = dask_client.run(_filter_arrivals)
    assert {w: after[w] - before[w] for w in after} == dict.fromkeys(after, 1)
    del masks, frames
    _wait_released(dask_client)

    dask_client.amm.stop()
    try:
        before = dask_client.run(_filter_arrivals)
        kept = []
        for _ in range(5):
            kept.append(ld.isin(ids, bf))
            assert kept[-1].sum().compute() >= members
            kept.append(ld.filter_frame(ids.to_frame(), "id", bf))
            assert len(kept[-1].compute()) >= members
        after = dask_client.run(_filter_arrivals)
        assert {w: after[w] - before[w] for w in after} == dict.fromkeys(after, 1)
    finally:
        dask_client.amm.start()
    del kept
    _wait_released(dask_client)


def test_string_keys_from_arrow_backed_partitions(dask_client):
    words = pd.Series([f"k{i}" for i in range(3000)], dtype="string[pyarrow]")
    ddf = dd.from_pandas(pd.DataFrame({"k": words}), npartitions=3)
    bf = ld.build(ddf, 3000, 0.01, column="k")
    assert bf.contains_many(words).all()
    assert ld.isin(ddf["k"], bf).compute().all()


# --- a worker process killed mid-build ---------------------------------------

KILL_PARTITIONS = 30
KILL_KEYS_PER_PARTITION = 20_000


def _slow_partition(part, log_dir, partition_info=None):
    """The keys as they are, slowly (0.1 s), leaving a file per run so that
    the test can tell a partition computed twice after the kill."""
    i = partition_info["number"]
    with open(os.path.join(log_dir, f"{i:03d}-{os.getpid()}-{time.monotonic_ns()}"), "w"):
        pass
    time.sleep(0.1)
    return part


def _in_memory_partitions(dask_scheduler) -> dict:
    """worker address -> number of _slow_partition results it holds."""
    held: dict = {}
    for key, ts in dask_scheduler.tasks.items():
        if "slow_partition" in str(key) and ts.state == "memory":
            for ws in ts.who_has or ():
                held[ws.address] = held.get(ws.address, 0) + 1
    return held


def _kill_mid_build(tmp_path, start, progress):
    """Four worker processes build a filter over 30 slow partitions
    (``start(client, slow_series) -> concurrent future of the filter``);
    once ``progress(client)`` (worker -> partitions it holds) counts three,
    the worker process holding the most is killed (SIGKILL: no goodbye to
    the scheduler). The scheduler recomputes what it lost, and the filter
    must still be bit-identical to one process's."""
    keys = (np.arange(KILL_PARTITIONS * KILL_KEYS_PER_PARTITION, dtype=np.int64) * 7919) - 12345
    ref = BloomFilter(len(keys), 0.01, seed=11)
    ref.add_many(keys)
    series = dd.from_array(keys, chunksize=KILL_KEYS_PER_PARTITION)
    assert series.npartitions == KILL_PARTITIONS
    slow = series.map_partitions(_slow_partition, str(tmp_path), meta=series._meta)
    with distributed.LocalCluster(
        n_workers=4, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster, distributed.Client(cluster, set_as_default=False) as client:
        pids = client.run(os.getpid)
        future = start(client, slow)
        deadline = time.monotonic() + 30
        while True:
            held = progress(client)
            if sum(held.values()) >= 3:
                break
            assert time.monotonic() < deadline, "the build never started"
            time.sleep(0.01)
        victim = max(held, key=held.get)
        # At least 27 partitions x 0.1 s over 4 workers remain: mid-build.
        assert not future.done()
        os.kill(pids[victim], signal.SIGKILL)
        bf = future.result(timeout=60)
        removed = client.run_on_scheduler(
            lambda dask_scheduler: victim not in dask_scheduler.workers
            or dask_scheduler.workers[victim].status.name != "running"
        )
    runs = sorted(p.name.split("-")[0] for p in tmp_path.iterdir())
    # The victim's partition results were lost and computed again.
    assert len(runs) > KILL_PARTITIONS, "no partition ran twice: the kill missed"
    assert set(runs) == {f"{i:03d}" for i in range(KILL_PARTITIONS)}
    assert removed
    assert bf.to_bytes() == ref.to_bytes()


def test_a_worker_killed_mid_build_gives_the_same_filter(tmp_path):
    """The tree of pure tasks (``compute=False``): the results held by the
    killed worker are computed again."""

    def start(client, slow):
        lazy = ld.build(slow, KILL_PARTITIONS * KILL_KEYS_PER_PARTITION, 0.01, seed=11,
                        compute=False, client=client)
        return client.compute(lazy)

    _kill_mid_build(tmp_path, start, lambda client: client.run_on_scheduler(_in_memory_partitions))


def _filled_partitions() -> int:
    """Partitions in this worker process's build filters."""
    return sum(len(entry[1]) for entry in ld._LOCAL.values())


def test_a_worker_killed_while_filling_gives_the_same_filter(tmp_path):
    """The distributed build (one filter per worker process): the killed
    worker's filter goes with it, its partitions are read and added again
    elsewhere, insert counter included."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        _kill_mid_build(
            tmp_path,
            lambda client, slow: pool.submit(
                ld.build, slow, KILL_PARTITIONS * KILL_KEYS_PER_PARTITION, 0.01, seed=11,
                client=client),
            lambda client: client.run(_filled_partitions),
        )
