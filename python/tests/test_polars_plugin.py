"""The Polars expressions (lesshash.polars, the lesshash-polars plugin):
eager, lazy and streaming, every key type against contains_many, nulls,
paths and objects, errors, and build against add_many."""

import datetime as dt
import os

import numpy as np
import pytest

pl = pytest.importorskip("polars")
lp = pytest.importorskip("lesshash.polars", exc_type=ImportError)

import lesshash  # noqa: E402

N = 5_000


def _filter(keys, **kw):
    f = lesshash.BloomFilter(max(len(keys), 1), 0.01, **kw)
    f.add_many(keys, nulls="skip")
    return f


def _series():
    """One Series per supported Polars type, half its values inserted
    below, with nulls."""
    rng = np.random.default_rng(7)
    ints = rng.integers(-(2**40), 2**40, N)
    mask = rng.random(N) < 0.1
    base = pl.Series("k", ints).set(pl.Series(mask), None)
    small = pl.Series("k", rng.integers(0, 120, N)).set(pl.Series(mask), None)
    text = base.cast(pl.String)
    out = {
        "i8": small.cast(pl.Int8),
        "i16": small.cast(pl.Int16),
        "i32": base.cast(pl.Int32, strict=False),
        "i64": base,
        "u8": small.cast(pl.UInt8),
        "u16": small.cast(pl.UInt16),
        "u32": small.cast(pl.UInt32),
        "u64": base.abs().cast(pl.UInt64),
        "date": small.cast(pl.Date),
        "datetime": base.cast(pl.Datetime("us")),
        "datetime_tz": base.cast(pl.Datetime("ms", "Europe/Paris")),
        "duration": base.cast(pl.Duration("ns")),
        "time": (base.abs() % 86_400_000_000_000).cast(pl.Time),
        "str": text,
        "binary": text.cast(pl.Binary),
        "categorical": (small.cast(pl.String)).cast(pl.Categorical),
        "enum": small.cast(pl.String).cast(pl.Enum([str(i) for i in range(120)])),
    }
    return out


@pytest.mark.parametrize("name", list(_series()))
def test_every_key_type_answers_as_contains_many(name):
    s = _series()[name]
    inserted = s.head(N // 2).drop_nulls()
    f = _filter(inserted)
    df = pl.DataFrame({"k": s})
    got = df.select(pl.col("k").lesshash.contains(f))["k"]
    want = f.contains_many(s, nulls="false")
    assert got.null_count() == s.null_count()
    assert np.array_equal(got.fill_null(False).to_numpy(), want), name
    # No false negatives: every inserted key is found.
    assert pl.DataFrame({"k": inserted}).select(pl.col("k").lesshash.contains(f))["k"].all()
    # And the filter the aggregation builds is add_many's, bit for bit.
    built = df.head(N // 2).select(pl.col("k").lesshash.build(max(len(inserted), 1), 0.01)).item()
    assert built == f.to_bytes(), name


def test_eager_lazy_and_streaming_agree(tmp_path):
    keys = pl.Series("k", np.arange(0, 2 * N, 2))
    f = _filter(keys)
    df = pl.DataFrame({"k": np.arange(2 * N), "v": np.arange(2 * N) * 3})
    want = df.filter(pl.Series(f.contains_many(df["k"])))
    expr = pl.col("k").lesshash.contains(f)
    assert df.filter(expr).equals(want)
    assert df.lazy().filter(expr).collect().equals(want)
    assert df.lazy().filter(expr).collect(engine="streaming").equals(want)
    # A Parquet dataset, scanned, filtered and sunk by the streaming engine.
    src = tmp_path / "src"
    src.mkdir()
    for i, part in enumerate(df.iter_slices(N // 3)):
        part.write_parquet(src / f"part-{i}.parquet", row_group_size=1000)
    out = tmp_path / "out.parquet"
    path = tmp_path / "users.lhbf"
    f.save(path)
    pl.scan_parquet(src / "*.parquet").filter(
        pl.col("k").lesshash.contains(str(path))
    ).sink_parquet(out)
    assert pl.read_parquet(out).sort("k").equals(want)
    collected = (
        pl.scan_parquet(src / "*.parquet")
        .filter(pl.col("k").lesshash.contains(path))
        .collect(engine="streaming")
    )
    assert collected.sort("k").equals(want)


def test_a_parquet_dataset_with_nulls_and_strings_streams_and_builds(tmp_path):
    """Nullable int and string columns in a multi-file Parquet dataset:
    filtered by the streaming engine (each key kind, a NULL answering null
    and leaving the row out) as contains_many answers the same column, and
    the filter built over the scan equal to add_many's."""
    rng = np.random.default_rng(5)
    n = 3 * N
    ints = rng.integers(0, 4 * N, n)
    nulls = rng.random(n) < 0.1
    df = pl.DataFrame(
        {
            "k": pl.Series(ints).set(pl.Series(nulls), None),
            "s": pl.Series([f"user-{i}" for i in ints]).set(pl.Series(rng.random(n) < 0.1), None),
            "v": np.arange(n),
        }
    )
    src = tmp_path / "src"
    src.mkdir()
    for i, part in enumerate(df.iter_slices(N)):
        part.write_parquet(src / f"part-{i}.parquet", row_group_size=1000)
    scan = pl.scan_parquet(src / "*.parquet")
    for column in ("k", "s"):
        present = df[column].drop_nulls()
        f = _filter(present.gather(np.arange(0, len(present), 3)))
        path = tmp_path / f"{column}.lhbf"
        f.save(path)
        mask = f.contains_many(df[column].to_arrow(), output="arrow")
        want = df.filter(pl.Series(mask.fill_null(False).to_numpy(zero_copy_only=False)))
        got = scan.filter(pl.col(column).lesshash.contains(path)).collect(engine="streaming")
        assert got.sort("v").equals(want), column
        answers = scan.select(pl.col(column).lesshash.contains(path), "v").collect(engine="streaming").sort("v")
        assert answers[column].to_list() == mask.to_pylist(), column
        built = lp.build(scan, column, n, 0.01)
        alone = lesshash.BloomFilter(n, 0.01)
        alone.add_many(df[column])
        assert built.to_bytes() == alone.to_bytes(), column


def test_nulls_answer_null_or_false():
    f = _filter([1, 2])
    df = pl.DataFrame({"k": [1, None, 3]})
    got = df.select(
        a=pl.col("k").lesshash.contains(f), b=pl.col("k").lesshash.contains(f, nulls="false")
    )
    assert got["a"].to_list() == [True, None, False]
    assert got["b"].to_list() == [True, False, False]
    assert df.filter(pl.col("k").lesshash.contains(f))["k"].to_list() == [1]
    assert df.filter(~pl.col("k").lesshash.contains(f))["k"].to_list() == [3]
    with pytest.raises(ValueError, match="nulls must be"):
        pl.col("k").lesshash.contains(f, nulls="raise")


def test_a_path_an_object_and_a_map(tmp_path):
    f = _filter(list(range(100)))
    path = tmp_path / "f.lhbf"
    f.save(path)
    df = pl.DataFrame({"k": list(range(200))})
    want = df.select(pl.col("k").lesshash.contains(f))
    for filt in (str(path), path, lesshash.BloomFilter.open(path)):
        assert df.select(pl.col("k").lesshash.contains(filt)).equals(want)


def test_a_relative_path_is_the_one_meant_when_written(tmp_path, monkeypatch):
    f = _filter([5])
    f.save(tmp_path / "rel.lhbf")
    monkeypatch.chdir(tmp_path)
    expr = pl.col("k").lesshash.contains("rel.lhbf")
    monkeypatch.chdir(os.path.dirname(tmp_path))
    assert pl.DataFrame({"k": [5]}).select(expr)["k"].to_list() == [True]


def test_a_replaced_file_is_read_again(tmp_path):
    path = tmp_path / "f.lhbf"
    _filter([1]).save(path)
    expr = pl.col("k").lesshash.contains(path)
    df = pl.DataFrame({"k": [1, 2]})
    assert df.select(expr)["k"].to_list()[0] is True
    _filter([2, 3, 4]).save(path)  # save writes a new file and renames it
    assert df.select(expr)["k"].to_list()[1] is True


def test_missing_and_corrupt_files_fail_with_one_clear_error(tmp_path):
    df = pl.DataFrame({"k": [1]})
    with pytest.raises(pl.exceptions.ComputeError, match="cannot use the filter file .*missing.lhbf"):
        df.select(pl.col("k").lesshash.contains(tmp_path / "missing.lhbf"))
    bad = tmp_path / "bad.lhbf"
    bad.write_bytes(b"user1\nuser2\n")
    with pytest.raises(pl.exceptions.ComputeError, match="cannot use the filter file .*bad.lhbf.*text"):
        df.select(pl.col("k").lesshash.contains(bad))
    good = tmp_path / "good.lhbf"
    _filter([1]).save(good)
    data = bytearray(good.read_bytes())
    data[-1] ^= 1
    bad.write_bytes(bytes(data))
    with pytest.raises(pl.exceptions.ComputeError, match="cannot use the filter file .*bad.lhbf"):
        df.select(pl.col("k").lesshash.contains(bad))


def test_keyword_arguments_the_helper_never_writes_are_refused_by_name(tmp_path):
    """The plugin called without `contains_expr` (Polars' own
    `register_plugin_function`): each malformed set of keyword arguments
    fails naming what is wrong, never a panic or a guess."""
    from polars.plugins import register_plugin_function

    from lesshash_polars import LIBRARY

    path = tmp_path / "f.lhbf"
    _filter([1]).save(path)
    df = pl.DataFrame({"k": [1, 2]})

    def call(kwargs):
        return df.select(
            register_plugin_function(
                plugin_path=LIBRARY, function_name="contains", args=pl.col("k"),
                kwargs=kwargs, is_elementwise=True,
            )
        )

    cases = [
        ({}, "no keyword arguments: expected a filter file's `path` \\(str\\) or a filter's bytes"),
        ({"nulls": "null"}, "expected a filter file's `path` \\(str\\) or a filter's bytes"),
        ({"path": str(path), "filter": _filter([1]).to_bytes()}, "expected a filter file's `path`"),
        ({"path": 7}, "expected a filter file's `path`"),
        ({"path": str(path), "nulls": "skip"}, 'nulls must be "null" or "false", got'),
        ({"filter": b"not a filter"}, "the filter's bytes are not a lesshash filter"),
    ]
    for kwargs, message in cases:
        with pytest.raises(pl.exceptions.PolarsError, match=message):
            call(kwargs)
    # The same call with good arguments answers (the cases fail for their
    # arguments alone).
    assert call({"path": str(path)})["k"].to_list()[0] is True


def test_wrong_types_are_refused_by_name():
    f = _filter([1])
    with pytest.raises(pl.exceptions.ComputeError, match="column `x` of type f64 cannot be keys"):
        pl.DataFrame({"x": [1.5]}).select(pl.col("x").lesshash.contains(f))
    with pytest.raises(pl.exceptions.ComputeError, match="built from int64 keys but these keys are text"):
        pl.DataFrame({"x": ["1"]}).select(pl.col("x").lesshash.contains(f))
    with pytest.raises(TypeError, match="filter must be a lesshash.BloomFilter or a filter file's path"):
        pl.col("x").lesshash.contains(3)
    with pytest.raises(pl.exceptions.ComputeError, match="lesshash.build: column `x` of type bool"):
        pl.DataFrame({"x": [True]}).select(pl.col("x").lesshash.build(10, 0.01))
    with pytest.raises(ValueError):
        pl.col("x").lesshash.build(10, 2.0)


def test_build_per_group_and_the_helper():
    rng = np.random.default_rng(3)
    df = pl.DataFrame({"g": rng.integers(0, 4, N), "k": rng.integers(0, 10**9, N)})
    groups = df.group_by("g").agg(pl.col("k").lesshash.build(N, 0.01, seed=11)).sort("g")
    for g, data in groups.iter_rows():
        f = lesshash.BloomFilter(N, 0.01, seed=11)
        f.add_many(df.filter(pl.col("g") == g)["k"])
        assert data == f.to_bytes()
    for layout in ("blocked", "split-block", "classic", "partitioned"):
        built = lp.build(df.lazy(), "k", N, 0.01, layout=layout)
        f = lesshash.BloomFilter(N, 0.01, layout=layout)
        f.add_many(df["k"])
        assert built.to_bytes() == f.to_bytes()
        assert built.layout == layout


def test_a_filter_of_a_large_column_uses_every_thread_and_agrees():
    keys = np.arange(0, 400_000, 3)
    f = _filter(keys)
    df = pl.DataFrame({"k": np.arange(400_000)})
    got = df.select(pl.col("k").lesshash.contains(f))["k"].to_numpy()
    assert np.array_equal(got, f.contains_many(df["k"]))
    assert got[keys].all()


def test_timezone_is_not_part_of_the_key():
    at = dt.datetime(2026, 11, 28, 12, 0)
    utc = pl.Series([at]).cast(pl.Datetime("us", "UTC"))
    f = _filter(pl.Series([at]).cast(pl.Datetime("us")))
    assert pl.DataFrame({"k": utc}).select(pl.col("k").lesshash.contains(f))["k"].to_list() == [True]


def test_a_column_of_several_chunks_answers_each():
    f = _filter(list(range(0, 3000, 2)))
    parts = [pl.DataFrame({"k": list(range(i, i + 1000))}) for i in range(0, 3000, 1000)]
    df = pl.concat(parts, rechunk=False)
    assert df["k"].n_chunks() == 3
    got = df.select(pl.col("k").lesshash.contains(f))["k"]
    assert got.to_list() == f.contains_many(df["k"]).tolist()
    built = df.select(pl.col("k").lesshash.build(3000, 0.01)).item()
    want = lesshash.BloomFilter(3000, 0.01)
    want.add_many(df["k"])
    assert built == want.to_bytes()
