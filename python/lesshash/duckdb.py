"""DuckDB: a filter as a SQL function.

    import duckdb
    from lesshash import BloomFilter
    import lesshash.duckdb

    con = duckdb.connect(config={"allow_unsigned_extensions": True})
    lesshash.duckdb.register(con, "in_users", "users.lhbf")
    con.sql("SELECT count(*) FROM 'events/*.parquet' WHERE in_users(user_id)")

``register`` adds ``name(key) -> BOOLEAN`` in one of two ways, and returns
which:

* ``"native"``: DuckDB's own scalar function ``lesshash_contains(path,
  key)``, from this package's compiled module loaded into DuckDB as an
  extension (``load``), and ``name`` a macro over it. It runs on DuckDB's
  threads over each vector in place, with no Python: the filter's own
  probe is the cost. DuckDB loads only signed extensions unless the
  database was opened with ``allow_unsigned_extensions`` (a setting that
  cannot change once it is open), which this needs.
* ``"python"``: a vectorized Python function (DuckDB's Arrow UDFs), for a
  connection that cannot load the extension: DuckDB hands it 2,048 rows at
  a time as an Arrow array and it answers with ``contains_many(...,
  output="arrow")``; a Python call under the GIL per vector, several times
  the filter's own work.

Both encode keys as every other interface does (docs/guide.md, "Keys: one
encoding everywhere"), and a NULL key answers NULL (so ``WHERE
in_users(k)`` and ``WHERE NOT in_users(k)`` both leave it out, as ``IN``
does).
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
import uuid
from pathlib import Path
from typing import Any, Optional, Union

from . import _lesshash
from ._lesshash import BloomFilter

__all__ = ["register", "load", "KEY_TYPES"]

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
    "TIMESTAMPTZ": "int64",
    "VARCHAR": "text",
    "BLOB": "bytes",
}

# The parameter type for a filter's key kind, when none is given.
_DEFAULT_TYPE = {"int64": "BIGINT", "text": "VARCHAR", "bytes": "BLOB"}

# The extension's name: DuckDB takes it from the file's name and calls
# `lesshash_init_c_api` (python/src/duckdb.rs).
_EXTENSION_FILE = "lesshash.duckdb_extension"


def register(
    con: Any,
    name: str,
    filter: Union[BloomFilter, str, "os.PathLike[str]"],
    *,
    key_type: Optional[str] = None,
    native: Optional[bool] = None,
) -> str:
    """Adds ``name(key) -> BOOLEAN`` to the DuckDB connection `con`: whether
    `key` may be in `filter` (``False`` certain, ``True`` wrong with the
    filter's false-positive rate, NULL for a NULL key). Returns how:
    ``"native"`` or ``"python"`` (the module's docstring).

    `filter`: a ``BloomFilter``, or the path of a filter file. `native`:
    ``True`` to require DuckDB's native function (an error saying why if the
    connection cannot load it), ``False`` for the Python function, ``None``
    (the default) for the native one where the connection can load it.

    The native function reads the filter from a file, mapped once per file
    version and shared by every query and thread (its checksum verified
    once; a file replaced between queries is read again): a path is used
    as it is, a filter opened from a file (``BloomFilter.open``) by its
    path, and any other ``BloomFilter`` is saved to a private temporary
    file (removed at exit) as it is now: register it again after changing
    it. The Python function answers from the object itself.

    `key_type`: one of ``KEY_TYPES``. The native function takes every one
    of them as it comes (integers widened, dates, times and timestamps as
    their integer counts, as Arrow holds them) and checks it against the
    filter's recorded key kind when the query is planned; `key_type` casts
    the argument to that type first. The Python function's parameter is of
    that type; by default the type of the filter's key kind (``BIGINT`` for
    integers, which DuckDB widens every integer column to, ``VARCHAR`` for
    text, ``BLOB`` for bytes), and a filter of mixed or unrecorded keys
    needs it (so do dates, times and timestamps: ``key_type="DATE"``).
    """
    path: Optional[str] = None
    if isinstance(filter, (str, os.PathLike)):
        path = os.path.abspath(os.fspath(filter))
        # Opened here too: a missing or corrupt file fails at register, not
        # at the first query.
        filter = BloomFilter.open(path)
    elif not isinstance(filter, BloomFilter):
        raise TypeError(
            f"filter must be a BloomFilter or a filter file's path, got {type(filter).__name__}"
        )
    upper = None if key_type is None else key_type.upper()
    if upper is not None and upper not in KEY_TYPES:
        raise ValueError(
            f"key_type must be one of {', '.join(KEY_TYPES)}, got {key_type!r}"
        )
    if not isinstance(name, str) or not name:
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    if native is not False:
        try:
            load(con)
        except RuntimeError:
            if native:
                raise
        else:
            snapshot = None
            if path is None:
                if filter.path is not None:
                    path = os.fspath(filter.path)
                else:
                    path = snapshot = _snapshot(filter)
            key = "key" if upper is None else f"CAST(key AS {upper})"
            con.execute(
                f"CREATE OR REPLACE TEMP MACRO {_identifier(name)}(key) AS "
                f"lesshash_contains({_literal(path)}, {key})"
            )
            # The snapshot this name held before is no longer named: removed
            # (a query running on it keeps its map until it ends).
            old = _named_snapshots.pop((id(con), name), None)
            if snapshot is not None:
                _named_snapshots[(id(con), name)] = snapshot
            if old is not None and old != snapshot:
                try:
                    os.unlink(old)
                except OSError:
                    pass
            return "native"
    if upper is None:
        upper = _DEFAULT_TYPE.get(filter.key_kind)
        if upper is None:
            raise ValueError(
                f"the filter's keys are {filter.key_kind}: pass key_type= (one of "
                f"{', '.join(KEY_TYPES)}) to say what the function takes"
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
    return "python"


def load(con: Any) -> None:
    """Loads the native function ``lesshash_contains(path, key) -> BOOLEAN``
    into the database of `con` (once per database; again is a no-op).

    Raises ``RuntimeError`` with DuckDB's reason when it cannot: a database
    opened without ``allow_unsigned_extensions`` (open it with
    ``duckdb.connect(..., config={"allow_unsigned_extensions": True})``),
    or a DuckDB older than the C API version the function needs
    (``_lesshash.DUCKDB_C_API_VERSION``).
    """
    import duckdb

    try:
        platform = con.execute("PRAGMA platform").fetchone()[0]
        con.execute(f"LOAD {_literal(os.fspath(_extension_file(platform)))}")
    except duckdb.Error as e:
        hint = ""
        if "unsigned" in str(e):
            hint = (
                ' (open the database with duckdb.connect(..., config={"allow_unsigned_extensions": True}):'
                " DuckDB loads unsigned extensions only where allowed when the database opens)"
            )
        raise RuntimeError(
            f"lesshash: DuckDB did not load the native function: {e}{hint}"
        ) from e


_lock = threading.Lock()


def _cache_dir() -> Path:
    """Where the extension's copies live: $LESSHASH_CACHE_DIR, else the
    user's cache directory, else the temporary directory."""
    explicit = os.environ.get("LESSHASH_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "lesshash"


def _extension_file(platform: str) -> Path:
    """This package's compiled module as a DuckDB extension for `platform`:
    a copy named ``lesshash.duckdb_extension`` with DuckDB's metadata
    footer appended, made once per build of the module and kept in a
    directory named after it (written to a temporary name and renamed, so
    a reader never sees half a file)."""
    module = Path(_lesshash.__file__)
    st = module.stat()
    version = _lesshash.DUCKDB_C_API_VERSION
    ident = f"{module}|{st.st_size}|{st.st_mtime_ns}|{st.st_ino}|{platform}|{version}"
    digest = hashlib.sha256(ident.encode()).hexdigest()[:20]
    with _lock:
        user = getattr(os, "getuid", lambda: "user")()
        for root in (_cache_dir(), Path(tempfile.gettempdir()) / f"lesshash-{user}"):
            target = root / "duckdb" / digest / _EXTENSION_FILE
            if target.is_file():
                return target
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".lesshash-", suffix=".tmp")
                try:
                    with os.fdopen(fd, "wb") as out, open(module, "rb") as src:
                        shutil.copyfileobj(src, out)
                        out.write(_footer(platform, version))
                        out.flush()
                        os.fsync(out.fileno())
                    os.replace(tmp, target)
                except BaseException:
                    os.unlink(tmp)
                    raise
                return target
            except OSError as e:
                error = e
        raise RuntimeError(f"lesshash: could not write the DuckDB extension: {error}")


def _footer(platform: str, c_api_version: str) -> bytes:
    """DuckDB's extension metadata: a marker, then eight 32-byte fields
    that DuckDB reads from the end (magic "4", platform, C API version,
    extension version, ABI type, three unused), then a 256-byte signature
    (empty: DuckDB then needs ``allow_unsigned_extensions``)."""

    def field(text: str) -> bytes:
        raw = text.encode()
        if len(raw) > 32:
            raise ValueError(f"DuckDB metadata field too long: {text!r}")
        return raw + b"\0" * (32 - len(raw))

    from . import __version__

    fields = [field("")] * 3 + [
        field("C_STRUCT"),
        field(__version__),
        field(c_api_version),
        field(platform),
        field("4"),
    ]
    return b"\x00\x93\x04\x10duckdb_signature\x80\x04" + b"".join(fields) + b"\0" * 256


_snapshot_dir: Optional[str] = None
# (connection, name) -> the snapshot file its macro reads.
_named_snapshots: dict = {}


def _snapshot(bf: BloomFilter) -> str:
    """Saves `bf` as it is now to a private temporary file for the native
    function; the directory is removed when the process exits."""
    global _snapshot_dir
    with _lock:
        if _snapshot_dir is None:
            _snapshot_dir = tempfile.mkdtemp(prefix="lesshash-duckdb-")
            atexit.register(shutil.rmtree, _snapshot_dir, ignore_errors=True)
        path = os.path.join(_snapshot_dir, f"{uuid.uuid4().hex}.lhbf")
    bf.save(path)
    return path


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
