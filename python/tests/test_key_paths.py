"""The fast paths for exact ``int`` and ``str`` keys (one key, and lists and
tuples read in one pass) give the bytes the general rule gives: the same
answers and bit for bit the same filters as int subclasses, NumPy scalars,
``bytes`` of the documented encoding, and per-key calls."""

from __future__ import annotations

import enum

import numpy as np
import pytest

from lesshash import BloomFilter, CountMinSketch

# Every boundary of the i64 / u64 ranges the encoding switches at.
BOUNDARY_INTS = [
    0,
    1,
    -1,
    2**31 - 1,
    2**31,
    -(2**31),
    2**32,
    2**62,
    -(2**62),
    2**63 - 1,
    -(2**63),
    2**63,
    2**63 + 1,
    2**64 - 1,
]
TOO_WIDE = [2**64, 2**64 + 1, -(2**63) - 1, 10**30, -(10**30)]
STRS = ["", "a", "ascii key", "héllo", "日本語", "😀 emoji", "a\x00b", "ÿ" * 40]


class Int(int):
    """An int subclass: read by the general rule, not the fast path."""


class Str(str):
    """A str subclass: read by the general rule, not the fast path."""


class Color(enum.IntEnum):
    RED = 7


def encoded(v: int) -> bytes:
    """The documented encoding of an int key: 8 little-endian bytes, as
    i64 when negative, as u64 otherwise."""
    return v.to_bytes(8, "little", signed=v < 0)


def without_kind(bf: BloomFilter) -> bytes:
    """The filter's bytes less its key kind (header byte 14) and the two
    checksums that cover it: its parameters, counter and bits. Filters of
    the same bits built from ``int`` and from ``bytes`` keys record
    different kinds (``int64``, ``bytes``)."""
    data = bf.to_bytes()
    return data[:14] + data[15:56] + data[64:-8]


def filt() -> BloomFilter:
    return BloomFilter(1000, 1e-4, seed=42)


def built(keys, one_by_one: bool) -> BloomFilter:
    bf = filt()
    if one_by_one:
        for k in keys:
            bf.add(k)
    else:
        bf.add_many(keys)
    return bf


@pytest.mark.parametrize("one_by_one", [True, False])
def test_ints_hash_as_their_documented_bytes(one_by_one):
    # Exact ints (fast path) against bytes keys (never the int path): the
    # same filter bit for bit, so the encoding is the documented one.
    a = built(BOUNDARY_INTS, one_by_one)
    b = built([encoded(v) for v in BOUNDARY_INTS], one_by_one)
    assert (a.key_kind, b.key_kind) == ("int64", "bytes")
    assert without_kind(a) == without_kind(b)
    # Across kinds only once the filters answer every kind.
    with pytest.raises(TypeError, match="int64"):
        encoded(0) in a  # noqa: B015
    a.key_kind = b.key_kind = "mixed"
    for v in BOUNDARY_INTS:
        assert v in b and encoded(v) in a


@pytest.mark.parametrize("one_by_one", [True, False])
def test_exact_ints_equal_int_subclasses_and_numpy_scalars(one_by_one):
    exact = built(BOUNDARY_INTS, one_by_one)
    sub = built([Int(v) for v in BOUNDARY_INTS], one_by_one)
    assert exact.to_bytes() == sub.to_bytes()
    in_i64 = [v for v in BOUNDARY_INTS if -(2**63) <= v < 2**63]
    in_u64 = [v for v in BOUNDARY_INTS if v >= 2**63]
    scalars = [np.int64(v) for v in in_i64] + [np.uint64(v) for v in in_u64]
    assert built(scalars, one_by_one).to_bytes() == exact.to_bytes()
    for v in BOUNDARY_INTS:
        assert Int(v) in exact and v in sub


def test_minus_one_and_u64_max_are_one_key():
    # Both are the bytes ff x 8, on every path.
    for key in [-1, Int(-1), np.int64(-1)]:
        bf = filt()
        bf.add(key)
        assert 2**64 - 1 in bf and Int(2**64 - 1) in bf
        assert bf.contains_many([2**64 - 1, -1, Int(2**64 - 1), np.uint64(2**64 - 1)]).all()


def test_bool_and_int_enum_are_their_int_values():
    # bool is an int subclass: True is the key 1, False the key 0, as in a
    # Python set ({True} == {1}); IntEnum members are their values.
    a = built([True, False, Color.RED], one_by_one=True)
    b = built([1, 0, 7], one_by_one=True)
    assert a.to_bytes() == b.to_bytes()
    assert built([True, False, Color.RED], one_by_one=False).to_bytes() == b.to_bytes()
    assert 1 in a and True in b and Color.RED in b


@pytest.mark.parametrize("key", TOO_WIDE)
def test_ints_beyond_64_bits_raise_on_every_path(key):
    bf = filt()
    for k in (key, Int(key)):
        with pytest.raises(OverflowError, match="64-bit key range"):
            bf.add(k)
        with pytest.raises(OverflowError, match="64-bit key range"):
            k in bf  # noqa: B015
        for batch, at in (([1, 2, k], 2), ((1, 2, k), 2), (iter([1, 2, k]), 2), (["x", k], 1)):
            with pytest.raises(OverflowError, match=f"key {at}: int key"):
                bf.add_many(batch)
        with pytest.raises(OverflowError, match="key 1"):
            bf.contains_many([0, k])
    with pytest.raises(OverflowError):
        CountMinSketch(0.01, 0.01).add(key)
    # Nothing of a refused batch was inserted.
    assert bf.insert_calls == 0 and bf.fill_ratio == 0


@pytest.mark.parametrize("one_by_one", [True, False])
def test_str_keys_are_their_utf8_bytes(one_by_one):
    exact = built(STRS, one_by_one)
    as_bytes = built([s.encode() for s in STRS], one_by_one)
    assert (exact.key_kind, as_bytes.key_kind) == ("text", "bytes")
    assert without_kind(exact) == without_kind(as_bytes)
    assert exact.to_bytes() == built([Str(s) for s in STRS], one_by_one).to_bytes()
    for s in STRS:
        assert s in exact and Str(s) in exact and s.encode() in exact


@pytest.mark.parametrize("key", ["\ud800", "a\udfffb", Str("\ud834")])
def test_lone_surrogates_raise_value_error_on_every_path(key):
    bf = filt()
    with pytest.raises(UnicodeEncodeError):
        bf.add(key)
    with pytest.raises(UnicodeEncodeError):
        key in bf  # noqa: B015
    for batch in (["ok", key], ("ok", key), [1, key]):
        with pytest.raises(ValueError, match="key 1"):
            bf.add_many(batch)
        with pytest.raises(ValueError, match="key 1"):
            bf.contains_many(batch)
    assert bf.insert_calls == 0


def mixed_keys():
    return [
        1,
        "one",
        b"one",
        bytearray(b"\x01\x02"),
        memoryview(b"mv"),
        -1,
        2**63,
        True,
        Int(5),
        Str("sub"),
        np.int32(-3),
        np.uint64(2**64 - 2),
        "héllo",
        0,
    ]


@pytest.mark.parametrize("container", [list, tuple, iter])
def test_mixed_batches_answer_as_single_keys(container):
    keys = mixed_keys()
    single = built(keys, one_by_one=True)
    batch = filt()
    assert batch.add_many(container(keys)) == len(keys)
    assert batch.to_bytes() == single.to_bytes()
    probe = keys + [2, "two", b"two", -2, 2**64 - 3]
    other = filt()
    other.add_many(keys[::2])
    want = [k in other for k in probe]
    assert other.contains_many(container(probe)).tolist() == want
    assert all(want[: len(keys) : 2])


def test_ints_then_strs_then_ints_across_chunks():
    # A batch read as integers turns to bytes at its first non-integer key;
    # with more than one 65,536-key chunk the switch falls inside a chunk
    # after whole chunks of integers, and the reverse order too.
    n = 70_000
    for keys in (
        list(range(n)) + ["s", 3, b"b"] + list(range(-n, 0)),
        ["first"] + list(range(n)) + [2**64 - 1],
        [2**63 + i for i in range(n)] + [Str("x")],
    ):
        bf = BloomFilter(2 * n + 10, 0.01, seed=3)
        bf.add_many(keys)
        ref = BloomFilter(2 * n + 10, 0.01, seed=3)
        for k in keys:
            ref.add(k)
        assert bf.to_bytes() == ref.to_bytes()
        probe = keys[:5] + [n + 5, -(n + 5), "t", 2**62 + 1]
        assert bf.contains_many(probe).tolist() == [k in ref for k in probe]
        assert bf.contains_many(tuple(keys)).all()


@pytest.mark.parametrize("kind", ["list", "tuple", "numpy", "generator"])
def test_large_int_batches_equal_one_key_adds(kind):
    # Above the crate's parallel threshold (16,384 keys) for arrays and for
    # the 65,536-key chunks of lists.
    keys = np.random.default_rng(9).integers(-(2**63), 2**63 - 1, size=200_000, dtype=np.int64)
    as_ints = keys.tolist()
    batch = {
        "list": lambda: as_ints,
        "tuple": lambda: tuple(as_ints),
        "numpy": lambda: keys,
        "generator": lambda: (k for k in as_ints),
    }[kind]
    bf = BloomFilter(200_000, 0.01, seed=1)
    bf.add_many(batch())
    ref = BloomFilter(200_000, 0.01, seed=1)
    for k in as_ints[:50_000]:
        ref.add(k)
    ref.add_many([encoded(k) for k in as_ints[50_000:]])
    assert (bf.key_kind, ref.key_kind) == ("int64", "mixed")
    assert without_kind(bf) == without_kind(ref)
    probes = as_ints[:1000] + list(range(1000))
    assert bf.contains_many(probes).tolist() == [k in ref for k in probes]


def test_count_min_fast_paths_equal_the_general_rule():
    keys = BOUNDARY_INTS + STRS
    a = CountMinSketch(width=1009, depth=4, seed=5)
    b = CountMinSketch(width=1009, depth=4, seed=5)
    c = CountMinSketch(width=1009, depth=4, seed=5)
    for k in keys:
        a.add(k, 2)
        b.add(encoded(k) if isinstance(k, int) else k.encode(), 2)
    c.add_many(keys, counts=2)
    assert a == b == c
    assert [a.estimate(k) for k in keys] == c.estimate_many(keys).tolist()
    assert c.estimate_many(tuple(keys)).tolist() == [b.estimate(k) for k in keys]
