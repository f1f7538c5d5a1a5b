"""lesshash.duckdb.register: a filter as a DuckDB SQL function, checked
against exact answers (no false negatives, every answer as
contains_many's), for integer, text, binary and date columns, NULLs,
empty tables, a filter object and a mapped file, and its errors; each in
both forms (the native function loaded into DuckDB, and the Python
function), and the native function's own contract: every key type it is
overloaded for, several threads, the path read at bind time, files
replaced or removed between queries, and the extension file it loads."""

from __future__ import annotations

import datetime
import pathlib

import numpy as np
import pytest

import lesshash.duckdb
from lesshash import BloomFilter

duckdb = pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")


@pytest.fixture(params=["native", "python"])
def mode(request):
    return request.param


@pytest.fixture
def con(mode):
    """A connection on which ``register`` makes the function of `mode`: the
    native one where unsigned extensions are allowed, else Python's."""
    config = {"allow_unsigned_extensions": True} if mode == "native" else {}
    c = duckdb.connect(config=config)
    yield c
    c.close()


@pytest.fixture
def native():
    c = duckdb.connect(config={"allow_unsigned_extensions": True, "threads": 2})
    yield c
    c.close()


def users_filter():
    bf = BloomFilter(1000, 0.01)
    bf.add_many(np.arange(0, 2000, 2))
    return bf


def test_integer_keys_answer_as_contains_many(con, mode, tmp_path):
    bf = users_filter()
    ids = list(range(3000)) + [None, -5, 2**40]
    con.execute("CREATE TABLE events AS SELECT unnest(?::BIGINT[]) AS k", [ids]).fetchall()
    path = tmp_path / "users.lhbf"
    bf.save(path)
    for name, f in [("in_users", bf), ("in_users_file", str(path))]:
        assert lesshash.duckdb.register(con, name, f) == mode
        got = con.execute(f"SELECT k, {name}(k) FROM events ORDER BY rowid").fetchall()
        want = bf.contains_many(pa.array(ids, type=pa.int64()), output="arrow").to_pylist()
        assert [a for _, a in got] == want
        # No false negatives: every member is kept; a NULL key is never.
        kept = con.execute(f"SELECT count(*) FROM events WHERE {name}(k) AND k % 2 = 0 AND k < 2000").fetchall()[0][0]
        assert kept == 1000
        assert con.execute(f"SELECT count(*) FROM events WHERE k IS NULL AND ({name}(k) OR NOT {name}(k))").fetchall()[0][0] == 0
    # Narrower integer columns are widened by DuckDB, as every interface does.
    con.execute("CREATE TABLE small AS SELECT range::INTEGER AS k FROM range(100)").fetchall()
    got = [r[0] for r in con.execute("SELECT in_users(k) FROM small ORDER BY k").fetchall()]
    assert got == bf.contains_many(np.arange(100)).tolist()


def test_text_binary_and_date_keys(con):
    text = BloomFilter(100, 0.01)
    text.add_many(["alice", "bob"])
    lesshash.duckdb.register(con, "known", text)
    rows = con.execute(
        "SELECT known(x) FROM (VALUES ('alice'), ('carol'), (NULL), ('bob')) t(x)"
    ).fetchall()
    assert [r[0] for r in rows][:1] == [True] and rows[2][0] is None and rows[3][0] is True
    assert [r[0] for r in rows] == text.contains_many(pa.array(["alice", "carol", None, "bob"]), output="arrow").to_pylist()

    blobs = BloomFilter(100, 0.01)
    blobs.add_many([b"\x00\x01", b"zz"])
    lesshash.duckdb.register(con, "known_blob", blobs)
    got = con.execute("SELECT known_blob(x) FROM (VALUES ('\\x00\\x01'::BLOB), ('zz'::BLOB)) t(x)").fetchall()
    assert [r[0] for r in got] == [True, True]

    days = BloomFilter(100, 0.01)
    days.add_many(pa.array([datetime.date(2024, 1, 1), datetime.date(2024, 3, 1)]))
    lesshash.duckdb.register(con, "known_day", days, key_type="DATE")
    got = con.execute(
        "SELECT known_day(d) FROM (VALUES (DATE '2024-01-01'), (DATE '2024-03-01')) t(d)"
    ).fetchall()
    assert [r[0] for r in got] == [True, True]


def test_empty_table(con):
    lesshash.duckdb.register(con, "in_users", users_filter())
    con.execute("CREATE TABLE e (k BIGINT)").fetchall()
    assert con.execute("SELECT count(*) FROM e WHERE in_users(k)").fetchall()[0][0] == 0


def test_errors_name_the_parameter(con, mode, tmp_path):
    mixed = BloomFilter(100, 0.01)
    mixed.add_many([1, "a"])
    if mode == "python":
        with pytest.raises(ValueError, match="keys are mixed: pass key_type="):
            lesshash.duckdb.register(con, "f", mixed)
    else:
        # The native function takes each key as it comes: a mixed filter
        # answers integers and text.
        lesshash.duckdb.register(con, "f", mixed)
        assert con.execute("SELECT f(1), f('a')").fetchall() == [(True, True)]
    with pytest.raises(ValueError, match="key_type must be one of BIGINT.*got 'DOUBLE'"):
        lesshash.duckdb.register(con, "f", users_filter(), key_type="DOUBLE")
    with pytest.raises(TypeError, match="filter must be a BloomFilter or a filter file's path, got int"):
        lesshash.duckdb.register(con, "f", 5)
    with pytest.raises(FileNotFoundError):
        lesshash.duckdb.register(con, "f", str(tmp_path / "missing.lhbf"))
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        lesshash.duckdb.register(con, "", users_filter())
    # A text filter asked integers: the key kinds' error, through DuckDB.
    text = BloomFilter(100, 0.01)
    text.add("a")
    if mode == "python":
        lesshash.duckdb.register(con, "t", text, key_type="BIGINT")
        with pytest.raises(duckdb.Error, match="int64"):
            con.execute("SELECT t(1)").fetchall()
    else:
        # The macro's cast fixes the type, so DuckDB binds it at once: the
        # error comes from register, naming both kinds and the cast.
        with pytest.raises(duckdb.Error, match="built from text keys but these keys .type BIGINT. are int64"):
            lesshash.duckdb.register(con, "t", text, key_type="BIGINT")


# Every type the native function is overloaded for, with the Arrow type
# contains_many reads for the same column (what a filter built through
# PyArrow, pandas, Polars or the command line records).
NATIVE_TYPES = [
    ("TINYINT", pa.int8()),
    ("SMALLINT", pa.int16()),
    ("INTEGER", pa.int32()),
    ("BIGINT", pa.int64()),
    ("UTINYINT", pa.uint8()),
    ("USMALLINT", pa.uint16()),
    ("UINTEGER", pa.uint32()),
    ("UBIGINT", pa.uint64()),
    ("DATE", pa.date32()),
    ("TIME", pa.time64("us")),
    ("TIMESTAMP", pa.timestamp("us")),
    ("TIMESTAMP_S", pa.timestamp("s")),
    ("TIMESTAMP_MS", pa.timestamp("ms")),
    ("TIMESTAMP_NS", pa.timestamp("ns")),
    ("TIMESTAMPTZ", pa.timestamp("us", tz="UTC")),
    ("TIMESTAMPTZ_NS", pa.timestamp("ns", tz="UTC")),
    ("TIME_NS", pa.time64("ns")),
    ("VARCHAR", pa.string()),
    ("BLOB", pa.binary()),
]


def column(arrow_type, ints, rng):
    """`ints` (-50..99) as values of `arrow_type`, with 10% NULLs."""
    n = len(ints)
    if pa.types.is_string(arrow_type):
        values = [f"user-{i}" * (1 + i % 5) for i in ints]  # inline and not
    elif pa.types.is_binary(arrow_type):
        values = [bytes([i % 256]) * (1 + i % 20) for i in ints]
    else:
        width = pa.int32() if pa.types.is_date32(arrow_type) else pa.int64()
        # Nanoseconds a microsecond apart: the key is the microsecond.
        scale = 1000 if getattr(arrow_type, "unit", None) == "ns" else 1
        values = pa.array([int(i) * scale for i in ints], type=width).cast(arrow_type).to_pylist()
    nulls = rng.random(n) < 0.1
    return pa.array([None if z else v for v, z in zip(values, nulls)], type=arrow_type)


@pytest.mark.parametrize("sql_type,arrow_type", NATIVE_TYPES, ids=[t for t, _ in NATIVE_TYPES])
def test_native_answers_every_type_as_contains_many(native, sql_type, arrow_type):
    rng = np.random.default_rng(sum(map(ord, sql_type)))
    # Negative keys where the type has them: widening must sign-extend.
    signed = sql_type in ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "DATE", "TIMESTAMP",
                          "TIMESTAMPTZ")
    ints = rng.integers(-50 if signed else 0, 100, 5000)
    keys = column(arrow_type, ints, rng)
    bf = BloomFilter(30, 0.1)  # a high rate: false positives to compare too
    bf.add_many(keys.filter(pa.array(ints < 30)).drop_null())
    native.register("keys_arrow", pa.table({"k": keys}))
    native.execute(f"CREATE TABLE t AS SELECT k::{sql_type} AS k FROM keys_arrow").fetchall()
    assert lesshash.duckdb.register(native, "f", bf, native=True) == "native"
    got = [r[0] for r in native.execute("SELECT f(k) FROM t ORDER BY rowid").fetchall()]
    want = bf.contains_many(keys, output="arrow").to_pylist()
    assert got == want
    assert None in got and True in got and False in got


def test_native_threads_and_vectors_answer_as_contains_many(native, tmp_path):
    """Several DuckDB threads, many vectors (a partial last one), one filter
    file shared by all: the same answers as one contains_many."""
    rng = np.random.default_rng(11)
    n = 300_007
    keys = rng.integers(0, 2_000_000, n)
    bf = BloomFilter(200_000, 0.01)
    bf.add_many(np.arange(0, 2_000_000, 10))
    path = tmp_path / "users.lhbf"
    bf.save(path)
    native.register("ev", pa.table({"k": keys}))
    native.execute("CREATE TABLE events AS SELECT * FROM ev").fetchall()
    lesshash.duckdb.register(native, "in_users", path, native=True)
    got = np.array([r[0] for r in native.execute("SELECT in_users(k) FROM events ORDER BY rowid").fetchall()])
    assert (got == bf.contains_many(keys)).all()
    # The function directly, a path literal and a column of keys.
    direct = native.execute(
        f"SELECT count(*) FROM events WHERE lesshash_contains('{path}', k)"
    ).fetchall()[0][0]
    assert direct == int(bf.contains_many(keys).sum())
    # No false negatives: every member answers true.
    assert native.execute(
        "SELECT count(*) FROM events WHERE k % 10 = 0 AND NOT in_users(k)"
    ).fetchall()[0][0] == 0


def test_native_reads_the_path_at_bind_time(native, tmp_path):
    bf = users_filter()
    path = tmp_path / "users.lhbf"
    bf.save(path)
    native.execute("CREATE TABLE t AS SELECT range AS k, 'x' || range AS p FROM range(10)").fetchall()
    lesshash.duckdb.load(native)
    with pytest.raises(duckdb.Error, match="lesshash_contains: the filter path .* must be a constant"):
        native.execute("SELECT lesshash_contains(p, k) FROM t").fetchall()
    # A prepared statement's parameter and a constant expression are
    # constants; a float key has no overload (DuckDB lists them).
    assert native.execute("SELECT lesshash_contains(?, 2), lesshash_contains(?, 3)", [str(path)] * 2).fetchall() == [(True, False)]
    assert native.execute(f"SELECT lesshash_contains('{tmp_path}' || '/users.lhbf', 2)").fetchall() == [(True,)]
    with pytest.raises(duckdb.Error, match=r"lesshash_contains\(VARCHAR, BIGINT\)"):
        native.execute(f"SELECT lesshash_contains('{path}', 2.5)").fetchall()
    # A NULL path answers NULL, as SQL functions do.
    got = native.execute("SELECT lesshash_contains(NULL::VARCHAR, k) FROM t").fetchall()
    assert got == [(None,)] * 10
    missing = tmp_path / "missing.lhbf"
    with pytest.raises(duckdb.Error, match=f"lesshash_contains: {missing}"):
        native.execute(f"SELECT lesshash_contains('{missing}', k) FROM t").fetchall()
    corrupt = tmp_path / "corrupt.lhbf"
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    corrupt.write_bytes(bytes(raw))
    with pytest.raises(duckdb.Error, match=f"lesshash_contains: {corrupt}: .*checksum"):
        native.execute(f"SELECT lesshash_contains('{corrupt}', k) FROM t").fetchall()
    # A text filter asked integers: both kinds and the cast that fixes it,
    # before a row is read.
    text = BloomFilter(100, 0.01)
    text.add("a")
    tpath = tmp_path / "text.lhbf"
    text.save(tpath)
    with pytest.raises(duckdb.Error, match="built from text keys but these keys .type BIGINT. are int64.*CAST.key AS VARCHAR."):
        native.execute(f"SELECT lesshash_contains('{tpath}', k) FROM t").fetchall()
    # With key_type the macro casts: the text filter answers '0'.. as text.
    lesshash.duckdb.register(native, "known", tpath, key_type="VARCHAR", native=True)
    assert native.execute("SELECT known('a'), known('b')").fetchall() == [(True, False)]


def test_native_follows_a_file_replaced_or_removed_between_queries(native, tmp_path):
    path = tmp_path / "users.lhbf"
    first = BloomFilter(100, 0.001)
    first.add_many([1, 2, 3])
    first.save(path)
    lesshash.duckdb.register(native, "f", path, native=True)
    query = "SELECT f(1), f(2), f(7), f(8)"
    assert native.execute(query).fetchall() == [(True, True, False, False)]
    second = BloomFilter(100, 0.001)
    second.add_many([7, 8])
    second.save(path)  # atomic: a new file renamed over the old
    assert native.execute(query).fetchall() == [(False, False, True, True)]
    path.unlink()
    with pytest.raises(duckdb.Error, match="lesshash_contains: .*users.lhbf"):
        native.execute(query).fetchall()


def test_a_filter_object_is_registered_as_it_was(native):
    bf = BloomFilter(100, 0.001)
    bf.add(1)
    lesshash.duckdb.register(native, "f", bf)
    bf.add(2)  # after registering: not seen by the native function
    assert native.execute("SELECT f(1), f(2)").fetchall() == [(True, False)]
    snapshots = list(pathlib.Path(lesshash.duckdb._snapshot_dir).iterdir())
    lesshash.duckdb.register(native, "f", bf)  # again: now it is
    assert native.execute("SELECT f(1), f(2)").fetchall() == [(True, True)]
    # The first snapshot, no longer named, is gone; only the new one stays.
    after = list(pathlib.Path(lesshash.duckdb._snapshot_dir).iterdir())
    assert len(set(snapshots) - set(after)) == 1 and len(set(after) - set(snapshots)) == 1


def test_a_connection_without_unsigned_extensions(tmp_path):
    con = duckdb.connect()
    try:
        with pytest.raises(RuntimeError, match="did not load the native function.*allow_unsigned_extensions"):
            lesshash.duckdb.register(con, "f", users_filter(), native=True)
        with pytest.raises(RuntimeError, match="allow_unsigned_extensions"):
            lesshash.duckdb.load(con)
        # The default falls back to the Python function, which answers.
        assert lesshash.duckdb.register(con, "f", users_filter()) == "python"
        assert con.execute("SELECT f(2), f(3)").fetchall() == [(True, False)]
    finally:
        con.close()


def test_the_extension_file_is_written_once_with_duckdbs_footer(tmp_path, monkeypatch):
    monkeypatch.setenv("LESSHASH_CACHE_DIR", str(tmp_path))
    platform = duckdb.connect().execute("PRAGMA platform").fetchone()[0]
    path = lesshash.duckdb._extension_file(platform)
    assert path.name == "lesshash.duckdb_extension" and tmp_path in path.parents
    stamp = path.stat().st_mtime_ns
    assert lesshash.duckdb._extension_file(platform) == path
    assert path.stat().st_mtime_ns == stamp
    tail = path.read_bytes()[-512:]
    fields = [tail[i * 32 : (i + 1) * 32].rstrip(b"\0").decode() for i in range(8)]
    assert fields[3:] == ["C_STRUCT", lesshash.__version__, lesshash._lesshash.DUCKDB_C_API_VERSION, platform, "4"]
    assert tail[256:] == b"\0" * 256
    # No temporary file left beside it.
    assert [p.name for p in path.parent.iterdir()] == ["lesshash.duckdb_extension"]
    con = duckdb.connect(config={"allow_unsigned_extensions": True})
    lesshash.duckdb.load(con)
    lesshash.duckdb.load(con)  # again: a no-op
    con.close()
