"""lesshash: Bloom filters that hash once, for NumPy, Arrow, pandas and Dask.

One XXH3-128 hash per key gives all k probe positions (Kirsch and
Mitzenmacher, "Less Hashing, Same Performance: Building a Better Bloom
Filter", ESA 2006), in a cache-line-blocked bit array by default. The
filters are the Rust crate's: the same key answers the same here, in Rust
and on the ``lesshash`` command line, and files move between them.

>>> from lesshash import BloomFilter
>>> bf = BloomFilter(1_000_000, 0.01)
>>> bf.add_many([1, 2, 3])
3
>>> 2 in bf, bf.contains_many([2, 4]).tolist()
(True, [True, False])

See docs/python.md in the repository for NumPy, PyArrow, pandas and Dask
examples; ``lesshash.dask`` builds and applies filters across a cluster,
``lesshash.duckdb`` makes one a SQL function, ``lesshash.polars`` a Polars
expression, ``lesshash.parquet`` reads the Bloom filters of Parquet files
(``ParquetFilter``), and ``lesshash.spark`` reads and writes Spark's
(``SparkBloomFilter``).
"""

from ._lesshash import (
    DEFAULT_SEED,
    KERNEL,
    BloomFilter,
    CountMinSketch,
    SparkBloomFilter,
    ParquetFilter,
    random_seed,
)

__all__ = [
    "BloomFilter",
    "CountMinSketch",
    "SparkBloomFilter",
    "ParquetFilter",
    "DEFAULT_SEED",
    "KERNEL",
    "random_seed",
]

#: The old name of :class:`ParquetFilter` (``layout="split-block"`` is
#: lesshash's own split-block layout, a different thing).
SplitBlockFilter = ParquetFilter

__version__ = "0.1.0"
