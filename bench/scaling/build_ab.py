"""Interleaved A/B of ``lesshash.dask.build`` against another version of
the module (a file), on one cluster per worker count, over scale.py's
dataset.

    python3 bench/scaling/build_ab.py OTHER_DASK_PY --keys 1e8 --files 64 \\
        --workers 2 4 8 --rounds 5

OTHER_DASK_PY is copied beside the installed module as
``lesshash.dask_other`` (so both run in the same worker processes); each
round times one build with each, alternating which goes first, and
checks both against one single-process filter. Prints the medians and
the ratio per worker count.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python", "benchmarks"))
import scale  # noqa: E402  (the dataset and its keys)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("other")
    ap.add_argument("--keys", type=float, default=1e8)
    ap.add_argument("--files", type=int, default=64)
    ap.add_argument("--workers", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "lesshash-scale"))
    args = ap.parse_args()
    n = int(args.keys)

    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    import lesshash
    import lesshash.dask as this

    shutil.copy(args.other, os.path.join(os.path.dirname(this.__file__), "dask_other.py"))
    import lesshash.dask_other as other

    data = os.path.join(args.dir, "data")
    scale.write_dataset(data, n, args.files)
    expected = lesshash.BloomFilter(n, scale.FPR)
    expected.add_many(scale.keys_of(0, n))
    print(f"# {n:,} keys in {args.files} files, {args.threads} threads per worker, "
          f"{args.rounds} rounds; {os.cpu_count()} CPUs")
    print(f"{'workers':>7} {'this s':>8} {'other s':>8} {'this/other':>10}   all runs (this | other)")
    for w in args.workers:
        with LocalCluster(n_workers=w, threads_per_worker=args.threads, processes=True,
                          dashboard_address=None, memory_limit=0) as cluster, \
                Client(cluster) as client:
            col = dd.read_parquet(data)["k"]
            col.map_partitions(len).sum().compute()  # untimed: imports, opens
            times = {"this": [], "other": []}
            for r in range(args.rounds):
                order = [("this", this), ("other", other)]
                if r % 2:
                    order.reverse()
                for name, mod in order:
                    t = time.perf_counter()
                    bf = mod.build(col, n, scale.FPR)
                    times[name].append(time.perf_counter() - t)
                    assert bf == expected, f"{name}: differs from the single-process build"
                    del bf
        a, b = statistics.median(times["this"]), statistics.median(times["other"])
        print(f"{w:7d} {a:8.3f} {b:8.3f} {a / b:10.2f}   "
              + " ".join(f"{x:.2f}" for x in times["this"]) + " | "
              + " ".join(f"{x:.2f}" for x in times["other"]), flush=True)


if __name__ == "__main__":
    main()
