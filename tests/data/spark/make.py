"""Makes the Spark golden files: filters built by a real Spark's
org.apache.spark.util.sketch.BloomFilter (both format versions), with
Spark's own mightContain answers for members and non-members.

    python -m venv /tmp/spark && /tmp/spark/bin/pip install pyspark==4.3.0
    /tmp/spark/bin/python tests/data/spark/make.py     # needs Java 17

Writes, beside this script, one `<case>.bin` per filter (Spark's
`writeTo` bytes) and `cases.json`: per case the version, seed, the
number of hash functions and bits Spark reports, the keys put, the keys
probed and Spark's answer for each. tests/spark.rs reads them.
"""

from __future__ import annotations

import json
import pathlib
import random

from pyspark.sql import SparkSession

HERE = pathlib.Path(__file__).resolve().parent


def main() -> None:
    spark = SparkSession.builder.master("local[1]").appName("lesshash-golden").getOrCreate()
    jvm = spark.sparkContext._jvm
    sketch = jvm.org.apache.spark.util.sketch
    version = getattr(sketch, "BloomFilter$Version")
    rng = random.Random(20261128)

    longs = [rng.randrange(-(2**63), 2**63) for _ in range(150)] + [0, 1, -1, 2**31, -(2**31) - 1]
    long_probes = longs[:40] + [rng.randrange(-(2**63), 2**63) for _ in range(400)]
    ints = [rng.randrange(-(2**31), 2**31) for _ in range(120)]
    int_probes = ints[:30] + [rng.randrange(-(2**31), 2**31) for _ in range(300)]
    alphabet = "abcXYZ019-é日本🦀"
    strings = ["".join(rng.choice(alphabet) for _ in range(n % 17)) for n in range(160)]
    string_probes = strings[:40] + [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 17))) for _ in range(300)
    ]
    blobs = [bytes(rng.randrange(256) for _ in range(n % 17)) for n in range(160)]
    blob_probes = blobs[:40] + [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 17))) for _ in range(300)]

    cases = []

    def record(name, filt, kind, keys, probes, answer, ver, seed):
        out = jvm.java.io.ByteArrayOutputStream()
        filt.writeTo(out)
        data = bytes(out.toByteArray())
        (HERE / f"{name}.bin").write_bytes(data)
        enc = (lambda b: b.hex()) if kind == "binary" else (lambda x: x)
        cases.append({
            "name": name,
            "version": ver,
            "seed": seed,
            "kind": kind,
            "bits": filt.bitSize(),
            "keys": [enc(k) for k in keys],
            "probes": [enc(k) for k in probes],
            "answers": "".join("1" if answer(filt, p) else "0" for p in probes),
        })

    for ver, seeds in (("V1", [0]), ("V2", [0, 12345, -7])):
        v = getattr(version, ver)
        for seed in seeds:
            tag = f"{ver.lower()}_seed{seed}".replace("-", "m")
            f = sketch.BloomFilter.create(v, len(longs), 1500, seed)
            for x in longs:
                f.putLong(x)
            record(f"{tag}_long", f, "long", longs, long_probes, lambda f, p: f.mightContainLong(p), ver, seed)
            f = sketch.BloomFilter.create(v, len(ints), 1200, seed)
            for x in ints:
                f.put(jvm.java.lang.Integer(x))
            record(f"{tag}_int", f, "int", ints, int_probes,
                   lambda f, p: f.mightContain(jvm.java.lang.Integer(p)), ver, seed)
            f = sketch.BloomFilter.create(v, len(strings), 1600, seed)
            for s in strings:
                f.putString(s)
            record(f"{tag}_string", f, "string", strings, string_probes,
                   lambda f, p: f.mightContainString(p), ver, seed)
            f = sketch.BloomFilter.create(v, len(blobs), 1600, seed)
            for b in blobs:
                f.putBinary(bytearray(b))
            record(f"{tag}_binary", f, "binary", blobs, blob_probes,
                   lambda f, p: f.mightContainBinary(bytearray(p)), ver, seed)

    # The DataFrame route: df.stat.bloomFilter (Spark's default version).
    df = spark.createDataFrame([(x,) for x in longs], "k long")
    f = df._jdf.stat().bloomFilter("k", len(longs), 0.03)
    record("stat_long", f, "long", longs, long_probes, lambda f, p: f.mightContainLong(p), "default", 0)
    df = spark.createDataFrame([(s,) for s in strings], "k string")
    f = df._jdf.stat().bloomFilter("k", len(strings), 0.03)
    record("stat_string", f, "string", strings, string_probes,
           lambda f, p: f.mightContainString(p), "default", 0)

    (HERE / "cases.json").write_text(json.dumps({"spark": spark.version, "cases": cases}, indent=1) + "\n")
    spark.stop()


if __name__ == "__main__":
    main()
