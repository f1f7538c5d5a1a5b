"""lesshash.parquet: the Bloom filters pyarrow writes into Parquet files,
read back and asked about keys of each column type (no false negatives
for any value in a row group, absent values mostly absent), against the
rows themselves; filters built here equal to the ones pyarrow wrote;
errors."""

from __future__ import annotations

import datetime

import numpy as np
import pytest

from lesshash import ParquetFilter

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
import lesshash.parquet as lp  # noqa: E402


def table(n=3000):
    ids = np.arange(n, dtype=np.int64) * 7
    return pa.table(
        {
            "i64": pa.array(ids),
            "i32": pa.array(ids.astype(np.int32)),
            "u32": pa.array(ids.astype(np.uint32)),
            "text": pa.array([f"user-{i}" for i in ids]),
            "bin": pa.array([f"b{i}".encode() for i in ids], type=pa.binary()),
            "day": pa.array([datetime.date(2000, 1, 1) + datetime.timedelta(days=int(i)) for i in ids]),
            "ts": pa.array(ids * 1000, type=pa.timestamp("us")),
            "opt": pa.array([None if i % 3 else int(i) for i in ids], type=pa.int64()),
            # Parquet stores these as INT32 (widened), INT64 and
            # FIXED_LEN_BYTE_ARRAY. The 8-bit column repeats 40 values per
            # row group (-100.., -20.., 60..), none shared between groups.
            "i8": pa.array((np.arange(n) // 1000 * 80 - 100 + np.arange(n) % 40).astype(np.int8)),
            "i16": pa.array((ids % 30000 - 15000).astype(np.int16)),
            "u64": pa.array(ids.astype(np.uint64) + np.uint64(2**63)),
            "fixed": pa.array([int(i).to_bytes(6, "little") for i in ids], type=pa.binary(6)),
            # FLOAT and DOUBLE: their bits (keys of Parquet's filter only).
            "f32": pa.array(ids.astype(np.float32) + np.float32(0.5)),
            "f64": pa.array(ids.astype(np.float64) / 3),
        }
    )


COLUMNS = ["i64", "i32", "u32", "text", "bin", "day", "ts", "opt", "i8", "i16", "u64", "fixed", "f32", "f64"]


@pytest.fixture
def written(tmp_path):
    t = table()
    path = tmp_path / "t.parquet"
    pq.write_table(
        t, path, row_group_size=1000,
        bloom_filter_options={c: {"ndv": 1000, "fpp": 0.01} for c in COLUMNS},
    )
    return path, t


@pytest.mark.parametrize("column", COLUMNS)
def test_every_value_of_a_row_group_is_found_there(written, column):
    path, t = written
    filters = lp.column_filters(path, column)
    assert len(filters.row_groups) == 3 and all(f is not None for f in filters.row_groups)
    values = t[column].combine_chunks()
    per_group = filters.row_groups_for(values)
    valid = np.asarray(values.is_valid())
    for g in range(3):
        mine = np.zeros(len(values), dtype=bool)
        mine[g * 1000:(g + 1) * 1000] = True
        # No false negatives: each row group finds each of its values.
        assert per_group[g][mine & valid].all(), column
        # Values of other row groups: mostly absent (1% target; 2000 tries).
        others = per_group[g][~mine & valid]
        assert others.mean() < 0.05, (column, others.mean())
    # In the file at all: every value; a null answers False.
    assert np.array_equal(filters.contains_many(values), valid)


def test_keys_are_converted_to_the_columns_type(written):
    path, _ = written
    # A Python int asks the int32 column about its 4-byte encoding and the
    # int64 column about the 8-byte one; both find 7.
    for column in ["i32", "i64", "u32"]:
        f = lp.column_filters(path, column)
        assert f.contains_many([7, 14]).all()
        assert f.contains_many(np.array([7], dtype=np.int64)).all()
    text = lp.column_filters(path, "text")
    assert text.contains_many(["user-7", "user-14000"]).tolist() == [True, True]
    assert text.contains_many(pa.array(["user-7"]).dictionary_encode()).all()
    with pytest.raises(pa.ArrowInvalid):
        lp.column_filters(path, "i32").contains_many([2**40])


def test_a_filter_built_here_is_the_writers(written):
    path, t = written
    for column in COLUMNS:
        stored = lp.column_filters(path, column).row_groups[0]
        values = t[column][:1000]
        # pyarrow sizes a row group's filter for at most the distinct
        # values it holds (334 in the nullable column, 40 in the 8-bit one).
        ndv = min(1000, len(values.drop_null().unique()))
        mine = lp.build(values, ndv=ndv, fpp=0.01)
        assert mine == stored, column
        assert ParquetFilter.from_bytes(mine.to_bytes()) == stored
        assert mine.num_bytes == stored.num_bytes and 0 < mine.fill_ratio < 1


def test_files_without_filters_and_errors(tmp_path, written):
    plain = tmp_path / "plain.parquet"
    pq.write_table(table(10), plain)
    f = lp.column_filters(plain, "i64")
    assert f.row_groups == [None]
    # No filter: every key may be there.
    assert f.contains_many([1, 2]).tolist() == [True, True]
    with pytest.raises(KeyError, match="column 'nope' is not in"):
        lp.column_filters(plain, "nope")
    with pytest.raises(ValueError):
        ParquetFilter.from_bytes(b"\x00" * 10)
    with pytest.raises(TypeError, match="Arrow array"):
        ParquetFilter(100, 0.01).contains_many([1, 2])
    path, _ = written
    data = bytearray(path.read_bytes())
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(0)
    # A damaged header: one clear error naming the row group and column.
    data[chunk.bloom_filter_offset] = 0xFF
    damaged = tmp_path / "damaged.parquet"
    damaged.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="row group 0, column 'i64'"):
        lp.column_filters(damaged, "i64")


def test_the_old_name_is_the_same_class():
    import lesshash
    import lesshash.parquet

    assert lesshash.SplitBlockFilter is ParquetFilter
    assert lesshash.parquet.SplitBlockFilter is ParquetFilter
    assert "SplitBlockFilter" not in lesshash.__all__  # new code: ParquetFilter



def test_floats_are_their_bits(written):
    """A float column's filter holds each value's bits, as Parquet's
    writers hash them: 0.0 and -0.0 are two values; lesshash's own filters
    have no float keys (a float equal to an integer is not the same key)."""
    path, t = written
    f = lp.column_filters(path, "f64")
    third = float(t["f64"][1].as_py())
    assert f.contains_many(pa.array([third, third + 1e-9])).tolist() == [True, False]
    zeros = lp.build(pa.array([0.0]), ndv=10, fpp=0.01)
    assert zeros.contains_many(pa.array([0.0, -0.0])).tolist() == [True, False]
    from lesshash import BloomFilter

    with pytest.raises(TypeError, match="float keys are not supported"):
        BloomFilter(10, 0.01).add_many(pa.array([1.5]))
