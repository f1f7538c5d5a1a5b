"""Python Bloom filters side by side: lesshash, rbloom, fastbloom-rs and a
Python set, building and querying at 1e6 and 1e7 keys (int64 NumPy arrays
and strings), with bits per key and the measured false-positive rate in the
same table; and Dask on a 2-worker LocalCluster: a build against one
process, and build and isin(...).sum() over a Parquet dataset against the
cluster's own read of the same column.

    pip install "./python[bench,dask]"
    python python/benchmarks/bench.py            # all (on an otherwise idle machine)
    python python/benchmarks/bench.py --sizes 1e6 --repeat 3           # quicker
    python python/benchmarks/bench.py --dask-only                      # the Dask rows

Every figure is the median of --repeat timed runs (wall clock,
time.perf_counter), inputs prepared beforehand in the form each library
takes (a NumPy array for lesshash's batch calls, a list for the others).
Queries are keys never inserted, so every hit is a false positive.
"""

from __future__ import annotations

import argparse
import gc
import platform
import statistics
import sys
import time

import numpy as np

FPR = 0.01
GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplying by it is a bijection


def int_keys(start: int, n: int) -> np.ndarray:
    """n distinct int64 keys, disjoint for disjoint ranges, well spread."""
    with np.errstate(over="ignore"):
        return (np.arange(start, start + n, dtype=np.uint64) * GOLDEN).view(np.int64)


def str_keys(start: int, n: int) -> list[str]:
    return [f"user:{k:x}" for k in int_keys(start, n).view(np.uint64).tolist()]


def median_time(fn, repeat: int):
    """Median wall time of `repeat` calls; the garbage collector runs before
    them, not between (a full collection walks every object and evicts
    the caches the next call would find warm in a pipeline)."""
    times, result = [], None
    gc.collect()
    gc.disable()
    try:
        for _ in range(repeat):
            t = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - t)
    finally:
        gc.enable()
    return statistics.median(times), result


def rows_for(kind: str, n: int, repeat: int):
    import fastbloom_rs
    import rbloom

    import lesshash

    if kind == "int64":
        members_np, queries_np = int_keys(0, n), int_keys(n, n)
        members, queries = members_np.tolist(), queries_np.tolist()
    else:
        members, queries = str_keys(0, n), str_keys(n, n)
        import pyarrow as pa

        members_np, queries_np = pa.array(members, pa.string()), pa.array(queries, pa.string())
    rows = []

    def lesshash_build():
        bf = lesshash.BloomFilter(n, FPR)
        bf.add_many(members_np)
        return bf

    t_build, bf = median_time(lesshash_build, repeat)
    t_query, hits = median_time(lambda: bf.contains_many(queries_np), repeat)
    assert bf.contains_many(members_np).all()
    arrow = "" if kind == "int64" else " (PyArrow)"
    rows.append(("lesshash add_many / contains_many" + arrow, t_build, t_query,
                 bf.bits / n, hits.mean()))

    def lesshash_list_build():
        b = lesshash.BloomFilter(n, FPR)
        b.add_many(members)
        return b

    t_build, bf2 = median_time(lesshash_list_build, repeat)
    t_query, hits = median_time(lambda: bf2.contains_many(queries), repeat)
    rows.append(("lesshash add_many / contains_many (list)", t_build, t_query,
                 bf2.bits / n, hits.mean()))

    def lesshash_single_query():
        return sum(1 for k in queries if k in bf)

    t_query, fp = median_time(lesshash_single_query, max(1, repeat // 2))
    rows.append(("lesshash `in`, one key at a time", float("nan"), t_query,
                 bf.bits / n, fp / n))

    def rbloom_build():
        b = rbloom.Bloom(n, FPR)
        b.update(members)
        return b

    t_build, rb = median_time(rbloom_build, repeat)

    def rbloom_query():
        return sum(1 for k in queries if k in rb)

    t_query, fp = median_time(rbloom_query, max(1, repeat // 2))
    assert all(k in rb for k in members[:10000])
    rbloom_fpr = fp / n
    rows.append(("rbloom update / `in` one key at a time", t_build, t_query,
                 rb.size_in_bits / n, rbloom_fpr))

    def rbloom_add_each():
        b = rbloom.Bloom(n, FPR)
        for k in members:
            b.add(k)
        return b

    t_build, _ = median_time(rbloom_add_each, max(1, repeat // 2))
    rows.append(("rbloom `add` / `in`, one key at a time", t_build, t_query,
                 rb.size_in_bits / n, rbloom_fpr))

    # lesshash sized for rbloom's measured rate, where that is below the
    # target: the batch calls at an equal or better rate than rbloom's.
    if rbloom_fpr < FPR:
        def matched_build():
            b = lesshash.BloomFilter(n, rbloom_fpr)
            b.add_many(members_np)
            return b

        t_build, bm = median_time(matched_build, repeat)
        t_query, hits = median_time(lambda: bm.contains_many(queries_np), repeat)
        rows.append((f"lesshash add_many / contains_many, sized for fpr {rbloom_fpr:.3g}"
                     + arrow, t_build, t_query, bm.bits / n, hits.mean()))

    add, contains = (
        ("add_int_batch", "contains_int_batch") if kind == "int64"
        else ("add_str_batch", "contains_str_batch")
    )

    def fastbloom_build():
        f = fastbloom_rs.FilterBuilder(n, FPR).build_bloom_filter()
        getattr(f, add)(members)
        return f

    t_build, fb = median_time(fastbloom_build, repeat)
    t_query, hits = median_time(lambda: getattr(fb, contains)(queries), repeat)
    rows.append(("fastbloom-rs add/contains_*_batch", t_build, t_query,
                 len(fb.get_bytes()) * 8 / n, sum(hits) / n))

    t_build, s = median_time(lambda: set(members), repeat)
    t_query, fp = median_time(lambda: sum(1 for k in queries if k in s), max(1, repeat // 2))
    rows.append(("Python set", t_build, t_query, sys.getsizeof(s) * 8 / n, fp / n))
    return rows


def dask_row(n: int, repeat: int, partitions: int = 16):
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client, LocalCluster, wait

    import lesshash
    import lesshash.dask as ld

    keys = int_keys(0, n)

    def single():
        bf = lesshash.BloomFilter(n, FPR)
        bf.add_many(keys)
        return bf

    # One process: the keys in memory, one batch call.
    single()
    t_single, ref = median_time(single, repeat)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster):
        # The keys already on the workers, as after a read_parquet: each
        # partition made where it lives (from_array would put the whole
        # array in the graph, a large graph sent to the scheduler).
        chunk = -(-n // partitions)
        starts = list(range(0, n, chunk))
        series = dd.from_map(
            lambda start: pd.Series(int_keys(start, min(chunk, n - start)), name="key"),
            starts,
            meta=pd.Series([], dtype=np.int64, name="key"),
            enforce_metadata=False,
        ).persist()
        wait(series)
        ld.build(series, n, FPR)  # warm-up: workers import lesshash
        times = []
        gc.collect()
        for _ in range(repeat):
            t = time.perf_counter()
            bf = ld.build(series, n, FPR)
            times.append(time.perf_counter() - t)
    assert bf == ref and bf.to_bytes() == ref.to_bytes(), "Dask build differs"
    return t_single, times


def _read_baseline_partition(part):
    """The baseline's per-partition function: a boolean Series of the
    partition, as isin makes, from one vectorised NumPy pass."""
    import pandas as pd

    return pd.Series(part.to_numpy() < 0, index=part.index, name=part.name, copy=False)


def dask_parquet_rows(n: int, repeat: int, files: int = 40):
    """build and isin(...).sum() over n int64 keys in `files` Parquet files
    on a 2-worker LocalCluster, against the cluster's own read of the column
    with a per-partition function and a sum. The three run in turn in each
    round (so that drift in the machine's load hits all of them alike);
    every warning Dask raises is recorded ("Sending large graph ..." is the
    sign of a filter travelling inside the task graph)."""
    import shutil
    import tempfile
    import warnings

    import dask.dataframe as dd
    import pyarrow as pa
    import pyarrow.parquet as pq
    from distributed import Client, LocalCluster

    import lesshash
    import lesshash.dask as ld

    keys = int_keys(0, n)
    ref = lesshash.BloomFilter(n, FPR)
    ref.add_many(keys)
    root = tempfile.mkdtemp(prefix="lesshash-bench-")
    try:
        per = -(-n // files)
        for i in range(files):
            chunk = keys[i * per:(i + 1) * per]
            pq.write_table(pa.table({"key": chunk}), f"{root}/part-{i:03d}.parquet")

        def column():
            return dd.read_parquet(root, columns=["key"])["key"]

        def read():
            return column().map_partitions(_read_baseline_partition, meta=("key", bool)).sum().compute()

        def build():
            return ld.build(column(), n, FPR)

        def isin():
            return ld.isin(column(), ref).sum().compute()

        # The same keys under another seed: another key on the cluster, so
        # that the scattered-once row cannot lend its copies to isin().
        other = lesshash.BloomFilter(n, FPR, seed=7)
        other.add_many(keys)
        scattered = []

        def isin_scattered():
            return ld.isin(column(), scattered[0]).sum().compute()

        cases = {"read + per-partition function + sum (baseline)": read,
                 "lesshash.dask.build": build,
                 "lesshash.dask.isin(...).sum(), the filter sent by the call": isin,
                 "lesshash.dask.isin(...).sum(), with ld.scatter(filter) once before": isin_scattered}
        times = {name: [] for name in cases}
        caught = []
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            scattered.append(ld.scatter(other))
            sends = []
            real_scatter = client.scatter
            client.scatter = lambda *a, **k: sends.append(1) or real_scatter(*a, **k)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                for fn in cases.values():  # warm-up: imports, file metadata
                    fn()
                gc.collect()
                for _ in range(repeat):
                    for name, fn in cases.items():
                        t = time.perf_counter()
                        result = fn()
                        times[name].append(time.perf_counter() - t)
                        if fn is build:
                            assert result.to_bytes() == ref.to_bytes(), "Dask build differs"
                        elif fn in (isin, isin_scattered):
                            assert result == n, "isin missed members"
            partitions = column().npartitions
    finally:
        shutil.rmtree(root, ignore_errors=True)
    # Filter sends by isin(): one per call expected (its collection is gone
    # before the next call), none by the scattered-once row.
    return times, [str(w.message) for w in caught], partitions, len(sends)


def fmt_rate(x: float) -> str:
    return "" if x != x else f"{x:.3g}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e6,1e7")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--kinds", default="int64,str")
    ap.add_argument("--dask-only", action="store_true")
    ap.add_argument("--no-dask", action="store_true")
    args = ap.parse_args()
    import lesshash

    peers = ""
    if not args.dask_only:  # the peers are needed for the tables only
        import fastbloom_rs  # noqa: F401
        import rbloom

        peers = f", rbloom {getattr(rbloom, '__version__', '?')}"
    print(f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"lesshash kernel {lesshash.KERNEL}{peers}, fpr target {FPR}")
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    if not args.dask_only:
        for kind in args.kinds.split(","):
            for n in sizes:
                rows = rows_for(kind, n, args.repeat)
                print(f"\n## {kind} keys, n = {n:.0e}\n")
                print("| library / call | build (M keys/s) | query (M keys/s) | bits/key | measured FPR |")
                print("|---|---:|---:|---:|---:|")
                for name, tb, tq, bpk, fpr in rows:
                    b = "" if tb != tb else f"{n / tb / 1e6:.1f}"
                    print(f"| {name} | {b} | {n / tq / 1e6:.1f} | {bpk:.2f} | {fmt_rate(fpr)} |")
                sys.stdout.flush()
    if not args.no_dask:
        n = 10_000_000
        t_single, times = dask_row(n, max(args.repeat, 7))
        med = statistics.median(times)
        print("\n## Dask build, n = 1e7 int64 keys, 16 partitions, 2 worker processes (max_filters default: 2)\n")
        print(f"single process (median): {t_single:.3f} s; LocalCluster median {med:.3f} s "
              f"({med / t_single:.2f}x), min {min(times):.3f}, max {max(times):.3f} "
              f"over {len(times)} runs; bit-identical: yes")
        times, caught, partitions, sends = dask_parquet_rows(n, max(args.repeat, 7))
        print(f"\n## Dask over Parquet, n = 1e7 int64 keys in 40 files ({partitions} partitions), "
              "2 worker processes, 1 thread each\n")
        print("| what | median (s) | min | max | median / baseline |")
        print("|---|---:|---:|---:|---:|")
        base = statistics.median(next(iter(times.values())))
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"| {name} | {med:.3f} | {min(ts):.3f} | {max(ts):.3f} | {med / base:.2f}x |")
        large = [w for w in caught if "large graph" in w]
        print(f"\n{len(ts)} rounds (+1 warm-up); filter sends by isin: {sends}; "
              f"large-graph warnings: {len(large)}"
              + "".join(f"\n  {w}" for w in dict.fromkeys(large))
              + "".join(f"\nother warning: {w}" for w in dict.fromkeys(caught) if w not in large))


if __name__ == "__main__":
    main()
