"""The Dask helpers at cluster scale, beside the cluster's own read of the
same column and beside one process doing the same work.

    pip install "./python[dask]"
    python python/benchmarks/scale.py --keys 1e8 --files 32 --workers 2 --threads 2
    python python/benchmarks/scale.py --keys 1e8 --files 128 --workers 8 --threads 2

Writes ``--keys`` distinct int64 keys as ``--files`` Parquet files (a key
column ``k`` and a value column ``v``) under ``--dir`` (kept between runs:
it is rewritten only when its key count or file count differs), starts a
``LocalCluster`` of ``--workers`` processes with ``--threads`` threads each,
and prints, each the median of ``--repeat`` runs:

* ``read``: ``read_parquet(d)["k"]`` summed on the cluster (the cost of
  reading the keys, which every helper pays too);
* ``build``, ``isin`` with the filter object, with a scattered future and
  with the filter file's path, and ``filter_frame``, each beside the read;
* the same keys in this process: ``add_many`` and ``contains_many`` on
  every core (the work the cluster splits), and the per-filter costs of
  moving a filter between processes (create, serialise, pickle, copy,
  union);
* ``--profile``: the cluster's task stream of one ``build`` and one
  ``isin``, summed per task kind and per activity (compute, transfer,
  deserialize), which shows where the time goes;
* peak memory of each worker process during ``build`` (its ``rss``,
  sampled by the worker's own monitor), against the filter's size.

Run it on an otherwise idle machine: every figure is wall time.
"""

from __future__ import annotations

import argparse
import collections
import gc
import os
import pickle
import resource
import statistics
import sys
import tempfile
import time

import numpy as np

GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # odd: multiplying by it is a bijection
FPR = 0.01


def keys_of(start: int, n: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        return (np.arange(start, start + n, dtype=np.uint64) * GOLDEN).view(np.int64)


def write_dataset(root: str, n: int, files: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    stamp = os.path.join(root, "_keys")
    want = f"{n} {files}"
    if os.path.exists(stamp) and open(stamp).read() == want:
        return
    os.makedirs(root, exist_ok=True)
    for name in os.listdir(root):
        os.remove(os.path.join(root, name))
    per = -(-n // files)
    for i in range(files):
        lo, hi = i * per, min(n, (i + 1) * per)
        k = keys_of(lo, hi - lo)
        pq.write_table(
            pa.table({"k": k, "v": np.arange(lo, hi, dtype=np.int64)}),
            os.path.join(root, f"part-{i:04d}.parquet"),
            compression="none",
        )
    with open(stamp, "w") as f:
        f.write(want)


def median(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def _sum_float(s):
    return s.astype("float64").sum()


def single_process(n: int, repeat: int) -> list[tuple[str, float]]:
    """The same keys in this process, and what moving one filter costs."""
    from lesshash import BloomFilter

    keys = keys_of(0, n)
    rows = []
    t, _ = median(lambda: BloomFilter(n, FPR), repeat)
    rows.append(("create an empty filter", t))
    bf = BloomFilter(n, FPR)
    t, _ = median(lambda: bf.add_many(keys), repeat)
    rows.append(("add_many, all keys (every core)", t))
    t, _ = median(lambda: bf.contains_many(keys), repeat)
    rows.append(("contains_many, all keys (every core)", t))
    t, data = median(bf.to_bytes, repeat)
    rows.append(("to_bytes (copy + checksum)", t))
    t, _ = median(lambda: BloomFilter.from_bytes(data), repeat)
    rows.append(("from_bytes (checksum + copy)", t))
    data = None
    if hasattr(bf, "_frames"):  # the frames lesshash.dask sends
        t, frames = median(bf._frames, repeat)
        rows.append(("_frames (header + lent bits)", t))
        t, _ = median(lambda: BloomFilter._from_frames(*frames), repeat)
        rows.append(("_from_frames (header check + copy)", t))
        frames = None
    t, _ = median(lambda: pickle.loads(pickle.dumps(bf, protocol=5)), repeat)
    rows.append(("pickle round trip (protocol 5)", t))
    try:
        from distributed.protocol import deserialize, serialize

        t, _ = median(lambda: deserialize(*serialize(bf, serializers=["dask"])), repeat)
        rows.append(("Dask serialize + deserialize", t))
    except ImportError:
        pass
    t, other = median(bf.copy, repeat)
    rows.append(("copy", t))

    def ior():
        nonlocal other
        other |= bf

    t, _ = median(ior, repeat)
    rows.append(("|= (in place)", t))
    rows.append(("(filter size, MB)", bf.nbytes / 1e6))
    return rows


def task_profile(client, run) -> list[tuple[str, str, float, int]]:
    """Seconds per (task kind, activity) over the task stream of ``run()``,
    summed over the workers' threads: compute, transfer, deserialize."""
    from distributed import get_task_stream
    from distributed.utils import key_split

    with get_task_stream(client) as ts:
        run()
    acc: dict = collections.defaultdict(float)
    count: dict = collections.Counter()
    for task in ts.data:
        prefix = key_split(task["key"])
        for ss in task["startstops"]:
            acc[(prefix, ss["action"])] += ss["stop"] - ss["start"]
            count[(prefix, ss["action"])] += 1
    return sorted(((p, a, s, count[(p, a)]) for (p, a), s in acc.items()), key=lambda r: -r[2])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keys", type=float, default=1e8)
    ap.add_argument("--files", type=int, default=32)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "lesshash-scale"))
    ap.add_argument("--profile", action="store_true", help="print the task streams too")
    ap.add_argument("--skip-single", action="store_true", help="no single-process rows")
    args = ap.parse_args()
    n = int(args.keys)

    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    import lesshash
    import lesshash.dask as ld

    print(f"# lesshash {getattr(lesshash, '__version__', '?')}, Python {sys.version.split()[0]}, "
          f"dask {dask.__version__}, {os.cpu_count()} CPUs")
    print(f"# {n:,} keys in {args.files} files; {args.workers} workers x {args.threads} threads; "
          f"median of {args.repeat}")
    data_dir = os.path.join(args.dir, "data")
    write_dataset(data_dir, n, args.files)
    filter_path = os.path.join(args.dir, "filter.lhbf")

    with LocalCluster(n_workers=args.workers, threads_per_worker=args.threads, processes=True,
                      dashboard_address=None, memory_limit=0) as cluster, Client(cluster) as client:
        df = dd.read_parquet(data_dir)

        def read():
            return df["k"].map_partitions(_sum_float).sum().compute()

        def build():
            return ld.build(df["k"], expected_items=n, fpr=FPR)

        # Untimed: the workers' first imports, file opens and metadata
        # reads would otherwise land in the first figure (the read's).
        read()
        t_read, _ = median(read, args.repeat)
        rows = [("read", t_read)]
        t, bf = median(build, args.repeat)
        rows.append(("build", t))
        # Peak memory of each worker process so far: the reads and builds
        # (ru_maxrss, in KiB on Linux).
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
        bf.save(filter_path)
        expected = lesshash.BloomFilter(n, FPR)
        expected.add_many(keys_of(0, n))
        assert bf == expected, "the Dask build differs from the single-process build"
        del expected

        def isin_obj():
            return ld.isin(df["k"], bf).sum().compute()

        def isin_path():
            return ld.isin(df["k"], filter_path).sum().compute()

        future = ld.scatter(bf)

        def isin_future():
            return ld.isin(df["k"], future).sum().compute()

        def frame():
            return len(ld.filter_frame(df, "k", bf))

        def by_hand():
            # What filter_frame saves the user writing: the mask from isin,
            # then the rows it selects.
            return len(df[ld.isin(df["k"], bf)])

        def read_frame():
            # Every column read (filter_frame returns whole rows).
            return df.map_partitions(len).sum().compute()

        t, rows_read = median(read_frame, args.repeat)
        assert rows_read == n
        rows.append(("read, every column", t))
        for name, fn in [("isin, filter object", isin_obj), ("isin, scattered future", isin_future),
                         ("isin, path", isin_path), ("filter_frame, filter object", frame),
                         ("df[isin(...)] by hand, filter object", by_hand)]:
            t, hits = median(fn, args.repeat)
            assert hits == n, f"{name}: {hits} of {n} members found"
            rows.append((name, t))

        profiles = []
        if args.profile:
            profiles = [("build", task_profile(client, build)),
                        ("isin, filter object", task_profile(client, isin_obj))]

    # After the cluster is gone: this process's arrays and filters would
    # otherwise sit beside the workers for the whole run.
    single = [] if args.skip_single else single_process(n, args.repeat)

    print(f"\n{'cluster':40} {'s':>8} {'x read':>8}")
    for name, t in rows:
        print(f"{name:40} {t:8.3f} {t / t_read:8.2f}")
    mb = bf.nbytes / 1e6
    print(f"\npeak worker rss over the reads and builds (MB; filter {mb:.0f} MB): "
          + ", ".join(f"{v / 1e6:.0f}" for v in peaks.values()))
    if single:
        print(f"\n{'this process, the same keys':40} {'s':>8} {'x read':>8}")
        for name, t in single:
            if name.startswith("("):
                print(f"{name:40} {t:8.1f}")
            else:
                print(f"{name:40} {t:8.3f} {t / t_read:8.2f}")
    for title, prof in profiles:
        print(f"\ntask stream of one {title} (seconds summed over worker threads):")
        print(f"  {'task kind':34} {'activity':12} {'s':>8} {'count':>6}")
        for prefix, action, s, c in prof:
            print(f"  {prefix[:34]:34} {action:12} {s:8.3f} {c:6d}")


if __name__ == "__main__":
    main()
