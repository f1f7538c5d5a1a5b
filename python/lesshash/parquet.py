"""Parquet's own Bloom filters: the split-block filters a Parquet file
holds for a column, one per row group (as pyarrow, Spark, DuckDB and
parquet-rs write them), read and asked about keys; and filters built the
way a Parquet writer builds them.

    import pyarrow.parquet as pq
    import lesshash.parquet

    pq.write_table(table, "events.parquet", bloom_filter_options={"user_id": {"ndv": 10**6, "fpp": 0.01}})
    filters = lesshash.parquet.column_filters("events.parquet", "user_id")
    filters.contains_many([42, 7])          # may any row group hold the key
    filters.row_groups_for([42, 7])         # per row group: which to read

A Parquet filter hashes a value's Parquet encoding (XXH64 of an INT32's 4
bytes, an INT64's 8, a string's bytes), which depends on the column's
type: keys are converted to the column's Arrow type first (``keys_as``),
so that ``7`` asks an ``int32`` column about the 4-byte 7 and an ``int64``
column about the 8-byte one. These filters are Parquet's, not lesshash's
(``BloomFilter``): other hash, other layout rules, no key kind.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, List, Optional

import numpy as np

from ._lesshash import ParquetFilter

#: The old name of :class:`ParquetFilter`.
SplitBlockFilter = ParquetFilter

__all__ = ["ParquetFilter", "ColumnFilters", "column_filters", "keys_as", "build"]


def keys_as(keys: Any, type: Any):
    """`keys` as a ``pyarrow`` array (or chunked array) of Arrow type `type`
    (a dictionary type's value type): converted if they are not one,
    cast (safely: a value the type cannot hold raises) if of another type."""
    import pyarrow as pa

    if pa.types.is_dictionary(type):
        type = type.value_type
    if isinstance(keys, (pa.Array, pa.ChunkedArray)):
        if pa.types.is_dictionary(keys.type):
            keys = keys.cast(keys.type.value_type)
        return keys if keys.type == type else keys.cast(type)
    if hasattr(keys, "__arrow_c_array__") or hasattr(keys, "__arrow_c_stream__"):
        return keys_as(pa.array(keys) if hasattr(keys, "__arrow_c_array__")
                       else pa.chunked_array(keys), type)
    if isinstance(keys, (str, bytes)):
        raise TypeError("a single str or bytes is not a batch of keys: pass a list")
    if isinstance(keys, np.ndarray):
        return pa.array(keys).cast(type)
    return pa.array(list(keys), type=type)


@dataclass
class ColumnFilters:
    """The Bloom filters of one column of a Parquet file: ``row_groups[i]``
    is row group i's, ``None`` where the writer wrote none."""

    path: str
    column: str
    type: Any
    row_groups: List[Optional[ParquetFilter]]

    def row_groups_for(self, keys: Any) -> np.ndarray:
        """A ``bool`` array of shape (row groups, keys): whether row group i
        may hold key j (``True`` where it has no filter: unknown). A
        ``False`` is certain: the row group need not be read for that key."""
        keys = keys_as(keys, self.type)
        out = np.ones((len(self.row_groups), len(keys)), dtype=bool)
        for i, f in enumerate(self.row_groups):
            if f is not None:
                out[i] = f.contains_many(keys)
        return out

    def contains_many(self, keys: Any) -> np.ndarray:
        """Whether each key may be in the column (in any row group); a null
        key answers ``False``."""
        keys = keys_as(keys, self.type)
        if not self.row_groups:
            return np.zeros(len(keys), dtype=bool)
        present = np.asarray(keys.is_valid())
        return self.row_groups_for(keys).any(axis=0) & present


def column_filters(source: "str | os.PathLike[str]", column: str) -> ColumnFilters:
    """The Bloom filters of `column` (a top-level column, or a nested
    one's dotted path) in the Parquet file at `source`, read from the
    offsets its footer gives (header and bitset checked)."""
    import pyarrow.parquet as pq

    path = os.fspath(source)
    pf = pq.ParquetFile(path)
    meta = pf.metadata
    paths = [meta.schema.column(i).path for i in range(meta.num_columns)]
    if column not in paths:
        raise KeyError(f"column {column!r} is not in {path} (columns: {paths})")
    index = paths.index(column)
    arrow_type = pf.schema_arrow.field(column.split(".")[0]).type
    if "." in column:
        for name in column.split(".")[1:]:
            arrow_type = arrow_type.field(name).type
    filters: List[Optional[ParquetFilter]] = []
    with open(path, "rb") as f:
        for g in range(meta.num_row_groups):
            chunk = meta.row_group(g).column(index)
            offset = chunk.bloom_filter_offset
            if offset is None or offset < 0:
                filters.append(None)
                continue
            f.seek(offset)
            length = chunk.bloom_filter_length
            if length is None or length <= 0:
                prefix = f.read(64)
                length = ParquetFilter.stored_length(prefix)
                f.seek(offset)
            data = f.read(length)
            try:
                filters.append(ParquetFilter.from_bytes(data))
            except ValueError as e:
                raise ValueError(
                    f"{path}: row group {g}, column {column!r}: the Bloom filter at offset "
                    f"{offset}: {e}"
                ) from None
    return ColumnFilters(path, column, arrow_type, filters)


def build(values: Any, ndv: Optional[int] = None, fpp: float = 0.01,
          type: Any = None) -> ParquetFilter:
    """A filter of `values` as a Parquet writer builds one for a column of
    their Arrow type (or `type`): sized for `ndv` distinct values
    (default: the count of values) at false-positive rate `fpp`; nulls
    are skipped."""
    import pyarrow as pa

    if type is not None:
        values = keys_as(values, type)
    elif not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = pa.array(values) if not isinstance(values, np.ndarray) else pa.array(values)
    f = ParquetFilter(max(1, ndv if ndv is not None else len(values)), fpp)
    f.add_many(values)
    return f
