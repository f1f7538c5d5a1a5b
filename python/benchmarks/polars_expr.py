"""The Polars expression against Polars' own filters, in one run
(interleaved rounds, medians); and, with --streaming, the peak memory of a
streaming Parquet pipeline with and without the filter step.

    python python/benchmarks/polars_expr.py                  # 1e7 rows, 1e6-key filter
    python python/benchmarks/polars_expr.py --rows 1e6 --rounds 5
    python python/benchmarks/polars_expr.py --streaming 1e8 --dir /tmp/lh-stream

Needs lesshash and lesshash-polars installed (pip install ./python ./polars).

Rows (a DataFrame of --rows int64 keys, half of them members of a filter
of --users keys at 1%, and a second int64 column):
  df.filter(pl.col("k") >= 0)                  the cheapest filter Polars has (the floor)
  df.filter(pl.col("k").lesshash.contains(f))  the plugin, f a BloomFilter object
  ... contains("users.lhbf")                   the plugin, f a file (mapped once)
  df.filter(pl.col("k").is_in(users))          Polars' exact membership
  map_batches + contains_many                  the lambda a user writes without the plugin
  df.lazy()...collect(engine="streaming")      the plugin, the lambda and the floor in the
                                               streaming engine (batch by batch)
Each row is the median of --rounds rounds, one call of each per round, the
order rotated by one row each round (use a multiple of 8 rounds).

--streaming N writes N rows of (k, v) int64 to a Parquet dataset under
--dir (kept for reruns), then runs scan_parquet(...).filter(...).sink_parquet
in a child process per variant, with and without the filter step, and
reports each child's peak RSS (ru_maxrss) and time. Run it on an otherwise
idle machine.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

import lesshash
import lesshash.polars  # noqa: F401  (the namespace)

GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def keys(start: int, n: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (np.arange(start, start + n, dtype=np.uint64) * GOLDEN).view(np.int64)


def in_memory(args: argparse.Namespace) -> None:
    n, users = int(args.rows), int(args.users)
    user_keys = keys(0, users)
    bf = lesshash.BloomFilter(users, 0.01)
    bf.add_many(user_keys)
    tmp = tempfile.mkdtemp(prefix="lh-polars-")
    path = os.path.join(tmp, "users.lhbf")
    bf.save(path)
    rng = np.random.default_rng(7)
    k = np.where(rng.random(n) < 0.5, user_keys[rng.integers(0, users, n)], keys(users, n))
    df = pl.DataFrame({"k": k, "v": np.arange(n)})
    users_list = pl.Series(user_keys).implode()
    lambda_expr = pl.col("k").map_batches(
        lambda s: pl.Series(bf.contains_many(s)), return_dtype=pl.Boolean
    )
    rows = {
        'filter(col("k") >= 0)': lambda: df.filter(pl.col("k") >= 0),
        "filter(lesshash.contains(object))": lambda: df.filter(pl.col("k").lesshash.contains(bf)),
        "filter(lesshash.contains(path))": lambda: df.filter(pl.col("k").lesshash.contains(path)),
        'filter(col("k").is_in(users))': lambda: df.filter(pl.col("k").is_in(users_list)),
        "filter(map_batches + contains_many)": lambda: df.filter(lambda_expr),
        "lazy, streaming, lesshash.contains(path)": lambda: df.lazy()
        .filter(pl.col("k").lesshash.contains(path))
        .collect(engine="streaming"),
        "lazy, streaming, map_batches + contains_many": lambda: df.lazy()
        .filter(lambda_expr)
        .collect(engine="streaming"),
        'lazy, streaming, col("k") >= 0': lambda: df.lazy()
        .filter(pl.col("k") >= 0)
        .collect(engine="streaming"),
    }
    # Every row keeps the same rows where it should (a sanity check, once).
    kept = {name: fn().height for name, fn in rows.items()}
    times: dict[str, list[float]] = {name: [] for name in rows}
    # Each round starts one row later (a rotation): a row run right after
    # another pays for what that one left (freed pages, caches); rotated,
    # every row follows every other alike.
    names = list(rows)
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            t = time.perf_counter()
            rows[name]()
            times[name].append(time.perf_counter() - t)
    floor = statistics.median(times['filter(col("k") >= 0)'])
    mine = statistics.median(times["filter(lesshash.contains(object))"])
    print(
        f"# {n:,} rows, a filter of {users:,} keys at 1%; polars {pl.__version__}, "
        f"{pl.thread_pool_size()} threads; median of {args.rounds} interleaved rounds"
    )
    print(f"{'call':44} {'ms':>9} {'x floor':>8} {'x contains(object)':>19} {'rows kept':>10}")
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:44} {m * 1e3:9.1f} {m / floor:8.2f} {m / mine:19.2f} {kept[name]:10,}")


CHILD = """
import resource, sys, time
import polars as pl
import lesshash.polars
src, out, path = sys.argv[1:4]
lf = pl.scan_parquet(src + "/*.parquet")
if path != "-":
    lf = lf.filter(pl.col("k").lesshash.contains(path))
t = time.perf_counter()
lf.sink_parquet(out)
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def streaming(args: argparse.Namespace) -> None:
    n, users = int(args.streaming), int(args.users)
    root = Path(args.dir)
    src = root / f"src-{n}"
    if not src.exists():
        src.mkdir(parents=True)
        rng = np.random.default_rng(7)
        part = 10_000_000
        for i, start in enumerate(range(0, n, part)):
            m = min(part, n - start)
            members = keys(0, users)[rng.integers(0, users, m)]
            k = np.where(rng.random(m) < 0.5, members, keys(users + start, m))
            pl.DataFrame({"k": k, "v": np.arange(start, start + m)}).write_parquet(
                src / f"part-{i:03}.parquet", row_group_size=1_000_000
            )
    path = root / "users.lhbf"
    bf = lesshash.BloomFilter(users, 0.01)
    bf.add_many(keys(0, users))
    bf.save(path)
    out = root / "out.parquet"
    variants = {"without the filter step": "-", "with lesshash.contains(path)": str(path)}
    results: dict[str, list[tuple[float, int]]] = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, p in variants.items():
            got = subprocess.run(
                [sys.executable, "-c", CHILD, str(src), str(out), p],
                check=True, capture_output=True, text=True,
            ).stdout.split()
            results[name].append((float(got[0]), int(got[1])))
    print(f"# streaming: {n:,} rows of (k, v) int64 in Parquet, scan -> filter -> sink_parquet; "
          f"median of {args.rounds} rounds, a child process each")
    print(f"{'pipeline':32} {'s':>7} {'peak RSS MiB':>13}  (each round's RSS)")
    base = None
    for name, rs in results.items():
        s = statistics.median(r[0] for r in rs)
        rss = statistics.median(r[1] for r in rs) / 1024
        base = base or rss
        each = ", ".join(f"{r[1] / 1024:.0f}" for r in rs)
        print(f"{name:32} {s:7.2f} {rss:13.1f}  ({each}; {rss / base:.2f}x the RSS without)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--users", type=float, default=1e6)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--streaming", type=float, default=0, help="rows of the Parquet dataset")
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "lesshash-polars-stream"))
    args = ap.parse_args()
    if args.streaming:
        streaming(args)
    else:
        in_memory(args)


if __name__ == "__main__":
    main()
