"""One key per date or instant, whatever unit a reader holds it in
(the crate's ``lesshash::temporal``, docs/guide.md's encoding table): a
timestamp (its UTC instant), a date (its midnight), a time of day and a
duration are microseconds, floored from finer units, saturating at the
``i64`` range from coarser ones. Engines read one Parquet column in
different units and types (pyarrow's ``timestamp[s]`` is milliseconds in
Polars and microseconds in DuckDB; its ``date64`` days in pyarrow and a
millisecond datetime in Polars), so a key that is the reader's count would
make one cell several keys."""

from __future__ import annotations

import datetime as dt
import subprocess

import numpy as np
import pytest

from lesshash import BloomFilter

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pd = pytest.importorskip("pandas")

I64_MIN, I64_MAX = -(2**63), 2**63 - 1
US_PER = {"s": 10**6, "ms": 10**3, "us": 1}
NS_PER_US = 1000


def key(value: int, unit: str) -> int:
    """The rule in exact integers: floor to microseconds, clamp to i64."""
    us = value // NS_PER_US if unit == "ns" else value * US_PER[unit]
    return max(I64_MIN, min(I64_MAX, us))


def day_key(days: int) -> int:
    """A date's key: its midnight's microseconds."""
    us = days * 86_400 * 10**6
    return max(I64_MIN, min(I64_MAX, us))


def probes(seed: int, low: int = I64_MIN + 1, high: int = I64_MAX) -> list[int]:
    """Edges of each unit's range and of the floors, then wide random values
    (NumPy's NaT, -2**63, left out: it is a missing value there)."""
    edges = [0, 1, -1, 999, -999, 1000, -1000, -1001, 1001, I64_MAX, I64_MIN + 1]
    for f in (10**3, 10**6):
        edges += [I64_MAX // f, I64_MAX // f + 1, -(2**63 // f), -(2**63 // f) - 1]
    rng = np.random.default_rng(seed)
    wide = rng.integers(low, high, 400, dtype=np.int64) >> rng.integers(0, 62, 400)
    return [v for v in edges + [int(v) for v in wide] if low <= v <= high]


def filter_of(keys: list[int]) -> BloomFilter:
    """A filter of every other key, at a rate low enough that the others
    answer mostly False (so a wrong key shows)."""
    bf = BloomFilter(len(keys), 1e-6)
    bf.add_many(keys[::2])
    return bf


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("kind", ["timestamp", "duration"])
def test_every_unit_answers_as_its_key(unit, kind):
    values = probes(len(unit) * 7 + len(kind))
    keys = [key(v, unit) for v in values]
    bf = filter_of(keys)
    want = [k in bf for k in keys]  # the Python int, one key at a time
    assert sum(want) >= len(keys) // 2 and not all(want)
    arrow_type = pa.timestamp(unit) if kind == "timestamp" else pa.duration(unit)
    numpy_dtype = f"{'M8' if kind == 'timestamp' else 'm8'}[{unit}]"
    batches = {
        "arrow": pa.array(values, pa.int64()).view(arrow_type),
        "arrow with a time zone": pa.array(values, pa.int64()).view(
            pa.timestamp(unit, tz="Asia/Kolkata") if kind == "timestamp" else arrow_type
        ),
        "numpy": np.array(values, dtype=np.int64).view(numpy_dtype),
    }
    for name, batch in batches.items():
        assert bf.contains_many(batch).tolist() == want, name
    # NumPy scalars, one at a time, by the arrays' rule.
    scalars = np.array(values[:60], dtype=np.int64).view(numpy_dtype)
    assert [s in bf for s in scalars] == want[:60]
    # Inserting through the unit gives the keys' filter, byte for byte.
    again = BloomFilter(len(keys), 1e-6)
    again.add_many(batches["numpy"][::2])
    assert again.to_bytes() == bf.to_bytes()


def test_times_of_day_answer_as_their_microseconds():
    rng = np.random.default_rng(5)
    seconds = [0, 1, 86_399] + [int(v) for v in rng.integers(0, 86_400, 200)]
    bf = BloomFilter(1000, 1e-6)
    bf.add_many([s * 10**6 for s in seconds])
    for t, scale in [(pa.time32("s"), 1), (pa.time32("ms"), 10**3),
                     (pa.time64("us"), 10**6), (pa.time64("ns"), 10**9)]:
        storage = pa.int32() if t.bit_width == 32 else pa.int64()
        array = pa.array([s * scale for s in seconds], storage).view(t)
        assert all(bf.contains_many(array).tolist()), t
    # Less than a microsecond later is the same key, one nanosecond earlier
    # (the microsecond before) another.
    later = pa.array([s * 10**9 + 999 for s in seconds[1:]], pa.int64()).view(pa.time64("ns"))
    assert all(bf.contains_many(later).tolist())
    earlier = pa.array([s * 10**9 - 1 for s in seconds[1:]], pa.int64()).view(pa.time64("ns"))
    assert not any(bf.contains_many(earlier).tolist())
    # Python's time objects: the wall-clock time of day.
    assert all(dt.time(s // 3600, s // 60 % 60, s % 60) in bf for s in seconds)


def test_dates_answer_as_their_midnight():
    rng = np.random.default_rng(6)
    days = [0, -1, 1, 19_700, -719_162, 2_932_896] + [
        int(v) for v in rng.integers(-100_000, 100_000, 300)
    ]
    keys = [day_key(d) for d in days]
    bf = filter_of(keys)
    want = [k in bf for k in keys]
    assert sum(want) >= len(keys) // 2 and not all(want)
    for name, batch in {
        "date32": pa.array(days, pa.int32()).view(pa.date32()),
        "date64": pa.array([d * 86_400_000 for d in days], pa.int64()).view(pa.date64()),
        "numpy datetime64[D]": np.array(days, dtype="M8[D]"),
        "date objects": [dt.date(1970, 1, 1) + dt.timedelta(days=d) for d in days],
        # A reader that makes a date a timestamp (Polars: date64 is a
        # millisecond Datetime) gives the same key.
        "timestamp[ms] of midnight": pa.array([d * 86_400_000 for d in days], pa.int64()).view(
            pa.timestamp("ms")
        ),
        "datetime objects at midnight": [dt.datetime(1970, 1, 1) + dt.timedelta(days=d)
                                         for d in days],
    }.items():
        assert bf.contains_many(batch).tolist() == want, name
    # Extreme dates saturate as the other units do.
    assert day_key(2**31 - 1) == I64_MAX
    edge = BloomFilter(10, 1e-9)
    edge.add_many(pa.array([2**31 - 1, -(2**31)], pa.int32()).view(pa.date32()))
    assert I64_MAX in edge and I64_MIN in edge


def test_python_objects_answer_as_their_key():
    """datetime, date, time, timedelta and pandas' and NumPy's scalars are
    keys: the same key as their Arrow column's cell."""
    utc = dt.timezone.utc
    cases = [
        (dt.datetime(2024, 3, 1, 12, 30, 5, 123456), 1709296205123456),
        (dt.datetime(2024, 3, 1, 18, 0, 5, 123456, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
         1709296205123456),
        (dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=utc), -1),
        (dt.datetime(1, 1, 1), -62135596800000000),
        (pd.Timestamp("2024-03-01 12:30:05.123456789"), 1709296205123456),
        (pd.Timestamp("1969-12-31 23:59:59.999999999"), -1),
        (pd.Timestamp("2024-03-01 12:30:05.123456", tz="US/Eastern"), 1709314205123456),
        (np.datetime64("2024-03-01T12:30:05.123456789", "ns"), 1709296205123456),
        (np.datetime64(1709296205, "s"), 1709296205000000),
        (dt.date(2024, 3, 1), 19783 * 86_400 * 10**6),
        (dt.date(1969, 12, 31), -86_400 * 10**6),
        (np.datetime64("2024-03-01", "D"), 19783 * 86_400 * 10**6),
        (dt.time(12, 30, 5, 123456), 45005123456),
        (dt.timedelta(days=-1, microseconds=1), -86399999999),
        (dt.timedelta.max, I64_MAX),
        (dt.timedelta.min, I64_MIN),
        (pd.Timedelta(nanoseconds=-1), -1),
        (np.timedelta64(-1, "ns"), -1),
        (np.timedelta64(3, "h"), 3 * 3600 * 10**6),
    ]
    for obj, want in cases:
        bf = BloomFilter(10, 1e-9)
        bf.add(obj)
        assert want in bf, repr(obj)
        assert all(n not in bf for n in (want - 1, want + 1) if I64_MIN <= n <= I64_MAX), repr(obj)
        assert bf.key_kind == "int64"
        # The Arrow column of the same value agrees (where Arrow holds it:
        # not timedelta's extremes, beyond 64-bit microseconds).
        if not isinstance(obj, (np.generic, dt.time)) and want not in (I64_MIN, I64_MAX):
            assert bf.contains_many(pa.array([obj])).tolist() == [True], repr(obj)
    for missing in [np.datetime64("NaT"), np.timedelta64("NaT"), pd.NaT]:
        with pytest.raises(TypeError, match="NaT is not a key"):
            BloomFilter(10, 0.01).add(missing)


def test_coarse_numpy_units_and_their_refusals():
    bf = BloomFilter(10, 1e-9)
    bf.add(3 * 60 * 10**6)
    assert bf.contains_many(np.array([3], dtype="m8[m]")).tolist() == [True]
    assert bf.contains_many(np.array([180 * 10**12], dtype="m8[ps]")).tolist() == [True]
    for dtype in ["M8[Y]", "M8[M]", "M8[10s]"]:
        with pytest.raises(TypeError, match="a temporal key needs a fixed unit"):
            bf.contains_many(np.array([1], dtype="i8").view(dtype))


# One file, as pyarrow writes it: the same instants, times and dates in
# every unit. Parquet has no seconds unit: pyarrow stores timestamp[s] as
# TIMESTAMP(MILLIS) and time32[s] as TIME(MILLIS), date64 as DATE, and
# records the Arrow types in its embedded schema, which some readers
# follow and others do not.
INSTANTS = [0, 1, -1, 1_700_000_000, 946_684_799, -2_208_988_800, 4_102_444_800]
TIMES = [0, 1, 3_600, 86_399, 45_005]
DATES = [0, -1, 19_700, -25_567, 47_482]
GROUPS = {
    "instant": ["ts_s", "ts_ms", "ts_us", "ts_ns", "ts_tz"],
    "time": ["t_s", "t_ms", "t_us", "t_ns"],
    "date": ["d32", "d64"],
}


def write_temporal_file(path):
    n = len(INSTANTS)

    def col(values, storage, arrow_type):
        values = (values * n)[:n]
        return pa.array(values, storage).view(arrow_type)

    table = pa.table({
        "ts_s": col(INSTANTS, pa.int64(), pa.timestamp("s")),
        "ts_ms": col([v * 10**3 for v in INSTANTS], pa.int64(), pa.timestamp("ms")),
        "ts_us": col([v * 10**6 for v in INSTANTS], pa.int64(), pa.timestamp("us")),
        "ts_ns": col([v * 10**9 for v in INSTANTS], pa.int64(), pa.timestamp("ns")),
        "ts_tz": col([v * 10**6 for v in INSTANTS], pa.int64(), pa.timestamp("us", tz="Europe/Paris")),
        "t_s": col(TIMES, pa.int32(), pa.time32("s")),
        "t_ms": col([v * 10**3 for v in TIMES], pa.int32(), pa.time32("ms")),
        "t_us": col([v * 10**6 for v in TIMES], pa.int64(), pa.time64("us")),
        "t_ns": col([v * 10**9 for v in TIMES], pa.int64(), pa.time64("ns")),
        "d32": col(DATES, pa.int32(), pa.date32()),
        "d64": col([v * 86_400_000 for v in DATES], pa.int64(), pa.date64()),
    })
    pq.write_table(table, path)


@pytest.fixture(scope="module")
def temporal_file(tmp_path_factory, cli):
    """The file, and a filter the command line built from each column."""
    base = tmp_path_factory.mktemp("temporal")
    path = base / "when.parquet"
    write_temporal_file(path)
    filters = {}
    for columns in GROUPS.values():
        for c in columns:
            out = base / f"{c}.lhbf"
            subprocess.run([cli, "build", "-i", str(path), "--column", c, "--fpr", "0.001", "-o", str(out)],
                           check=True, capture_output=True)
            filters[c] = out
    return path, filters


def readers(path):
    """Each reader's columns of the file: pyarrow, pandas (NumPy-backed and
    Arrow-backed), Polars where installed."""
    out = {"pyarrow": {c: pq.read_table(path).column(c) for g in GROUPS.values() for c in g}}
    frame = pd.read_parquet(path)
    out["pandas"] = {c: frame[c] for c in frame.columns}
    frame = pd.read_parquet(path, dtype_backend="pyarrow")
    out["pandas (pyarrow dtypes)"] = {c: frame[c] for c in frame.columns}
    try:
        import polars as pl
    except ImportError:
        pass
    else:
        frame = pl.read_parquet(path)
        out["polars"] = {c: frame[c] for c in frame.columns}
    return out


def test_one_file_one_key_per_cell_in_every_reader(temporal_file, cli):
    """A filter built on the command line from one column answers True for
    every cell of each column holding the same values, as pyarrow, pandas
    and Polars read them, and the command line's own `filter` keeps every
    row."""
    path, filters = temporal_file
    by_reader = readers(path)
    for columns in GROUPS.values():
        for built in columns:
            bf = BloomFilter.load(filters[built])
            for reader, frame in by_reader.items():
                for c in columns:
                    got = bf.contains_many(frame[c]).tolist()
                    assert all(got), (built, reader, c, str(frame[c].dtype))
            for c in columns:
                run = subprocess.run(
                    [cli, "filter", str(filters[built]), "-i", str(path), "--column", c,
                     "-o", str(path.parent / f"kept-{built}-{c}.parquet")],
                    capture_output=True, text=True,
                )
                assert run.returncode == 0, run.stderr
                kept = pq.read_table(path.parent / f"kept-{built}-{c}.parquet")
                assert kept.num_rows == len(INSTANTS), (built, c)


def test_one_file_one_key_per_cell_in_duckdb(temporal_file):
    """DuckDB's native function over read_parquet (its own units: TIMESTAMP
    is microseconds, TIMESTAMP_NS nanoseconds, TIME microseconds)."""
    duckdb = pytest.importorskip("duckdb")
    import lesshash.duckdb

    path, filters = temporal_file
    con = duckdb.connect(config={"allow_unsigned_extensions": True})
    try:
        for columns in GROUPS.values():
            for built in columns:
                f = f"in_{built}"
                assert lesshash.duckdb.register(con, f, str(filters[built]), native=True) == "native"
                for c in columns:
                    got = con.execute(f"SELECT bool_and({f}({c})), count(*) FROM '{path}'").fetchone()
                    assert got == (True, len(INSTANTS)), (built, c)
    finally:
        con.close()


def test_one_file_one_key_per_cell_in_the_polars_plugin(temporal_file):
    pl = pytest.importorskip("polars")
    lp = pytest.importorskip("lesshash.polars", exc_type=ImportError)
    path, filters = temporal_file
    for columns in GROUPS.values():
        for built in columns:
            got = (
                pl.scan_parquet(path)
                .select([lp.contains(c, str(filters[built])).alias(c) for c in columns])
                .collect()
            )
            assert all(got[c].all() for c in columns), (built, got)


def test_the_datafusion_fixture_is_this_file(tmp_path, repo):
    """datafusion/tests/data/temporal-pyarrow.parquet (DataFusion's test of
    the same rule) holds what `write_temporal_file` writes."""
    fresh = tmp_path / "fresh.parquet"
    write_temporal_file(fresh)
    committed = repo / "datafusion" / "tests" / "data" / "temporal-pyarrow.parquet"
    assert pq.read_table(committed).equals(pq.read_table(fresh))
    assert pq.read_schema(committed).equals(pq.read_schema(fresh))


@pytest.mark.parametrize("native", [True, False], ids=["native", "python"])
def test_duckdb_timestamptz_as_a_key_type(native):
    """`key_type="TIMESTAMPTZ"`: the UTC instant's microseconds, in the
    native function and in the Python one."""
    duckdb = pytest.importorskip("duckdb")
    import lesshash.duckdb

    at = dt.datetime(2024, 3, 1, 12, 30, 5, 123456, tzinfo=dt.timezone.utc)
    bf = BloomFilter(10, 1e-6)
    bf.add(at)
    con = duckdb.connect(config={"allow_unsigned_extensions": True})
    try:
        con.execute("SET TimeZone = 'UTC'")
        got = lesshash.duckdb.register(con, "seen", bf, key_type="TIMESTAMPTZ", native=native)
        assert got == ("native" if native else "python")
        rows = con.execute(
            "SELECT seen(TIMESTAMPTZ '2024-03-01 12:30:05.123456+00'), "
            "seen(TIMESTAMPTZ '2024-03-01 12:30:05.123457+00')"
        ).fetchone()
        assert rows == (True, False)
    finally:
        con.close()
