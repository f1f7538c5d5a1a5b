"""Batch throughput on int64 NumPy arrays: add_many and contains_many.

    python python/benchmarks/numpy_batch.py LABEL

1e6 random int64 keys into a filter for 1e6 keys at 1%, then 1e6 other
keys queried; the median of 9 repetitions, in million keys per second.
Run it on an otherwise idle machine (docs/benchmarks.md, "Method"; figures in
docs/bench-notes/2026-11-25.md, "Hash engine, index lanes and kernel layer").
"""

import statistics
import sys
import time

import numpy as np

from lesshash import BloomFilter

N = 1_000_000


def main() -> None:
    label = sys.argv[1] if len(sys.argv) > 1 else "lesshash"
    keys = np.random.default_rng(7).integers(-(2**62), 2**62, size=N, dtype=np.int64)
    misses = np.random.default_rng(8).integers(-(2**62), 2**62, size=N, dtype=np.int64)
    adds, looks = [], []
    for _ in range(9):
        bf = BloomFilter(expected_items=N, fpr=0.01)
        t = time.perf_counter()
        bf.add_many(keys)
        adds.append(time.perf_counter() - t)
        t = time.perf_counter()
        found = bf.contains_many(misses)
        looks.append(time.perf_counter() - t)
    print(
        f"{label}: add_many {N / statistics.median(adds) / 1e6:.1f} M keys/s, "
        f"contains_many {N / statistics.median(looks) / 1e6:.1f} M keys/s "
        f"(false positives {found.mean():.4f})"
    )


if __name__ == "__main__":
    main()
