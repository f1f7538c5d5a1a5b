"""Bloom filters built and applied across a Dask cluster.

``build`` fills one filter per worker process, each with the partitions
that process read, and combines them slice by slice (each process ORs one
slice of every filter, all at once). Every
partial filter has the same geometry (the same expected_items, fpr,
layout, scheme and seed give the same bits and hashes), and union is
bitwise OR, so the result is bit for bit the filter a single process would
build from all the keys, whatever the partitioning and whichever workers
come and go.

``isin`` and ``filter_frame`` map each partition to a boolean mask or a
filtered frame. With a distributed client the filter does not travel in
the task graph (through the scheduler, which warns about large graphs):
it is scattered to every worker once, under a key derived from its
contents, and the tasks refer to it by that future; the copies go when
the last collection or future that refers to it is gone. Without a client
(the local schedulers) the tasks use the caller's filter itself.

Between processes a filter travels as two frames, the format's header and
a buffer over its bits (no copy, no checksum pass on the sender; one copy
into aligned memory on the receiver).

A filter file on storage every worker sees travels as its path instead:
pass the path (or a filter from ``BloomFilter.open``), and each worker
process maps the file once (``BloomFilter.open``) and queries the map.

Requires the ``dask`` extra: ``pip install "./python[dask]"``.
"""

from __future__ import annotations

import os
import threading
import uuid

import numpy as np

try:
    import dask
    from dask.delayed import Delayed, delayed
    from dask.sizeof import sizeof
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "lesshash.dask needs Dask: pip install 'dask[dataframe]' distributed "
        "(or the package's `dask` extra)"
    ) from exc

from ._lesshash import BloomFilter, random_seed

__all__ = ["build", "isin", "filter_frame", "scatter", "as_delayed"]


def _register_serializers() -> None:
    """Filters cross the cluster as two frames: the format's 64-byte header
    and the payload, a buffer over the sender's own bits (no copy, no
    checksum pass). The receiver verifies the header (its own checksum and
    every field) and the payload's length and padding, and copies the bits
    once into the new filter's aligned memory.

    The payload's checksum is left out on purpose: it protects data at
    rest (files, ``to_bytes``, pickles), while these frames go from one
    process of the cluster to another over Dask's transport, the same way
    and with the same guarantees as the keys the filter was built from,
    which carry no checksum of ours either (TCP checks every segment; TLS,
    where configured, authenticates it)."""
    try:
        from distributed.protocol import dask_deserialize, dask_serialize
    except ImportError:  # Dask without distributed: pickling is used
        return

    @dask_serialize.register(BloomFilter)
    def _serialize(bf: BloomFilter):
        header, payload = bf._frames()
        return {}, [header, payload]

    @dask_deserialize.register(BloomFilter)
    def _deserialize(header, frames):
        return BloomFilter._from_frames(frames[0], frames[1])


_register_serializers()


try:
    from distributed.diagnostics.plugin import WorkerPlugin as _WorkerPlugin
except ImportError:  # Dask without distributed: never registered
    _WorkerPlugin = object


class _ImportPlugin(_WorkerPlugin):
    """Unpickling it on a worker imports this module."""


def _workers_import_this(client) -> None:
    """Make every worker of ``client``, present and future (restarted ones
    included), import this module, and so register the deserialisers
    above. A worker unpickles a filter's type, which imports only
    lesshash._lesshash, and then cannot read the frame: a fresh worker
    would fail to receive a filter (a broadcast replica, a partial filter
    of build, after a worker restart) unless a task of this module had run
    there first. Once per client: the scheduler keeps the plugin for the
    workers that join later."""
    if client.id in _IMPORTED:
        return
    client.register_plugin(_ImportPlugin(), name="lesshash.dask")
    _IMPORTED.add(client.id)


_IMPORTED: set = set()


# The scheduler's memory accounting and the workers' spilling see the bit
# array, not the Python object's few bytes; a map's pages are the page
# cache's, not the process's, so it counts as the small object it is.
@sizeof.register(BloomFilter)
def _sizeof(bf: BloomFilter) -> int:
    return 64 if bf.read_only else bf.nbytes


def _empty(expected_items, fpr, layout, scheme, seed) -> BloomFilter:
    return BloomFilter(expected_items, fpr, layout=layout, scheme=scheme, seed=seed)


def _build_partitions(expected_items, fpr, layout, scheme, seed, *parts) -> BloomFilter:
    bf = _empty(expected_items, fpr, layout, scheme, seed)
    for part in parts:
        bf.add_many(part)
    return bf


def _union_all(*filters: BloomFilter) -> BloomFilter:
    # In place, no copy: the first input is a result of this build's own
    # graph whose only dependent is this task, so nothing else sees it
    # change (and OR is idempotent: a rerun gives the same bits).
    out = filters[0]
    for f in filters[1:]:
        out |= f
    return out


# --- build on a distributed cluster: one filter per worker process ----------
#
# Each partition is added, where it was read, to a filter that the worker
# process keeps for the build (_fill), so keys never move and each process
# fills one filter however many partitions and threads it has. The filters
# are then combined by a reduce-scatter rather than a tree: with P
# processes holding filters, the bit array is cut into P slices, slice j
# of every filter goes to process j (_slice: a view of the bits, no copy),
# which ORs them (_or_slices), and the client joins the P results. Every
# byte of every filter crosses the network once and all processes send
# and receive at once, where a tree of unions sends whole filters up
# log2(P) levels one after the other (docs/bench-notes/2026-11-28.md, "the
# Dask build by slices").
#
# Every slice carries the partitions its filter holds, with their key
# counts. A process whose slices did not all arrive (lost with its worker
# after its fills were done: a slice task rerun elsewhere finds no filter)
# counts as holding nothing: its partitions are built again from the
# collection (pure tasks) and OR-ed in. The slices of its filter that did
# arrive hold only bits of those partitions' keys, which the rebuild sets
# again (OR is idempotent), so the result is exactly the single-process
# filter, insert counter included.

# This process (a worker restarted at the same address is another one).
_PROCESS = uuid.uuid4().hex
# build token -> [filter, {partition: key count}] of this process.
_LOCAL: dict = {}
_LOCAL_LOCK = threading.Lock()


def _fill(part, token: str, params: tuple, number: int) -> tuple:
    """Adds one partition's keys to this process's filter for ``token``.
    Returns where they went: (process, worker address, partition)."""
    with _LOCAL_LOCK:
        entry = _LOCAL.get(token)
        if entry is None:
            entry = _LOCAL[token] = [_empty(*params), {}]
        done = number in entry[1]
    if not done:  # a partition run twice here adds (and counts) once
        # Inserts take the filter's own lock, with the GIL released: the
        # worker's other threads read and fill meanwhile.
        count = entry[0].add_many(part)
        with _LOCAL_LOCK:
            entry[1][number] = count
    try:
        from distributed import get_worker

        address = get_worker().address
    except (ImportError, ValueError):  # not on a distributed worker
        address = None
    return _PROCESS, address, number


def _slice_bounds(nbytes: int, j: int, count: int) -> tuple[int, int]:
    """Slice ``j`` of ``count`` of a payload of ``nbytes`` (whole words):
    whole 64-byte lines (the blocked layouts' blocks), the last slice to
    the end."""
    lines = nbytes // 64
    hi = nbytes if j == count - 1 else lines * (j + 1) // count * 64
    return lines * j // count * 64, hi


def _slice(token: str, process: str, j: int, count: int) -> tuple:
    """Slice ``j`` of ``count`` of this process's filter for ``token``, as
    ``(process, bytes view, (header, {partition: key count}))``;
    ``(process, None, None)`` in another process (the one that filled it
    is gone). The view lends the filter's bits (no copy); the filter stays
    until ``_drop``."""
    with _LOCAL_LOCK:
        entry = _LOCAL.get(token) if process == _PROCESS else None
    if entry is None or j in _LOSE_SLICES:
        return process, None, None
    bf, held = entry
    header, payload = bf._frames()
    bits = np.frombuffer(payload, dtype=np.uint8)
    lo, hi = _slice_bounds(len(bits), j, count)
    return process, bits[lo:hi], (header, dict(held))


def _or_slices(*pieces: tuple) -> tuple:
    """The OR of one slice of every process's filter: ``(bytes or None,
    {process: (header, {partition: key count})})`` for the processes whose
    slice arrived."""
    out, held = None, {}
    for process, bits, counts in pieces:
        if bits is None:
            continue
        if out is None:
            out = np.array(bits, dtype=np.uint8)  # aligned, writable
        else:
            np.bitwise_or(out.view(np.uint64), np.asarray(bits, dtype=np.uint8).view(np.uint64),
                          out=out.view(np.uint64))
        held[process] = counts
    return out, held


def _drop(token: str) -> None:
    with _LOCAL_LOCK:
        _LOCAL.pop(token, None)


# Test hook: slice numbers this process answers as lost (set on a worker).
_LOSE_SLICES: set = set()

# Test hook: called with (client, token) once every partition is in a
# worker's filter, before the filters are collected.
_AFTER_FILL = None


def _build_on_workers(client, parts, params: tuple) -> BloomFilter:
    token = uuid.uuid4().hex
    fills = [
        delayed(_fill, pure=False)(part, token, params, i, dask_key_name=f"lesshash-fill-{token}-{i}")
        for i, part in enumerate(parts)
    ]
    # The payload's length (the format's, padding included).
    nbytes = memoryview(_empty(*params)._frames()[1]).nbytes
    try:
        filled = client.compute(fills)
        placed = sorted({(proc, addr) for proc, addr, _ in client.gather(filled)}, key=str)
        # Released now: a worker lost from here on is not recomputed (its
        # filter is gone with it anyway); its partitions show as missing.
        del filled
        if _AFTER_FILL is not None:
            _AFTER_FILL(client, token)
        count = len(placed)
        where = [dict(workers=[addr], allow_other_workers=True) if addr else {}
                 for _, addr in placed]
        slices = [
            [client.submit(_slice, token, proc, j, count, key=f"lesshash-slice-{token}-{i}-{j}",
                           pure=False, **where[i])
             for j in range(count)]
            for i, (proc, _) in enumerate(placed)
        ]
        ored = [
            client.submit(_or_slices, *[slices[i][j] for i in range(count)],
                          key=f"lesshash-or-{token}-{j}", pure=False, **where[j])
            for j in range(count)
        ]
        del slices
        results = client.gather(ored)
        del ored
    finally:
        # Filters not collected (an error, an interrupt, a worker's filter
        # that a lost slice task left behind) are dropped.
        client.run(_drop, token)
    # A process counts only if every slice of its filter arrived.
    complete = sorted(set.intersection(*(set(held) for _, held in results)) if results else ())
    counts: dict = {}
    headers = [results[0][1][process][0] for process in complete]
    for process in complete:
        counts.update(results[0][1][process][1])
    bf = None
    if complete:
        payload = np.empty(nbytes, dtype=np.uint8)
        for j, (bits, _) in enumerate(results):
            lo, hi = _slice_bounds(nbytes, j, len(results))
            payload[lo:hi] = bits
        del results
        # The key kind of the union of the filters, the insert counter of
        # their partitions (one held by two filters counted once).
        bf = BloomFilter._from_frames(headers[0], payload, insert_calls=sum(counts.values()),
                                      union_of=headers[1:])
        del payload
    missing = [i for i in range(len(parts)) if i not in counts]
    if missing or bf is None:
        rebuilt = client.compute(
            delayed(_build_partitions, pure=True)(*params, *[parts[i] for i in missing])
        ).result()
        calls = sum(counts.values()) + rebuilt.insert_calls
        if bf is None:
            bf = rebuilt
        else:
            bf |= rebuilt
        if bf.insert_calls != calls:  # the union adds both counters
            bf._set_insert_calls(calls)
    return bf


def _partitions(collection, column):
    """The collection's partitions as delayed key batches."""
    if column is not None:
        collection = collection[column]
    elif getattr(collection, "ndim", None) == 2:
        raise TypeError(
            "build() over a DataFrame needs column=...: the name of the key column"
        )
    if not hasattr(collection, "to_delayed"):
        raise TypeError(
            f"expected a Dask Series, DataFrame or Bag, got {type(collection).__name__}"
        )
    return collection.to_delayed()


def build(
    collection,
    expected_items: int,
    fpr: float,
    *,
    column: str | None = None,
    layout: str | None = None,
    scheme: str | None = None,
    seed: int | str | None = None,
    split_every: int = 8,
    max_filters: int | None = None,
    compute: bool = True,
    client=None,
) -> BloomFilter | Delayed:
    """A filter of every key in a Dask Series, DataFrame column or Bag.

    With a distributed client (and ``compute=True``, the default), each
    worker process keeps one filter, sized for the whole
    ``expected_items``, and adds every partition it reads to it, where it
    was read: keys never move, and a process allocates, fills and sends one
    filter however many partitions and threads it has. The filters are then
    OR-ed slice by slice: with P processes, each ORs one P-th of the bit
    array of every filter, all at once, and this process joins the P
    results (each byte of each filter sent once; the client receives one
    filter's worth). A worker lost before its filter was collected loses
    nothing: its partitions are read and added again, so the result is always the
    filter a single process would build from all the keys, bit for bit.

    With ``compute=False`` the result is a ``Delayed`` (to compute together
    with other work), and without a distributed client the local
    scheduler runs the same tree of pure tasks: one filter per group of
    consecutive partitions, at most ``max_filters`` of them (default: the
    number of worker processes of the client, else 8), OR-ed together
    ``split_every`` at a time; a result lost with a worker is computed
    again, to the same bits. ``client``: the distributed client to compute
    on (default: the default client, as for ``isin``). ``seed="random"``
    draws one secret seed here, on the client, for every part (the
    result's ``seed`` tells it).
    """
    if split_every < 2:
        raise ValueError(f"split_every must be at least 2, got {split_every}")
    resolved = _client(client)
    if resolved is not None:
        _workers_import_this(resolved)
    if max_filters is None:
        max_filters = (len(resolved.nthreads()) if resolved is not None else 0) or 8
    if max_filters < 1:
        raise ValueError(f"max_filters must be at least 1, got {max_filters}")
    if seed == "random":
        # Drawn once, here: every part must use the same seed to combine.
        seed = random_seed()
    params = (expected_items, fpr, layout, scheme, seed)
    # Fail here, not on a worker, for bad parameters.
    _empty(*params)
    parts = _partitions(collection, column)
    if compute and resolved is not None and parts:
        return _build_on_workers(resolved, parts, params)
    per = -(-len(parts) // max_filters) if parts else 1
    level = [
        delayed(_build_partitions, pure=True)(*params, *parts[i : i + per])
        for i in range(0, len(parts), per)
    ]
    if not level:
        level = [delayed(_empty, pure=True)(*params)]
    while len(level) > 1:
        level = [
            delayed(_union_all, pure=True)(*level[i : i + split_every])
            for i in range(0, len(level), split_every)
        ]
    result = level[0]
    if not compute:
        return result
    return result.compute(scheduler=resolved) if resolved is not None else result.compute()


def as_delayed(bloom: BloomFilter | Delayed) -> Delayed:
    """The filter as one delayed object, to pass to many tasks: the graph
    holds it once, so each worker receives it once (with the graph)."""
    if isinstance(bloom, Delayed):
        return bloom
    _check(bloom)
    # A content-derived name: the same filter passed twice is one node.
    return delayed(bloom, name=_key(bloom), traverse=False)


def _check(bloom) -> None:
    if not isinstance(bloom, BloomFilter):
        raise TypeError(f"expected a lesshash.BloomFilter, got {type(bloom).__name__}")


def _key(bloom: BloomFilter) -> str:
    """A key for a filter's contents: the format's checksum of its header
    and bits (what a file of it would store), one pass over the bits in
    place."""
    return f"lesshash-bloom-{bloom._digest():016x}"


def _client(client):
    """The distributed client to scatter the filter with, or None.

    ``client=None``: the default client (the one ``Client()`` makes the
    scheduler of ``compute``), unless the configured scheduler is a local
    one; ``client=False``: none.
    """
    if client is False:
        return None
    if client is not None:
        return client
    if dask.config.get("scheduler", None) not in (None, "dask.distributed", "distributed"):
        return None
    try:
        from distributed import default_client
    except ImportError:  # Dask without distributed
        return None
    try:
        return default_client()
    except ValueError:  # no client
        return None


def scatter(bloom: BloomFilter, client=None):
    """A ``distributed.Future`` of the filter, held by every worker.

    What ``isin`` and ``filter_frame`` do on each call with a filter; call
    it yourself to send a filter once for many calls (pass the future
    instead of the filter). ``client``: default, the default client.

    Broadcast puts a copy on each worker (sent by the client to one of
    them, then from worker to worker), outside the graph. While this
    client holds a future of a filter with the same contents (the format's
    checksums), that future is reused: no transfer, no second copy. A
    filter changed since is sent anew, never answered by a stale copy. The
    future is reference-counted: when the last collection or future that
    refers to it is gone, the scheduler releases it on every worker. (The
    Active Memory Manager may drop replicas no pending task needs; a
    worker without one fetches it from a peer when a task asks.)
    """
    _check(bloom)
    resolved = _client(client)
    if resolved is None:
        raise ValueError("scatter() needs a distributed client: none given, and no default client")
    _workers_import_this(resolved)
    contents = _key(bloom)
    from distributed import Future

    key = _LIVE.get((resolved.id, contents))
    state = resolved.futures.get(key) if key is not None else None
    if state is not None and state.status == "finished":
        # Held, so no release of it is in flight: safe to share.
        return Future(key, resolved)
    # A new key every time it is sent: a key reused after its release
    # could meet that release, still on its way to the scheduler, and be
    # forgotten under the new graph ("lost dependencies").
    key = f"{contents}-{uuid.uuid4().hex[:16]}"
    future = resolved.scatter({key: bloom}, broadcast=True, direct=True)[key]
    for held, k in list(_LIVE.items()):  # forget released keys: no growth
        if held[0] == resolved.id and k not in resolved.futures:
            del _LIVE[held]
    _LIVE[(resolved.id, contents)] = key
    return future


# (client id, contents) -> the key the contents were last sent under.
_LIVE: dict = {}


def _is_future(obj) -> bool:
    try:
        from distributed import Future
    except ImportError:
        return False
    return isinstance(obj, Future)


def _filter_arg(bloom, client):
    """What the partition tasks get: a filter file's path (a path, or a
    mapped filter); a future of the scattered filter with a distributed
    client; else the filter itself (a delayed node named uniquely, so
    naming it costs no pass over its bits)."""
    if isinstance(bloom, (str, os.PathLike)):
        return _FilterFile.check(bloom)
    if isinstance(bloom, Delayed) or _is_future(bloom):
        return bloom
    _check(bloom)
    if bloom.read_only:
        # How a map pickles: its path, verify flag and, where set on it
        # (``bf.key_kind = ...``), its key kind.
        _, (path, verify, *key_kind) = bloom.__reduce__()
        return _FilterFile(path, verify, key_kind=key_kind[0] if key_kind else None)
    if _client(client) is not None:
        return scatter(bloom, client)
    return delayed(bloom, name=f"lesshash-bloom-{uuid.uuid4().hex}", traverse=False)


class _FilterFile:
    """A filter file on storage every worker sees, in the graph by its
    path: each process maps it once (``_mapped``)."""

    __slots__ = ("path", "verify", "identity", "key_kind")

    def __init__(self, path: str, verify: bool, identity: tuple = (), key_kind=None):
        self.path, self.verify, self.identity = path, verify, identity
        # The key kind a mapped filter was set to answer as (None: the file's).
        self.key_kind = key_kind

    @classmethod
    def check(cls, path) -> _FilterFile:
        """Fails here, not on the workers, for a path that is no filter or
        a damaged one: the header, the length and the checksum, once (one
        pass over the file). The workers then map that file unverified; a
        file replaced since (another identity) is verified where it is
        mapped (``_mapped``)."""
        path = os.path.abspath(os.fspath(path))
        identity = _identity(os.stat(path))
        try:
            BloomFilter.open(path, verify=True)
        except ValueError as exc:
            raise ValueError(f"not a lesshash filter file: {exc}") from exc
        return cls(path, False, identity)

    def __reduce__(self):
        return _FilterFile, (self.path, self.verify, self.identity, self.key_kind)

    def __dask_tokenize__(self):
        # The file as the client saw it: a replaced file is a new input.
        return ("lesshash-bloom-file", self.path, self.verify, self.identity, self.key_kind)

    def __repr__(self) -> str:
        kind = "" if self.key_kind is None else f", key_kind={self.key_kind!r}"
        return f"_FilterFile({self.path!r}, verify={self.verify}{kind})"


def _identity(st: os.stat_result) -> tuple:
    """What tells a file replaced under the same path from the one before."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


# This process's maps: (path, verify) -> (the file's identity, the map).
# One per path; a replaced file (another identity) is mapped anew and the
# old map goes when no task uses it.
_MAPS: dict = {}
_MAPS_LOCK = threading.Lock()


def _mapped(ref: _FilterFile) -> BloomFilter:
    # Stat before opening: a file replaced in between is mapped new and
    # recorded old, so the next task maps it again (never a stale map kept).
    identity = _identity(os.stat(ref.path))
    key = (ref.path, ref.verify, ref.key_kind)
    with _MAPS_LOCK:  # a worker's threads open a file once between them
        held = _MAPS.get(key)
        if held is not None and held[0] == identity:
            return held[1]
        # The client verified the file it saw; another file at that path
        # (replaced since) is verified here.
        verify = ref.verify or (bool(ref.identity) and identity != ref.identity)
        bf = BloomFilter.open(ref.path, verify=verify)
        if ref.key_kind is not None:
            bf.key_kind = ref.key_kind
        _MAPS[key] = (identity, bf)
        return bf


def _resolve(bloom) -> BloomFilter:
    return _mapped(bloom) if isinstance(bloom, _FilterFile) else bloom


def _mask(bloom: BloomFilter, keys) -> np.ndarray:
    # pandas hands its NumPy int64 columns over as views and Arrow-backed
    # ones through the Arrow PyCapsule interface (lesshash._keys): no copy
    # of the keys. The mask is a fresh array the caller may own.
    return _resolve(bloom).contains_many(keys) if len(keys) else np.zeros(0, dtype=bool)


def _isin_partition(part, bloom: BloomFilter):
    import pandas as pd

    # copy=False: pandas 3 copies an ndarray given to Series() by default.
    return pd.Series(_mask(bloom, part), index=part.index, name=part.name, copy=False)


def isin(series, bloom, *, client=None):
    """A boolean Dask Series: whether each key may be in ``bloom`` (no false
    negatives; false positives at the filter's rate).

    ``bloom``: a BloomFilter, a future from ``scatter``, a ``Delayed``
    filter (as from ``build(..., compute=False)``), or the path (``str``
    or ``os.PathLike``) of a filter file on storage that every worker
    sees at that path. A path is checked here (header, length and
    checksum, one pass over the file: a file that is no filter or a
    damaged one raises ``ValueError`` now, a missing one
    ``FileNotFoundError``), then only the path travels: each worker
    process maps the file once (``BloomFilter.open``, unverified: it was
    verified here) and maps it again, verified, if the file is replaced. A mapped filter
    (``BloomFilter.open``) travels by its path the same way, with its
    ``verify`` flag.
    ``client``: the distributed client that will compute the result; the
    filter is scattered to its workers (see ``scatter``). By default the
    default client if there is one; ``False`` (or no client) puts the
    filter itself in the graph, which the local schedulers use without
    copying it (so they see changes made to it before ``compute``, where
    a scattered filter is the filter as it was at the call).
    """
    return series.map_partitions(
        _isin_partition,
        _filter_arg(bloom, client),
        meta=(series.name, "bool"),
    )


def _filter_partition(df, column, bloom: BloomFilter, invert: bool):
    mask = _mask(bloom, df[column])
    if invert:
        np.logical_not(mask, out=mask)
    return df[mask]


def filter_frame(df, column: str, bloom, invert: bool = False, *, client=None):
    """The rows of a Dask DataFrame whose ``column`` may be in ``bloom``
    (``invert=True``: the rows certainly not in it). ``bloom`` and
    ``client`` as for ``isin``."""
    if column not in df.columns:
        raise KeyError(f"column {column!r} is not in the frame (columns: {list(df.columns)})")
    return df.map_partitions(
        _filter_partition,
        column,
        _filter_arg(bloom, client),
        invert,
        meta=df._meta,
    )
