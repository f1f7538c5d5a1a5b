"""Bloom filters built and applied across a Dask cluster.

``build`` makes one filter per partition on the workers and combines them
by a tree reduction with union. Every partial filter has the same geometry
(the same expected_items, fpr, layout, scheme and seed give the same bits
and hashes), and union is bitwise OR, so the result is bit for bit the
filter a single process would build from all the keys, whatever the
partitioning.

``isin`` and ``filter_frame`` map each partition to a boolean mask or a
filtered frame. The filter enters the task graph once, as a single
delayed object that every partition task depends on, so the distributed
scheduler ships it to each worker once, not once per task.

Requires the ``dask`` extra: ``pip install "./python[dask]"``.
"""

from __future__ import annotations

import numpy as np

try:
    import dask
    from dask.delayed import Delayed, delayed
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "lesshash.dask needs Dask: pip install 'dask[dataframe]' distributed "
        "(or the package's `dask` extra)"
    ) from exc

from ._lesshash import BloomFilter

__all__ = ["build", "isin", "filter_frame", "as_delayed"]


def _register_serializers() -> None:
    """Filters cross the cluster as one frame of the crate's binary format
    (checksummed, validated on arrival) rather than as a pickle that copies
    it twice."""
    try:
        from distributed.protocol import dask_deserialize, dask_serialize
    except ImportError:  # Dask without distributed: pickling is used
        return

    @dask_serialize.register(BloomFilter)
    def _serialize(bf: BloomFilter):
        return {}, [bf.to_bytes()]

    @dask_deserialize.register(BloomFilter)
    def _deserialize(header, frames):
        return BloomFilter.from_bytes(frames[0])


_register_serializers()


def _empty(expected_items, fpr, layout, scheme, seed) -> BloomFilter:
    return BloomFilter(expected_items, fpr, layout=layout, scheme=scheme, seed=seed)


def _build_partitions(expected_items, fpr, layout, scheme, seed, *parts) -> BloomFilter:
    bf = _empty(expected_items, fpr, layout, scheme, seed)
    for part in parts:
        bf.add_many(part)
    return bf


def _union_all(*filters: BloomFilter) -> BloomFilter:
    out = filters[0].copy()
    for f in filters[1:]:
        out |= f
    return out


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


def _workers() -> int | None:
    """Workers of the current distributed client, if there is one."""
    try:
        from distributed import get_client

        return len(get_client().scheduler_info()["workers"]) or None
    except Exception:  # no distributed, or no client: the local scheduler
        return None


def build(
    collection,
    expected_items: int,
    fpr: float,
    *,
    column: str | None = None,
    layout: str = "blocked",
    scheme: str | None = None,
    seed: int | None = None,
    split_every: int = 8,
    max_filters: int | None = None,
    compute: bool = True,
) -> BloomFilter | Delayed:
    """A filter of every key in a Dask Series, DataFrame column or Bag.

    Filters are built on the workers, each sized for the whole
    ``expected_items`` so that they combine: one per group of consecutive
    partitions, at most ``max_filters`` of them (default: the number of
    workers of the current distributed client, else 8). Every filter costs
    its full size to allocate, fill and ship, and a filter of all the keys
    is larger than one partition's keys from about seven partitions on, so
    moving keys into a few filters is cheaper than moving many filters.
    The filters are then OR-ed together ``split_every`` at a time. With ``compute=False`` the result is a ``Delayed`` (to compute
    together with other work).
    """
    if split_every < 2:
        raise ValueError(f"split_every must be at least 2, got {split_every}")
    if max_filters is None:
        max_filters = _workers() or 8
    if max_filters < 1:
        raise ValueError(f"max_filters must be at least 1, got {max_filters}")
    # Fail here, not on a worker, for bad parameters.
    _empty(expected_items, fpr, layout, scheme, seed)
    parts = _partitions(collection, column)
    per = -(-len(parts) // max_filters) if parts else 1
    level = [
        delayed(_build_partitions, pure=True)(
            expected_items, fpr, layout, scheme, seed, *parts[i : i + per]
        )
        for i in range(0, len(parts), per)
    ]
    if not level:
        level = [delayed(_empty, pure=True)(expected_items, fpr, layout, scheme, seed)]
    while len(level) > 1:
        level = [
            delayed(_union_all, pure=True)(*level[i : i + split_every])
            for i in range(0, len(level), split_every)
        ]
    result = level[0]
    return result.compute() if compute else result


def as_delayed(bloom: BloomFilter | Delayed) -> Delayed:
    """The filter as one delayed object, to pass to many tasks: the graph
    holds it once, so each worker receives it once."""
    if isinstance(bloom, Delayed):
        return bloom
    if not isinstance(bloom, BloomFilter):
        raise TypeError(f"expected a lesshash.BloomFilter, got {type(bloom).__name__}")
    # A content-derived name: the same filter passed twice is one node.
    token = dask.base.tokenize(bloom.to_bytes())
    return delayed(bloom, name=f"lesshash-bloom-{token}", traverse=False)


def _isin_partition(part, bloom: BloomFilter):
    import pandas as pd

    mask = bloom.contains_many(part) if len(part) else np.zeros(0, dtype=bool)
    return pd.Series(mask, index=part.index, name=part.name)


def isin(series, bloom: BloomFilter | Delayed):
    """A boolean Dask Series: whether each key may be in ``bloom`` (no false
    negatives; false positives at the filter's rate)."""
    return series.map_partitions(
        _isin_partition,
        as_delayed(bloom),
        meta=(series.name, "bool"),
    )


def _filter_partition(df, column, bloom: BloomFilter, invert: bool):
    keys = df[column]
    mask = bloom.contains_many(keys) if len(keys) else np.zeros(0, dtype=bool)
    if invert:
        mask = ~mask
    return df[mask]


def filter_frame(df, column: str, bloom: BloomFilter | Delayed, invert: bool = False):
    """The rows of a Dask DataFrame whose ``column`` may be in ``bloom``
    (``invert=True``: the rows certainly not in it)."""
    if column not in df.columns:
        raise KeyError(f"column {column!r} is not in the frame (columns: {list(df.columns)})")
    return df.map_partitions(
        _filter_partition,
        column,
        as_delayed(bloom),
        invert,
        meta=df._meta,
    )
