"""contains_many and add_many over PyArrow arrays with and without nulls,
NumPy and Arrow answers, in one run (interleaved rounds, medians).

    python python/benchmarks/arrow_nulls.py                 # 1e7 keys, 1e6-key filter
    python python/benchmarks/arrow_nulls.py --keys 1e6 --rounds 5

The filter holds 1e6 int64 keys at 1% (blocked); the queries are --keys
int64 keys, half of them members, as a pyarrow.Int64Array without nulls
and with --nulls (a fraction) of them null, and the same array's values as
a NumPy array (the batch path without Arrow). Each row is the median of
--rounds rounds, one call of each row per round, so drift hits every row
alike. Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pyarrow as pa

from lesshash import BloomFilter

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def keys(start: int, n: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (np.arange(start, start + n, dtype=np.uint64) * GOLDEN).view(np.int64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keys", type=float, default=1e7)
    ap.add_argument("--users", type=float, default=1e6)
    ap.add_argument("--nulls", type=float, default=0.1)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    n, users = int(args.keys), int(args.users)
    bf = BloomFilter(users, 0.01)
    bf.add_many(keys(0, users))
    rng = np.random.default_rng(7)
    values = np.where(rng.random(n) < 0.5, keys(0, n), keys(users, n))
    missing = rng.random(n) < args.nulls
    plain = pa.array(values)
    nullable = pa.array(values, mask=missing)
    rows = {
        "numpy int64 (no Arrow)": lambda: bf.contains_many(values),
        "arrow, no nulls": lambda: bf.contains_many(plain),
        f"arrow, {args.nulls:.0%} nulls": lambda: bf.contains_many(nullable),
        "arrow, no nulls, output=arrow": lambda: bf.contains_many(plain, output="arrow"),
        f"arrow, {args.nulls:.0%} nulls, output=arrow": lambda: bf.contains_many(nullable, output="arrow"),
        "add_many arrow, no nulls": lambda: BloomFilter(users, 0.01).add_many(plain[:users]),
        f"add_many arrow, {args.nulls:.0%} nulls": lambda: BloomFilter(users, 0.01).add_many(nullable[:users]),
    }
    times: dict[str, list[float]] = {name: [] for name in rows}
    for _ in range(args.rounds):
        for name, fn in rows.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    base = statistics.median(times["arrow, no nulls"])
    print(f"# {n:,} keys, a filter of {users:,} at 1%; median of {args.rounds} interleaved rounds")
    print(f"{'call':48} {'ms':>9} {'ns/key':>7} {'x arrow, no nulls':>18}")
    for name, ts in times.items():
        m = statistics.median(ts)
        k = users if name.startswith("add_many") else n
        print(f"{name:48} {m * 1e3:9.2f} {m / k * 1e9:7.2f} {m / base if k == n else float('nan'):18.2f}")


if __name__ == "__main__":
    main()
