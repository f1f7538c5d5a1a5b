"""DuckDB: a filter as a SQL function.

    import duckdb
    from lesshash import BloomFilter
    import lesshash.duckdb

    con = duckdb.connect()
    lesshash.duckdb.register(con, "in_users", "users.lhbf")
    con.sql("SELECT count(*) FROM 'events/*.parquet' WHERE in_users(user_id)")

``register`` adds a vectorized scalar function (DuckDB's Arrow UDFs): DuckDB
hands it a column's values 2,048 rows at a time as an Arrow array, and it
answers with ``contains_many(..., output="arrow")``: the same keys as every
other interface (docs/guide.md, "Keys: one encoding everywhere"), a NULL
key answering NULL (so ``WHERE in_users(k)`` and ``WHERE NOT in_users(k)``
both leave it out, as ``IN`` does).

The cost is DuckDB's per-call one: a Python call, under the GIL, for every
2,048 rows (about 30 us on one thread, several times the filter's own
work; more on several threads, which wait for each other's GIL). For a
large table DuckDB's own semi join (``k IN (SELECT id FROM users)``) can be
faster than the function; the function's advantage is that the filter is
small, built elsewhere, shared, and never needs the users table.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Union

from ._lesshash import BloomFilter

__all__ = ["register", "KEY_TYPES"]

# DuckDB parameter types whose Arrow form is a key type, and the key kind
# of each (what a filter built from the same column through Arrow, pandas,
# Polars or the command line records).
KEY_TYPES = {
    "BIGINT": "int64",
    "INTEGER": "int64",
    "SMALLINT": "int64",
    "TINYINT": "int64",
    "UBIGINT": "int64",
    "UINTEGER": "int64",
    "USMALLINT": "int64",
    "UTINYINT": "int64",
    "DATE": "int64",
    "TIME": "int64",
    "TIMESTAMP": "int64",
    "TIMESTAMP_S": "int64",
    "TIMESTAMP_MS": "int64",
    "TIMESTAMP_NS": "int64",
    "VARCHAR": "text",
    "BLOB": "bytes",
}

# The parameter type for a filter's key kind, when none is given.
_DEFAULT_TYPE = {"int64": "BIGINT", "text": "VARCHAR", "bytes": "BLOB"}


def register(
    con: Any,
    name: str,
    filter: Union[BloomFilter, str, "os.PathLike[str]"],
    *,
    key_type: Optional[str] = None,
) -> None:
    """Adds ``name(key) -> BOOLEAN`` to the DuckDB connection `con`: whether
    `key` may be in `filter` (``False`` certain, ``True`` wrong with the
    filter's false-positive rate, NULL for a NULL key).

    `filter`: a ``BloomFilter``, or the path of a filter file, mapped once
    here (``BloomFilter.open``: its checksum verified once, its pages
    shared with every other process that maps it). `key_type`: the
    function's parameter type, one of ``KEY_TYPES``; by default the type
    of the filter's recorded key kind (``BIGINT`` for integers, which
    DuckDB widens every integer column to, ``VARCHAR`` for text, ``BLOB``
    for bytes). A filter of mixed or unrecorded keys needs it. Dates,
    times and timestamps are keys as their integer count of the unit
    (days, microseconds), as Arrow holds them: name them (``key_type=
    "DATE"``) to query such a column.
    """
    if isinstance(filter, (str, os.PathLike)):
        filter = BloomFilter.open(filter)
    elif not isinstance(filter, BloomFilter):
        raise TypeError(
            f"filter must be a BloomFilter or a filter file's path, got {type(filter).__name__}"
        )
    if key_type is None:
        key_type = _DEFAULT_TYPE.get(filter.key_kind)
        if key_type is None:
            raise ValueError(
                f"the filter's keys are {filter.key_kind}: pass key_type= (one of "
                f"{', '.join(KEY_TYPES)}) to say what the function takes"
            )
    upper = key_type.upper()
    if upper not in KEY_TYPES:
        raise ValueError(
            f"key_type must be one of {', '.join(KEY_TYPES)}, got {key_type!r}"
        )
    bf = filter

    def contains(keys):
        return bf.contains_many(keys, output="arrow")

    con.create_function(
        name,
        contains,
        [upper],
        "BOOLEAN",
        type="arrow",
        side_effects=False,
    )
