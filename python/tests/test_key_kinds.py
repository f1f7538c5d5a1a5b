"""The key kind a filter records (header byte 14) and the check of every
query against it; and the cross-interface encoding test: one filter file,
the same keys through every interface (Python ints, NumPy, PyArrow,
pandas, Polars where installed, the command line) answer the same.

The encoding (docs/guide.md's table, lesshash::arrow's module docs): every
integer and temporal type is its value widened to 64 bits and hashed as 8
little-endian bytes (kind ``int64``); text its UTF-8 (``text``); binaries
their bytes (``bytes``); text and bytes with the same bytes are one key,
an integer and its decimal text are not, so a query of the other family
raises ``TypeError`` unless the filter is set to answer every kind
(``bf.key_kind = "mixed"``)."""

from __future__ import annotations

import pickle
import subprocess

import numpy as np
import pytest

# Plain imports: both are in the `test` extra (a missing one fails the suite).
import pandas as pd
import pyarrow as pa

import lesshash.dask as ld
from lesshash import BloomFilter

# The file format's key kind ids (header byte 14).
KIND_IDS = {"unrecorded": 0, "int64": 1, "text": 2, "bytes": 3, "mixed": 4}


def kind_byte(bf: BloomFilter) -> int:
    return bf.to_bytes()[14]


def fresh() -> BloomFilter:
    return BloomFilter(10_000, 1e-4, seed=11)


# ------------------------------------------------------- what is recorded --


def _np_ints(dtype):
    return lambda bf: bf.add_many(np.arange(5, dtype=dtype))


INSERTS = {
    # name: (insert, kind the fresh filter then records)
    "nothing": (lambda bf: None, "unrecorded"),
    "empty list": (lambda bf: bf.add_many([]), "unrecorded"),
    "empty int64 array": (lambda bf: bf.add_many(np.array([], dtype=np.int64)), "unrecorded"),
    "add int": (lambda bf: bf.add(7), "int64"),
    "add bool": (lambda bf: bf.add(True), "int64"),
    "add numpy scalar": (lambda bf: bf.add(np.uint16(7)), "int64"),
    "add str": (lambda bf: bf.add("7"), "text"),
    "add bytes": (lambda bf: bf.add(b"7"), "bytes"),
    "add bytearray": (lambda bf: bf.add(bytearray(b"7")), "bytes"),
    "add memoryview": (lambda bf: bf.add(memoryview(b"7")), "bytes"),
    "list of int": (lambda bf: bf.add_many([1, 2, 3]), "int64"),
    "tuple of str": (lambda bf: bf.add_many(("a", "b")), "text"),
    "generator of bytes": (lambda bf: bf.add_many(b for b in [b"a", b"b"]), "bytes"),
    "update set of str": (lambda bf: bf.update({"a", "b"}), "text"),
    "list of str and bytes": (lambda bf: bf.add_many(["a", b"b"]), "bytes"),
    "list of int and str": (lambda bf: bf.add_many([1, "a"]), "mixed"),
    "list of str and int": (lambda bf: bf.add_many(["a", 1]), "mixed"),
    "numpy int8": (_np_ints(np.int8), "int64"),
    "numpy uint64": (_np_ints(np.uint64), "int64"),
    "numpy bool": (lambda bf: bf.add_many(np.array([True, False])), "int64"),
    "numpy datetime64": (lambda bf: bf.add_many(np.array(["2024-01-01"], "M8[D]")), "int64"),
    "numpy timedelta64": (lambda bf: bf.add_many(np.array([5], "m8[s]")), "int64"),
    "numpy U": (lambda bf: bf.add_many(np.array(["a", "bc"])), "text"),
    "numpy U0": (lambda bf: bf.add_many(np.array(["", ""])), "text"),
    "numpy S": (lambda bf: bf.add_many(np.array([b"a", b"bc"])), "bytes"),
    "numpy object str": (lambda bf: bf.add_many(np.array(["a", "b"], dtype=object)), "text"),
    "numpy object mixed": (lambda bf: bf.add_many(np.array([1, "b"], dtype=object)), "mixed"),
    "arrow int16": (lambda bf: bf.add_many(pa.array([1, 2], pa.int16())), "int64"),
    "arrow uint32": (lambda bf: bf.add_many(pa.array([1, 2], pa.uint32())), "int64"),
    "arrow date32": (lambda bf: bf.add_many(pa.array([1, 2], pa.int32()).view(pa.date32())), "int64"),
    "arrow timestamp": (
        lambda bf: bf.add_many(pa.array([1, 2], pa.int64()).view(pa.timestamp("us", tz="UTC"))),
        "int64",
    ),
    "arrow string": (lambda bf: bf.add_many(pa.array(["a"], pa.string())), "text"),
    "arrow large_string": (lambda bf: bf.add_many(pa.array(["a"], pa.large_string())), "text"),
    "arrow string_view": (lambda bf: bf.add_many(pa.array(["a"], pa.string_view())), "text"),
    "arrow binary": (lambda bf: bf.add_many(pa.array([b"a"], pa.binary())), "bytes"),
    "arrow fixed_size_binary": (
        lambda bf: bf.add_many(pa.array([b"ab"], pa.binary(2))),
        "bytes",
    ),
    "arrow dictionary of str": (
        lambda bf: bf.add_many(pa.array(["a", "b", "a"]).dictionary_encode()),
        "text",
    ),
    "arrow chunked int64": (
        lambda bf: bf.add_many(pa.chunked_array([[1, 2], [3]], pa.int64())),
        "int64",
    ),
    "pandas int64": (lambda bf: bf.add_many(pd.Series([1, 2], dtype="int64")), "int64"),
    "pandas Int64": (lambda bf: bf.add_many(pd.Series([1, 2], dtype="Int64")), "int64"),
    "pandas str": (lambda bf: bf.add_many(pd.Series(["a", "b"])), "text"),
    "pandas object str": (lambda bf: bf.add_many(pd.Series(["a", "b"], dtype=object)), "text"),
    "pandas categorical str": (
        lambda bf: bf.add_many(pd.Series(["a", "b"], dtype="category")),
        "text",
    ),
    "int, then str": (lambda bf: (bf.add(1), bf.add("a")), "mixed"),
    "str, then bytes": (lambda bf: (bf.add("a"), bf.add_many([b"b"])), "bytes"),
    "ints, then an empty str array": (
        lambda bf: (bf.add_many([1]), bf.add_many(np.array([], dtype="U3"))),
        "int64",
    ),
}


@pytest.mark.parametrize("name", list(INSERTS))
def test_every_insert_records_its_keys_kind(name, tmp_path):
    insert, kind = INSERTS[name]
    bf = fresh()
    insert(bf)
    assert bf.key_kind == kind
    # Kept in the file (byte 14), read back by load, open and from_bytes.
    assert kind_byte(bf) == KIND_IDS[kind]
    path = tmp_path / "f.lhbf"
    bf.save(path)
    assert path.read_bytes()[14] == KIND_IDS[kind]
    assert BloomFilter.load(path).key_kind == kind
    assert BloomFilter.open(path).key_kind == kind
    assert BloomFilter.from_bytes(bf.to_bytes()).key_kind == kind
    assert pickle.loads(pickle.dumps(bf)).key_kind == kind
    assert bf.copy().key_kind == kind
    assert f"key_kind='{kind}'" in repr(bf)


def test_a_file_written_from_python_ints_records_int64():
    """The golden-file check of the format's byte: a filter of Python ints
    is a v1 file whose byte 14 is 1 (int64); of strs 2, of bytes 3, of
    both families 4; a fresh one 0, as every file written before kinds."""
    bf = fresh()
    bf.add_many([1, 2, 3])
    data = bf.to_bytes()
    assert data[:8] == b"\x89LHBF\r\n\x1a" and data[8:10] == b"\x01\x00"
    assert data[14] == 1 and data[13] == data[15] == 0
    for keys, kind in [(["a"], 2), ([b"a"], 3), ([1, "a"], 4), ([], 0)]:
        f = fresh()
        f.add_many(keys)
        assert kind_byte(f) == kind


@pytest.mark.parametrize(
    "left, right, union",
    [
        ("int64", "int64", "int64"),
        ("int64", "text", "mixed"),
        ("text", "bytes", "bytes"),
        ("unrecorded", "int64", "int64"),
        ("unrecorded", "text", "text"),
        ("bytes", "mixed", "mixed"),
    ],
)
def test_unions_combine_the_kinds(left, right, union):
    keys = {"unrecorded": [], "int64": [1], "text": ["a"], "bytes": [b"a"], "mixed": [1, "a"]}
    a, b = fresh(), fresh()
    a.add_many(keys[left])
    b.add_many(keys[right])
    assert (a | b).key_kind == (b | a).key_kind == a.union(b).key_kind == union
    a |= b
    assert a.key_kind == union


def test_dask_build_records_the_kind():
    import dask.dataframe as dd

    frame = pd.DataFrame({"i": np.arange(1000, dtype=np.int64), "s": [f"k{i}" for i in range(1000)]})
    df = dd.from_pandas(frame, npartitions=4)
    assert ld.build(df["i"], 1000, 0.01).key_kind == "int64"
    assert ld.build(df["s"], 1000, 0.01).key_kind == "text"


# --------------------------------------------------------- queries check --


def int_filter() -> BloomFilter:
    bf = fresh()
    bf.add_many(range(100))
    return bf


def text_filter() -> BloomFilter:
    bf = fresh()
    bf.add_many([str(i) for i in range(100)])
    return bf


TEXT_QUERIES = {
    "in str": lambda bf: "7" in bf,
    "in bytes": lambda bf: b"7" in bf,
    "list of str": lambda bf: bf.contains_many(["7", "8"]),
    "tuple of bytes": lambda bf: bf.contains_many((b"7",)),
    "generator of str": lambda bf: bf.contains_many(s for s in ["7"]),
    "numpy U": lambda bf: bf.contains_many(np.array(["7"])),
    "numpy S": lambda bf: bf.contains_many(np.array([b"7"])),
    "arrow string": lambda bf: bf.contains_many(pa.array(["7"])),
    "arrow string_view": lambda bf: bf.contains_many(pa.array(["7"], pa.string_view())),
    "arrow binary": lambda bf: bf.contains_many(pa.array([b"7"])),
    "pandas str": lambda bf: bf.contains_many(pd.Series(["7"])),
}

INT_QUERIES = {
    "in int": lambda bf: 7 in bf,
    "in numpy scalar": lambda bf: np.int32(7) in bf,
    "list of int": lambda bf: bf.contains_many([7, 8]),
    "numpy int64": lambda bf: bf.contains_many(np.array([7])),
    "numpy uint8": lambda bf: bf.contains_many(np.array([7], dtype=np.uint8)),
    "arrow int32": lambda bf: bf.contains_many(pa.array([7], pa.int32())),
    "arrow date32": lambda bf: bf.contains_many(pa.array([7], pa.int32()).view(pa.date32())),
    "pandas int64": lambda bf: bf.contains_many(pd.Series([7])),
}


@pytest.mark.parametrize("name", list(TEXT_QUERIES))
def test_text_queries_of_an_int_filter_raise_naming_both_kinds(name, tmp_path):
    for bf in _owned_and_mapped(int_filter(), tmp_path):
        with pytest.raises(TypeError) as err:
            TEXT_QUERIES[name](bf)
        message = str(err.value)
        assert "int64" in message and ("text" in message or "bytes" in message)
        assert 'bf.key_kind = "mixed"' in message and "astype('int64')" in message
        # Answered once the filter is set to answer every kind.
        bf.key_kind = "mixed"
        TEXT_QUERIES[name](bf)


@pytest.mark.parametrize("name", list(INT_QUERIES))
def test_int_queries_of_a_text_filter_raise_naming_both_kinds(name, tmp_path):
    for bf in _owned_and_mapped(text_filter(), tmp_path):
        with pytest.raises(TypeError) as err:
            INT_QUERIES[name](bf)
        message = str(err.value)
        assert "text" in message and "int64" in message and 'bf.key_kind = "mixed"' in message
        bf.key_kind = "mixed"
        INT_QUERIES[name](bf)


def _owned_and_mapped(bf: BloomFilter, tmp_path):
    path = tmp_path / "f.lhbf"
    bf.save(path)
    return [bf, BloomFilter.load(path), BloomFilter.open(path)]


def test_compatible_queries_answer():
    """Text and bytes answer each other (a str is its UTF-8 bytes);
    unrecorded and mixed filters answer every kind; a batch of ints and
    strs is mixed, answered by every filter (the strs are certainly not
    in an int64 filter), however many 65,536-key chunks it spans."""
    tf = text_filter()
    assert "7" in tf and b"7" in tf and tf.contains_many([b"7", "8", "x"]).tolist() == [1, 1, 0]
    bf = fresh()
    bf.add_many([b"7"])  # bytes: text queries answer
    assert "7" in bf and bf.contains_many(pa.array(["7"])).tolist() == [True]
    unrecorded = fresh()
    assert 7 not in unrecorded and "7" not in unrecorded
    mixed = fresh()
    mixed.add_many([7, "8"])
    assert 7 in mixed and "8" in mixed and "7" not in mixed
    assert mixed.contains_many(np.array([7])).tolist() == [True]
    assert mixed.contains_many(pa.array(["8"])).tolist() == [True]
    inf = int_filter()
    assert inf.contains_many([7, "7"]).tolist() == [True, False]
    # The whole list's kind, not its first chunk's: 65,536 ints then a str.
    many = list(range(65_536)) + ["7"]
    got = inf.contains_many(many)
    assert got[:100].all() and not got[-1]
    # ... and a list all str across chunks is refused.
    with pytest.raises(TypeError, match="int64"):
        inf.contains_many([str(i) for i in range(70_000)])
    with pytest.raises(TypeError, match="int64"):
        inf.contains_many(str(i) for i in range(70_000))


def test_empty_batches_query_every_filter():
    for bf in (int_filter(), text_filter()):
        for empty in ([], np.array([], dtype=np.int64), np.array([], dtype="U1"),
                      pa.array([], pa.string()), pa.array([], pa.int64())):
            assert bf.contains_many(empty).shape == (0,)


def test_an_int_7_and_a_str_7_are_different_keys():
    bf = BloomFilter(1000, 1e-6)
    bf.add(7)
    with pytest.raises(TypeError, match='integer 7 and the text "7" are different keys'):
        "7" in bf  # noqa: B015
    bf.key_kind = "mixed"
    assert 7 in bf and "7" not in bf and b"7" not in bf
    assert 7 in bf and np.int8(7) in bf
    bf = BloomFilter(1000, 1e-6)
    bf.add("7")
    with pytest.raises(TypeError, match="text"):
        7 in bf  # noqa: B015
    bf.key_kind = "mixed"
    assert "7" in bf and 7 not in bf


def test_the_key_kind_setter():
    bf = int_filter()
    for kind in KIND_IDS:
        bf.key_kind = kind
        assert bf.key_kind == kind and kind_byte(bf) == KIND_IDS[kind]
    with pytest.raises(ValueError, match="'mixed'"):
        bf.key_kind = "float"
    with pytest.raises(TypeError, match="must be a str"):
        bf.key_kind = 4
    with pytest.raises(AttributeError):
        del bf.key_kind
    assert bf.key_kind == "mixed"  # the last kind set
    # The setter changes the recorded kind, not the bits.
    a, b = int_filter(), int_filter()
    b.key_kind = "mixed"
    assert a == b and a.to_bytes()[64:-8] == b.to_bytes()[64:-8]


def test_a_maps_key_kind_is_its_own_and_travels_with_it(tmp_path):
    bf = int_filter()
    path = tmp_path / "ints.lhbf"
    bf.save(path)
    file = path.read_bytes()
    m = BloomFilter.open(path)
    assert m.key_kind == "int64"
    # Unset, a map pickles as before: its path and verify flag.
    assert len(m.__reduce__()[1]) == 2
    m.key_kind = "mixed"
    assert "7" not in m and 7 in m
    assert path.read_bytes() == file  # the file is not changed
    with pytest.raises(TypeError, match="read-only"):
        m.add(1)
    # Everything made from the map is the filter as the map answers.
    data = m.to_bytes()
    assert data[14] == 4 and data[64:-8] == file[64:-8]
    again = BloomFilter.from_bytes(data)  # checksums valid
    assert again.key_kind == "mixed" and again == bf
    assert m.copy().key_kind == "mixed"
    assert (m | bf).key_kind == "mixed"
    assert m._digest() == again._digest() != bf._digest()
    header, payload = m._frames()
    assert BloomFilter._from_frames(header, payload).key_kind == "mixed"
    out = tmp_path / "out.lhbf"
    m.save(out)
    assert out.read_bytes() == data
    m.save(path)  # over its own file: written from a copy, the map unchanged
    assert path.read_bytes() == data and "7" not in m
    unpickled = pickle.loads(pickle.dumps(m))
    assert unpickled.read_only and unpickled.key_kind == "mixed"
    # Back to the file's kind: pickles as the path alone again.
    m2 = BloomFilter.open(out)
    m2.key_kind = "int64"
    assert len(m2.__reduce__()[1]) == 3
    # A map shipped to Dask workers by path carries its key kind.
    ref = ld._filter_arg(m, False)
    assert isinstance(ref, ld._FilterFile) and ref.key_kind == "mixed"
    mapped = ld._mapped(pickle.loads(pickle.dumps(ref)))
    assert mapped.key_kind == "mixed" and "7" not in mapped


def test_files_written_before_kinds_answer_every_kind(repo):
    """The Rust crate's golden files (tests/data) record no kind (byte 14
    is 0): their str queries answer as before, and ints are accepted."""
    for path in sorted((repo / "tests" / "data").glob("*.bin")):
        bf = BloomFilter.load(path)
        assert bf.key_kind == "unrecorded" and path.read_bytes()[14] == 0
        bf.contains_many(["key-0", 1, b"x"])
        assert BloomFilter.open(path).key_kind == "unrecorded"


# ------------------------------------------- the cross-interface encoding --

# Members across every width's range: the narrow types' bounds, both 32-bit
# bounds, beyond 32 bits, and both 64-bit ranges (2**64 - 1 is -1's bytes).
INT_MEMBERS = (
    list(range(-128, 128, 3))
    + [200, 255, 1000, 32_767, -32_768, 65_535, 2**31 - 1, -(2**31), 2**32 - 1]
    + [2**32 + 5, 10**12, 2**63 - 1, -(2**63), 2**63 + 9]
)
# Probes: the members and numbers around them (at 1e-4, about none of the
# non-members answer yes; the comparison is exact either way).
INT_PROBES = sorted(
    v
    for v in set(INT_MEMBERS) | set(range(-300, 300)) | {v + d for v in INT_MEMBERS for d in (-1, 1)}
    if -(2**63) <= v < 2**64
)

NUMPY_INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def in_range(dtype, values):
    info = np.iinfo(dtype)
    return [v for v in values if info.min <= v <= info.max]


def arrow_int_arrays():
    """Every Arrow integer type, and the temporal types whose key is their
    integer (microseconds; the other units and dates:
    test_temporal_keys.py): name -> (array, its ints)."""
    out = {}
    for t, np_t in [(pa.int8(), np.int8), (pa.int16(), np.int16), (pa.int32(), np.int32),
                    (pa.int64(), np.int64), (pa.uint8(), np.uint8), (pa.uint16(), np.uint16),
                    (pa.uint32(), np.uint32), (pa.uint64(), np.uint64)]:
        vals = in_range(np_t, INT_PROBES)
        out[str(t)] = (pa.array(vals, t), vals)
    i32 = in_range(np.int32, INT_PROBES)
    i64 = in_range(np.int64, INT_PROBES)
    as32 = pa.array(i32, pa.int32())
    as64 = pa.array(i64, pa.int64())
    for t in [pa.time64("us"), pa.timestamp("us"), pa.timestamp("us", tz="Europe/Paris"),
              pa.duration("us")]:
        out[str(t)] = (as64.view(t), i64)
    out["dictionary<int64>"] = (as64.dictionary_encode(), i64)
    out["chunked int32"] = (pa.chunked_array([as32.slice(0, 10), as32.slice(10)]), i32)
    i16 = in_range(np.int16, INT_PROBES)
    at = i16.index(-50)  # a slice with members in it
    out["sliced int16"] = (pa.array(i16, pa.int16()).slice(at, 40), i16[at : at + 40])
    return out


@pytest.fixture(scope="module")
def int_file(tmp_path_factory):
    """One filter file, built in Python from ints (one at a time, a list,
    an int64 array, a uint64 array: every int path)."""
    bf = BloomFilter(len(INT_MEMBERS), 1e-4)
    small = [v for v in INT_MEMBERS if -(2**63) <= v < 2**63]
    bf.add_many(np.array(small[: len(small) // 2], dtype=np.int64))
    bf.add_many(small[len(small) // 2 :])
    for v in INT_MEMBERS:
        if v >= 2**63:
            bf.add(v)
    bf.add_many(np.array([v for v in INT_MEMBERS if v >= 2**63], dtype=np.uint64))
    path = tmp_path_factory.mktemp("kinds") / "users.lhbf"
    bf.save(path)
    assert path.read_bytes()[14] == KIND_IDS["int64"]
    return path


def answers_of(path):
    """Python's answer for each int probe, one key at a time: the reference."""
    bf = BloomFilter.load(path)
    assert all(v in bf for v in INT_MEMBERS)
    return {v: v in bf for v in INT_PROBES}


def _filters(path):
    return [BloomFilter.load(path), BloomFilter.open(path), BloomFilter.open(path, verify=False)]


def test_int_keys_answer_alike_through_numpy_arrow_and_pandas(int_file):
    want = answers_of(int_file)
    # Two's complement: an unsigned probe's answer is that of its int.
    for bf in _filters(int_file):
        for dtype in NUMPY_INTS:
            vals = in_range(dtype, INT_PROBES)
            got = bf.contains_many(np.array(vals, dtype=dtype)).tolist()
            assert got == [want[v] for v in vals], np.dtype(dtype).name
        for name, (array, vals) in arrow_int_arrays().items():
            got = bf.contains_many(array).tolist()
            assert got == [want[v] for v in vals], name
            assert any(got), name  # members among them: not vacuous
        i64 = in_range(np.int64, INT_PROBES)
        u64 = in_range(np.uint64, INT_PROBES)
        series = {
            "int64": pd.Series(i64, dtype="int64"),
            "int32": pd.Series(in_range(np.int32, INT_PROBES), dtype="int32"),
            "uint64": pd.Series(u64, dtype="uint64"),
            "Int64 (nullable)": pd.Series(i64, dtype="Int64"),
            "UInt8 (nullable)": pd.Series(in_range(np.uint8, INT_PROBES), dtype="UInt8"),
            "int64[pyarrow]": pd.Series(i64, dtype=pd.ArrowDtype(pa.int64())),
            "timestamp[us][pyarrow]": pd.Series(
                pa.array(i64, pa.int64()).view(pa.timestamp("us")),
                dtype=pd.ArrowDtype(pa.timestamp("us")),
            ),
            "object ints": pd.Series(i64, dtype=object),
        }
        for name, s in series.items():
            vals = [int(v) for v in pa.array(s.array).cast(pa.int64(), safe=False).to_pylist()] \
                if name.startswith("timestamp") else [int(v) for v in s]
            got = bf.contains_many(s).tolist()
            assert got == [want[v] for v in vals], name
        # NumPy datetimes and durations in microseconds as their integer,
        # as Arrow's (NaT, -2**63, is a missing value: not a probe).
        no_nat = [v for v in i64 if v != -(2**63)]
        for unit in ["M8[us]", "m8[us]"]:
            got = bf.contains_many(np.array(no_nat, dtype=np.int64).view(unit)).tolist()
            assert got == [want[v] for v in no_nat], unit
            if unit.endswith("[us]"):  # pandas' bounds: every int64 as microseconds
                got = bf.contains_many(pd.Series(np.array(no_nat, dtype=np.int64).view(unit)))
                assert got.tolist() == [want[v] for v in no_nat], unit
        # NaT is a missing key: False by default, refused on request.
        nat = np.array([0, -(2**63)], dtype=np.int64).view("M8[s]")
        assert bf.contains_many(nat).tolist() == [want[0], False]
        with pytest.raises(ValueError, match="nulls .the first at index 1"):
            bf.contains_many(nat, nulls="raise")
        # Lists, tuples and iterators of Python ints, and NumPy scalars.
        assert bf.contains_many(INT_PROBES).tolist() == [want[v] for v in INT_PROBES]
        assert bf.contains_many(iter(INT_PROBES)).tolist() == [want[v] for v in INT_PROBES]
        assert [np.int64(v) in bf for v in i64] == [want[v] for v in i64]


def test_int_keys_answer_alike_through_polars(int_file):
    """Polars series, through the Arrow PyCapsule interface. Polars is not
    in the `test` extra: skipped where it is not installed (allowed in CI:
    conftest.CI_ALLOWED_SKIPS)."""
    pl = pytest.importorskip("polars")
    want = answers_of(int_file)
    bf = BloomFilter.load(int_file)
    for dtype, np_t in [(pl.Int8, np.int8), (pl.Int16, np.int16), (pl.Int32, np.int32),
                        (pl.Int64, np.int64), (pl.UInt8, np.uint8), (pl.UInt16, np.uint16),
                        (pl.UInt32, np.uint32), (pl.UInt64, np.uint64)]:
        vals = in_range(np_t, INT_PROBES)
        got = bf.contains_many(pl.Series(vals, dtype=dtype)).tolist()
        assert got == [want[v] for v in vals], dtype
    i32 = in_range(np.int32, INT_PROBES)
    micros = in_range(np.int64, INT_PROBES)
    moments = pl.Series(micros, dtype=pl.Int64).cast(pl.Datetime("us"))
    assert bf.contains_many(moments).tolist() == [want[v] for v in micros]
    with pytest.raises(TypeError, match="int64"):
        bf.contains_many(pl.Series([str(v) for v in i32]))


def test_int_keys_answer_alike_on_the_command_line(int_file, cli):
    """``lesshash query --keys int`` answers the Python ints' file as
    Python does; without ``--keys int`` the CLI refuses (the file records
    int64 keys) and says how to ask."""
    want = answers_of(int_file)
    members = [str(v) for v in INT_MEMBERS]
    got = subprocess.run([cli, "query", "--keys", "int", str(int_file), *members],
                         capture_output=True, check=True).stdout.decode()
    assert got == "".join(f"{v}\tyes\n" for v in members)
    probes = [v for v in INT_PROBES if v not in INT_MEMBERS][:400]
    run = subprocess.run([cli, "query", "--keys", "int", str(int_file), *map(str, probes)],
                         capture_output=True)
    assert run.returncode in (0, 1), run.stderr  # 1: some answered no
    got = run.stdout.decode()
    assert got == "".join(f"{v}\t{'yes' if want[v] else 'no'}\n" for v in probes)
    bad = subprocess.run([cli, "query", str(int_file), "42"], capture_output=True)
    assert bad.returncode != 0, bad.stdout
    stderr = bad.stderr.decode()
    assert "--keys int" in stderr or "int64" in stderr, stderr


STR_MEMBERS = [f"user-{i:04d}" for i in range(0, 600, 2)] + ["", "é", "日本語", "a\x00b"]
STR_PROBES = STR_MEMBERS + [f"user-{i:04d}" for i in range(1, 600, 2)] + ["7", "E"]


def test_str_keys_answer_alike_through_numpy_arrow_and_pandas(tmp_path):
    bf = BloomFilter(len(STR_MEMBERS), 1e-4)
    bf.add_many(STR_MEMBERS)
    path = tmp_path / "words.lhbf"
    bf.save(path)
    assert path.read_bytes()[14] == KIND_IDS["text"]
    want = {s: s in bf for s in STR_PROBES}
    assert all(want[s] for s in STR_MEMBERS)
    encoded = [s.encode() for s in STR_PROBES]
    fixed = [s for s in STR_PROBES if len(s.encode()) == 9]  # "user-0000"
    no_nul = [s for s in STR_PROBES if "\x00" not in s]  # NumPy drops trailing NULs only
    forms = {
        "string": (pa.array(STR_PROBES, pa.string()), STR_PROBES),
        "large_string": (pa.array(STR_PROBES, pa.large_string()), STR_PROBES),
        "string_view": (pa.array(STR_PROBES, pa.string_view()), STR_PROBES),
        "binary": (pa.array(encoded, pa.binary()), STR_PROBES),
        "large_binary": (pa.array(encoded, pa.large_binary()), STR_PROBES),
        "binary_view": (pa.array(encoded, pa.binary_view()), STR_PROBES),
        "fixed_size_binary": (pa.array([s.encode() for s in fixed], pa.binary(9)), fixed),
        "dictionary<string>": (pa.array(STR_PROBES).dictionary_encode(), STR_PROBES),
        "chunked string": (pa.chunked_array([STR_PROBES[:50], STR_PROBES[50:]]), STR_PROBES),
        "numpy U": (np.array(no_nul), no_nul),
        "numpy S": (np.array([s.encode() for s in no_nul]), no_nul),
        "pandas str": (pd.Series(STR_PROBES), STR_PROBES),
        "pandas object": (pd.Series(STR_PROBES, dtype=object), STR_PROBES),
        "pandas string[pyarrow]": (pd.Series(STR_PROBES, dtype="string[pyarrow]"), STR_PROBES),
        "list of bytes": (encoded, STR_PROBES),
    }
    for f in _filters(path):
        for name, (batch, strs) in forms.items():
            got = f.contains_many(batch).tolist()
            assert got == [want[s] for s in strs], name
            assert any(got), name
        # Integer keys are refused, whatever the interface.
        for ints in (np.arange(3), pa.array([1], pa.int8()), pd.Series([1]), [1, 2]):
            with pytest.raises(TypeError, match="text"):
                f.contains_many(ints)


def test_str_keys_answer_alike_on_the_command_line(tmp_path, cli):
    bf = BloomFilter(len(STR_MEMBERS), 1e-4)
    bf.add_many(np.array(STR_MEMBERS[:100]))
    bf.add_many(pa.array(STR_MEMBERS[100:]))
    path = tmp_path / "words.lhbf"
    bf.save(path)
    probes = [s for s in STR_PROBES if s and "\x00" not in s and not s.startswith("-")]
    run = subprocess.run([cli, "query", str(path), *probes], capture_output=True)
    assert run.returncode in (0, 1), run.stderr  # 1: some answered no
    got = run.stdout.decode()
    assert got == "".join(f"{s}\t{'yes' if s in bf else 'no'}\n" for s in probes)
