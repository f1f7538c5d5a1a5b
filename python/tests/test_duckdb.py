"""lesshash.duckdb.register: a filter as a DuckDB SQL function, checked
against exact answers (no false negatives, every answer as
contains_many's), for integer, text, binary and date columns, NULLs,
empty tables, a filter object and a mapped file, and its errors."""

from __future__ import annotations

import datetime

import numpy as np
import pytest

import lesshash.duckdb
from lesshash import BloomFilter

duckdb = pytest.importorskip("duckdb")
pa = pytest.importorskip("pyarrow")


@pytest.fixture
def con():
    c = duckdb.connect()
    yield c
    c.close()


def users_filter():
    bf = BloomFilter(1000, 0.01)
    bf.add_many(np.arange(0, 2000, 2))
    return bf


def test_integer_keys_answer_as_contains_many(con, tmp_path):
    bf = users_filter()
    ids = list(range(3000)) + [None, -5, 2**40]
    con.execute("CREATE TABLE events AS SELECT unnest(?::BIGINT[]) AS k", [ids]).fetchall()
    path = tmp_path / "users.lhbf"
    bf.save(path)
    for name, f in [("in_users", bf), ("in_users_file", str(path))]:
        lesshash.duckdb.register(con, name, f)
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


def test_errors_name_the_parameter(con, tmp_path):
    mixed = BloomFilter(100, 0.01)
    mixed.add_many([1, "a"])
    with pytest.raises(ValueError, match="keys are mixed: pass key_type="):
        lesshash.duckdb.register(con, "f", mixed)
    with pytest.raises(ValueError, match="key_type must be one of BIGINT.*got 'DOUBLE'"):
        lesshash.duckdb.register(con, "f", users_filter(), key_type="DOUBLE")
    with pytest.raises(TypeError, match="filter must be a BloomFilter or a filter file's path, got int"):
        lesshash.duckdb.register(con, "f", 5)
    with pytest.raises(FileNotFoundError):
        lesshash.duckdb.register(con, "f", str(tmp_path / "missing.lhbf"))
    # A text filter asked integers: the key kinds' error, through DuckDB.
    text = BloomFilter(100, 0.01)
    text.add("a")
    lesshash.duckdb.register(con, "t", text, key_type="BIGINT")
    with pytest.raises(duckdb.Error, match="int64"):
        con.execute("SELECT t(1)").fetchall()
