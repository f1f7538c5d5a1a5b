"""lesshash.spark.SparkBloomFilter against the filters and answers a real
Spark made (tests/data/spark, with its script), and, where pyspark and
Java are installed, Spark reading the filters lesshash writes."""

import json
import os
import pathlib
import shutil

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

from lesshash.spark import SparkBloomFilter  # noqa: E402

DATA = pathlib.Path(__file__).resolve().parents[2] / "tests" / "data" / "spark"
CASES = json.loads((DATA / "cases.json").read_text())["cases"]


def _keys(case, field):
    values = case[field]
    if case["kind"] == "binary":
        return [bytes.fromhex(v) for v in values]
    return values


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_spark_filters_answer_as_spark_and_rebuild_byte_for_byte(case):
    data = (DATA / f"{case['name']}.bin").read_bytes()
    f = SparkBloomFilter.from_bytes(data)
    assert f.bits == case["bits"] and f.seed == case["seed"]
    assert f.to_bytes() == data
    probes = _keys(case, "probes")
    want = [a == "1" for a in case["answers"]]
    assert f.contains_many(probes).tolist() == want
    assert [p in f for p in probes] == want
    keys = _keys(case, "keys")
    batches = [keys]
    if case["kind"] in ("long", "int"):
        batches += [np.array(keys, dtype=np.int64), pa.array(keys, type=pa.int64())]
    if case["kind"] == "int":
        batches.append(pa.array(keys, type=pa.int32()))
    if case["kind"] == "string":
        batches += [pa.array(keys, type=pa.string_view()), pa.array(keys).dictionary_encode()]
    for batch in batches:
        g = SparkBloomFilter.from_bits(f.bits, f.hashes, version=f.version, seed=f.seed)
        assert g.add_many(batch) == len(keys)
        assert g.to_bytes() == data, type(batch)
    one = SparkBloomFilter.from_bits(f.bits, f.hashes, version=f.version, seed=f.seed)
    for k in keys:
        one.add(k)
    assert one == f


def test_nulls_set_algebra_and_errors():
    f = SparkBloomFilter(100, 0.03)
    assert (f.version, f.seed) == (2, 0)
    assert 0.02 < f.expected_fpr(100) < 0.04
    v1 = SparkBloomFilter.from_bits(2**32, 7, version=1)
    assert v1.reachable_bits == 2**31
    assert v1.expected_fpr(448_089_842) > 10 * SparkBloomFilter.from_bits(2**32, 7).expected_fpr(448_089_842)
    assert f.add_many(pa.array([1, None, 3])) == 2
    assert f.contains_many(pa.array([1, None, 2])).tolist() == [True, False, False]
    assert f.contains_many(pa.array([1, None, 2]), output="arrow").to_pylist() == [True, None, False]
    g = SparkBloomFilter.from_bits(f.bits, f.hashes)
    g.add(2)
    u = f | g
    assert 1 in u and 2 in u and 3 in u
    assert (u & g) == g
    h = SparkBloomFilter(100, 0.03)
    h.update(u)
    assert h == u
    h.intersection_update(g)
    assert h == g
    with pytest.raises(ValueError, match="incompatible `bits`"):
        f | SparkBloomFilter(1000, 0.03)
    with pytest.raises(ValueError, match="incompatible `seed`"):
        f.update(SparkBloomFilter.from_bits(f.bits, f.hashes, seed=1))
    with pytest.raises(ValueError, match="version must be 1 or 2"):
        SparkBloomFilter(100, 0.03, version=3)
    with pytest.raises(ValueError, match="seed"):
        SparkBloomFilter.from_bits(640, 3, version=1, seed=5)
    with pytest.raises(ValueError, match="fpp"):
        SparkBloomFilter(100, 1.5)
    with pytest.raises(TypeError, match="an int, str or bytes"):
        f.add(1.5)
    with pytest.raises(ValueError, match="outside a Spark long"):
        f.add(2**64)
    with pytest.raises(ValueError, match="outside a Spark long"):
        f.add(-(2**63) - 1)
    with pytest.raises(ValueError, match="truncated"):
        SparkBloomFilter.from_bytes(f.to_bytes()[:-1])
    with pytest.raises(ValueError, match="`version` out of range"):
        SparkBloomFilter.from_bytes(b"\0\0\0\x07" + f.to_bytes()[4:])
    with pytest.raises(ValueError, match="unsupported key type Float64"):
        f.add_many(pa.array([1.5]))


def _spark():
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return None, "Java is not installed"
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        return None, "pyspark is not installed (pip install pyspark)"
    return SparkSession.builder.master("local[1]").appName("lesshash-test").getOrCreate(), None


def test_spark_reads_the_filters_lesshash_writes():
    spark, why = _spark()
    if spark is None:
        pytest.skip(f"Spark cannot run here: {why}")
    jvm = spark.sparkContext._jvm
    sketch = jvm.org.apache.spark.util.sketch
    rng = np.random.default_rng(5)
    longs = rng.integers(-(2**63), 2**63 - 1, 300, dtype=np.int64)
    words = ["", "a", "ab", "abc", "abcd", "é日本🦀", "x" * 13] + [f"k{i}" for i in range(100)]
    probes = np.concatenate([longs[:50], rng.integers(-(2**63), 2**63 - 1, 500, dtype=np.int64)])
    for version in (1, 2):
        for seed in ((0,) if version == 1 else (0, -123)):
            f = SparkBloomFilter.from_bits(3000, 5, version=version, seed=seed)
            f.add_many(longs)
            f.add_many(words)
            theirs = sketch.BloomFilter.readFrom(bytearray(f.to_bytes()))
            assert theirs.bitSize() == f.bits
            assert [bool(theirs.mightContainLong(int(p))) for p in probes] == f.contains_many(probes).tolist()
            assert all(theirs.mightContainString(w) for w in words)
            out = jvm.java.io.ByteArrayOutputStream()
            theirs.writeTo(out)
            assert bytes(out.toByteArray()) == f.to_bytes()


def test_a_uint64_above_2_63_is_the_long_of_its_bits_on_every_path():
    # One rule for the one-key call, the batch and the command line: an
    # unsigned value is the Spark long with its 64 bits (-1 for 2**64 - 1).
    one, batch = SparkBloomFilter(1000, 0.01), SparkBloomFilter(1000, 0.01)
    big = [2**63, 2**63 + 12345, 2**64 - 1]
    for k in big:
        one.add(k)
    batch.add_many(pa.array(big, pa.uint64()))
    assert one.to_bytes() == batch.to_bytes()
    as_longs = [k - 2**64 for k in big]
    assert all(k in one for k in big) and all(k in one for k in as_longs)
    assert batch.contains_many(pa.array(as_longs, pa.int64())).all()
