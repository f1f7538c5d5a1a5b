"""The set algebra of BloomFilter (|, &, their in-place and method forms,
update, issubset and the order operators, bool) against its definitions
on the bits, for every layout, on random key sets (seeded), with the
errors of incompatible or read-only filters."""

from __future__ import annotations

import numpy as np
import pytest

from lesshash import BloomFilter

LAYOUTS = ["blocked", "split-block", "classic", "partitioned"]


def bits(bf: BloomFilter) -> np.ndarray:
    """The filter's bits as bytes (the payload of its frames)."""
    return np.frombuffer(bytes(bf._frames()[1]), dtype=np.uint8)


def filled(proto: BloomFilter, keys) -> BloomFilter:
    f = proto.copy()
    f.clear()
    f.add_many(np.asarray(keys, dtype=np.int64))
    return f


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("seed", range(4))
def test_operations_are_their_definitions_on_the_bits(layout, seed):
    rng = np.random.default_rng(seed)
    proto = BloomFilter(int(rng.integers(50, 3000)), 0.05, layout=layout)
    universe = rng.integers(-(2**62), 2**62, size=2000)
    pick = lambda: universe[rng.random(universe.size) < rng.random()]  # noqa: E731
    a, b, c = (filled(proto, pick()) for _ in range(3))
    ba, bb, bc = bits(a), bits(b), bits(c)

    assert np.array_equal(bits(a | b), ba | bb)
    assert np.array_equal(bits(a & b), ba & bb)
    assert np.array_equal(bits(a.union(b, c)), ba | bb | bc)
    assert np.array_equal(bits(a.intersection(b, c)), ba & bb & bc)
    assert a.union() == a and a.intersection() == a and a.union() is not a
    # In place, and the inputs of the new-filter forms unchanged.
    x = a.copy()
    x &= b
    assert x == a & b and np.array_equal(bits(a), ba)
    x |= c
    assert np.array_equal(bits(x), (ba & bb) | bc)
    y = a.copy()
    y.intersection_update(b, c)
    assert y == a.intersection(b, c)
    # update: filters OR-ed in, anything else added as keys.
    z = a.copy()
    more = universe[:7]
    z.update(b, more.tolist(), c, more)
    assert z == a.union(b, c, filled(proto, more))
    # The subset order is the bits' (A <= B iff A | B == B).
    for p, q in [(a, b), (b, a), (a & b, a), (a, a | b), (a, a), (a & b, b | c)]:
        subset = (p | q) == q
        assert p.issubset(q) == (p <= q) == subset
        assert q.issuperset(p) == (q >= p) == subset
        assert (p < q) == (subset and p != q)
        assert (q > p) == (subset and p != q)
    # A filter's keys are a subset of the union's; the AND of each.
    assert a <= a | b and a & b <= a and not (a < a)
    # bool: any bit set.
    assert bool(a) == bool(ba.any())
    assert not filled(proto, []) and filled(proto, universe[:1])


def test_a_filter_with_itself():
    a = BloomFilter(1000, 0.01)
    a.add_many(np.arange(100))
    before = a.copy()
    a |= a
    a &= a
    a.update(a)
    a.intersection_update(a)
    assert a == before and a <= a and a >= a and not a < a


def test_the_insert_counter_and_key_kind_follow_the_crate():
    a, b = BloomFilter(1000, 0.01), BloomFilter(1000, 0.01)
    a.add_many(np.arange(10))
    b.add_many(["x", "y", "z"])
    assert (a | b).insert_calls == 13 and (a & b).insert_calls == 3
    assert (a | b).key_kind == "mixed" and (a & b).key_kind == "mixed"


@pytest.mark.parametrize(
    "other, word",
    [
        (BloomFilter(1000, 0.01, layout="classic"), "layout"),
        (BloomFilter(1000, 0.01, scheme="enhanced-cube"), "scheme"),
        (BloomFilter(1000, 0.01, seed=5), "seed"),
        (BloomFilter(9000, 0.01), "bits"),
        # The same bits and layout, one probe more per key.
        (BloomFilter.from_bits(BloomFilter(1000, 0.01).bits, BloomFilter(1000, 0.01).hashes + 1), "hashes"),
    ],
)
def test_incompatible_filters_name_the_parameter(other, word):
    a = BloomFilter(1000, 0.01)
    a.add(1)
    before = a.copy()
    for op in [
        lambda: a & other,
        lambda: a.intersection(other),
        lambda: a.issubset(other),
        lambda: a <= other,
        lambda: other >= a,
        lambda: a < other,
        lambda: a.issuperset(other),
    ]:
        with pytest.raises(ValueError, match=word):
            op()
    for op in ["__iand__", "intersection_update", "update"]:
        with pytest.raises(ValueError, match=word):
            getattr(a, op)(other)
    assert a == before


def test_other_types():
    a = BloomFilter(1000, 0.01)
    with pytest.raises(TypeError):
        a & {1, 2}
    with pytest.raises(TypeError):
        a <= {1, 2}
    with pytest.raises(TypeError, match="intersection_update takes BloomFilters, got set"):
        a.intersection_update({1, 2})
    with pytest.raises(TypeError):
        a.intersection([1, 2])
    assert (a == {1}) is False


def test_a_map_refuses_in_place_changes_but_combines(tmp_path):
    a = BloomFilter(1000, 0.01)
    a.add_many(np.arange(50))
    path = tmp_path / "a.lhbf"
    a.save(path)
    mapped = BloomFilter.open(path)
    b = BloomFilter(1000, 0.01)
    b.add_many(np.arange(25, 75))
    assert mapped & b == a & b and not (mapped & b).read_only
    assert mapped.union(b) == a | b
    assert mapped <= a | b and mapped >= a & b and bool(mapped)
    for change in [
        lambda: mapped.__iand__(b),
        lambda: mapped.intersection_update(b),
        lambda: mapped.update(b),
    ]:
        with pytest.raises(TypeError, match="read-only"):
            change()
