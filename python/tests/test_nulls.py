"""Missing keys (Arrow and Polars nulls, pandas' NA, NumPy's NaT) in every
batch type that carries them: add_many skips them (or raises), and
contains_many answers them as asked (False for NumPy output, null for
Arrow output, or an error), with every present key answered as it is
alone; Arrow output as a pyarrow.BooleanArray."""

from __future__ import annotations

import numpy as np
import pytest

from lesshash import BloomFilter, CountMinSketch

pa = pytest.importorskip("pyarrow")
pd = pytest.importorskip("pandas")


def members_and_probe(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    keys = rng.integers(-(2**40), 2**40, size=n)
    present = rng.random(n) > 0.1  # about 10% missing
    return keys, present


def arrow_forms(keys, present):
    """The same keys, missing where `present` is False, in each Arrow form."""
    ints = pa.array(keys, mask=~present)
    text = pa.array([str(k) for k in keys], mask=~present)
    half = len(keys) // 3
    return {
        "int64": (ints, keys, "int64"),
        "int32-dictionary": (pa.array(keys % 1000, mask=~present).cast(pa.int32()).dictionary_encode(), keys % 1000, "int64"),
        "string": (text, [str(k) for k in keys], "text"),
        "large_string": (text.cast(pa.large_string()), [str(k) for k in keys], "text"),
        "string_view": (text.cast(pa.string_view()), [str(k) for k in keys], "text"),
        "binary": (text.cast(pa.binary()), [str(k).encode() for k in keys], "bytes"),
        "chunked": (pa.chunked_array([ints[:half], ints[half:]]), keys, "int64"),
        "chunked-string_view": (
            pa.chunked_array([text[:half].cast(pa.string_view()), text[half:].cast(pa.string_view())]),
            [str(k) for k in keys],
            "text",
        ),
        "sliced": (ints.slice(7), keys[7:], "int64"),
    }


@pytest.mark.parametrize("form", [
    "int64", "int32-dictionary", "string", "large_string", "string_view", "binary", "chunked",
    "chunked-string_view", "sliced"])
def test_arrow_nulls_are_skipped_and_answered(form):
    keys, present = members_and_probe()
    array, plain, kind = arrow_forms(keys, present)[form]
    present = present[len(present) - len(plain):]
    plain_present = [k for k, p in zip(plain, present) if p]
    bf = BloomFilter(5000, 0.01)
    # add_many skips the nulls and says how many keys it added.
    assert bf.add_many(array) == len(plain_present)
    alone = BloomFilter(5000, 0.01)
    alone.add_many(np.asarray(plain_present) if kind == "int64" else plain_present)
    assert bf == alone
    assert bf.key_kind == kind

    probe = BloomFilter(5000, 0.01)
    probe.add_many(plain_present[::2] if kind != "int64" else np.asarray(plain_present[::2]))
    each = np.array([p and (k in probe) for k, p in zip(plain, present)])
    # NumPy output: False for a null, each present key as alone.
    got = probe.contains_many(array)
    assert isinstance(got, np.ndarray) and got.dtype == np.bool_
    assert np.array_equal(got, each)
    assert np.array_equal(probe.contains_many(array, nulls="false"), each)
    # Arrow output: null for a null.
    got = probe.contains_many(array, output="arrow")
    assert isinstance(got, pa.BooleanArray) and len(got) == len(plain)
    assert np.array_equal(np.asarray(got.is_null()), ~present)
    assert np.array_equal(got.fill_null(False).to_numpy(zero_copy_only=False), each)
    got = probe.contains_many(array, output="arrow", nulls="false")
    assert got.null_count == 0 and np.array_equal(got.to_numpy(zero_copy_only=False), each)
    # Raising names the first null's index in the whole batch.
    first = int(np.flatnonzero(~present)[0])
    with pytest.raises(ValueError, match=f"nulls \\(the first at index {first}\\)"):
        probe.contains_many(array, nulls="raise")
    before = probe.copy()
    with pytest.raises(ValueError, match=f"the first at index {first}"):
        probe.add_many(array, nulls="raise")
    assert probe == before


def test_a_table_filters_with_the_arrow_answers():
    keys = pa.array([1, None, 3, 4, None], type=pa.int64())
    table = pa.table({"k": keys, "v": list(range(5))})
    bf = BloomFilter(100, 0.01)
    bf.add_many([1, 4])
    mask = bf.contains_many(table["k"], output="arrow")
    assert mask.to_pylist() == [True, None, False, True, None]
    # SQL's rule: a null answer keeps the row out of both the filter and
    # its negation.
    assert table.filter(mask)["v"].to_pylist() == [0, 3]
    import pyarrow.compute as pc
    assert table.filter(pc.invert(mask))["v"].to_pylist() == [2]


def test_answers_without_nulls_have_none():
    bf = BloomFilter(100, 0.01)
    bf.add_many([1, 2])
    got = bf.contains_many(pa.array([1, 5]), output="arrow")
    assert got.null_count == 0 and got.to_pylist() == [True, False]
    # Any batch can answer as Arrow.
    assert bf.contains_many(np.array([2, 9]), output="arrow").to_pylist() == [True, False]
    assert bf.contains_many([1, "x"], output="arrow", nulls="false").to_pylist() == [True, False]
    assert len(bf.contains_many(pa.array([], type=pa.int64()), output="arrow")) == 0


@pytest.mark.parametrize(
    "series, plain",
    [
        (lambda: pd.Series([5, None, 7, None], dtype="Int64"), [5, 7]),
        (lambda: pd.Series([5, None, 7, None], dtype="UInt8"), [5, 7]),
        (lambda: pd.Series([5, None, 7, None], dtype="int64[pyarrow]"), [5, 7]),
        (lambda: pd.Series(["a", None, "c", None], dtype="string[pyarrow]"), ["a", "c"]),
        (lambda: pd.Series(["a", None, "c", None], dtype=pd.ArrowDtype(pa.string())), ["a", "c"]),
        (lambda: pd.Series(["a", None, "c", None], dtype=pd.ArrowDtype(pa.large_string())), ["a", "c"]),
        (
            lambda: pd.Series(pd.to_datetime(["2024-01-01", None, "2024-01-03", None])),
            list(pd.to_datetime(["2024-01-01", "2024-01-03"]).to_numpy()),
        ),
    ],
)
def test_pandas_missing_values(series, plain):
    s = series()
    bf = BloomFilter(100, 0.01)
    assert bf.add_many(s) == 2
    alone = BloomFilter(100, 0.01)
    alone.add_many(np.asarray(plain) if not isinstance(plain[0], str) else plain)
    assert bf == alone
    assert bf.contains_many(s).tolist() == [True, False, True, False]
    assert bf.contains_many(s, output="arrow").to_pylist() == [True, None, True, None]
    with pytest.raises(ValueError, match="first at index 1"):
        bf.contains_many(s, nulls="raise")


def test_numpy_nat():
    days = np.array(["2024-01-01", "NaT", "2024-01-02"], dtype="datetime64[D]")
    bf = BloomFilter(100, 0.01)
    assert bf.add_many(days) == 2
    assert bf.contains_many(days).tolist() == [True, False, True]
    assert bf.contains_many(days, output="arrow").to_pylist() == [True, None, True]


def test_polars_nulls():
    pl = pytest.importorskip("polars")
    bf = BloomFilter(100, 0.01)
    assert bf.add_many(pl.Series([1, None, 3])) == 2
    assert bf.contains_many(pl.Series([1, None, 2])).tolist() == [True, False, False]
    s = pl.Series(["x", None, "y"], dtype=pl.Categorical)
    text = BloomFilter(100, 0.01)
    assert text.add_many(s) == 2
    assert text.contains_many(s, output="arrow").to_pylist() == [True, None, True]


def test_bad_choices_name_the_parameter():
    bf = BloomFilter(100, 0.01)
    keys = pa.array([1, None])
    with pytest.raises(ValueError, match='nulls="null" needs output="arrow"'):
        bf.contains_many(keys, nulls="null")
    with pytest.raises(ValueError, match='nulls must be "null", "false" or "raise", got .skip.'):
        bf.contains_many(keys, nulls="skip")
    with pytest.raises(ValueError, match='output must be "numpy" or "arrow", got .polars.'):
        bf.contains_many(keys, output="polars")
    with pytest.raises(ValueError, match='nulls must be "skip" or "raise", got .false.'):
        bf.add_many(keys, nulls="false")
    assert bf.insert_calls == 0


def test_a_sketch_still_refuses_missing_keys():
    cms = CountMinSketch(width=67, depth=3)
    with pytest.raises(ValueError, match="nulls .the first at index 1"):
        cms.add_many(pa.array([1, None]))
    with pytest.raises(ValueError, match="nulls .the first at index 1"):
        cms.estimate_many(pd.Series([1, None], dtype="Int64"))
    assert cms.total == 0
