"""Spark's Bloom filters, bit for bit: ``SparkBloomFilter``.

Spark's own filter (``org.apache.spark.util.sketch.BloomFilter``: made by
``df.stat.bloomFilter(col, n, fpp)``, ``BloomFilter.create``, Spark SQL's
``bloom_filter_agg``) in both of its format versions::

    from lesshash.spark import SparkBloomFilter

    f = SparkBloomFilter.from_bytes(data)      # what Spark's writeTo wrote
    f.contains_many(ids)                       # Spark's mightContain of each
    g = SparkBloomFilter(1_000_000, 0.03)      # sized as Spark sizes it (version 2)
    g.add_many(ids)
    data = g.to_bytes()                        # Spark's BloomFilter.readFrom reads it

Keys are Spark's: an ``int`` is a long (Spark widens bytes, shorts and
ints), a ``str`` its UTF-8 bytes, ``bytes`` themselves; batches are Arrow
arrays or anything ``pyarrow.array`` converts. docs/python.md, "Spark's
Bloom filters".
"""

from ._lesshash import SparkBloomFilter

__all__ = ["SparkBloomFilter"]
