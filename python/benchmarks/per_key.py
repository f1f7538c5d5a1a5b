"""Per-key and list calls, ns per key, lesshash beside abloom and rbloom.

    pip install abloom rbloom          # measurement only, not dependencies
    python python/benchmarks/per_key.py --repeat 7

In one process, for each library that has the operation:

* ``key in bf`` and ``bf.add(key)`` one key at a time, from a Python loop
  (the loop's own cost, the same for every library, is included);
* ``contains_many`` / ``add_many`` / ``update`` over a list of ``int`` and a
  list of ``str`` (abloom and rbloom: ``update(list)``; they have no batch
  query);
* lesshash's ``add_many`` of a NumPy ``int64`` array.

Keys: --n random ``int`` in the int64 range (and ``str`` of them), queries
of the added keys (every probe is read). Each figure is the median over
--repeat runs (a fresh filter for every insert run), in nanoseconds per
key. The CPU and the 1-minute load average before and after are printed:
the figures mean something only on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

import lesshash

FPR = 0.01


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load() -> str:
    try:
        return "%.2f" % os.getloadavg()[0]
    except OSError:
        return "?"


def timed(fn, repeat: int, n: int, setup=None) -> float:
    """Median ns per key of `fn(state)` over `repeat` runs, `state` from
    `setup()` (outside the timing) when given."""
    times = []
    for _ in range(repeat):
        state = setup() if setup else None
        t = time.perf_counter()
        fn(state)
        times.append(time.perf_counter() - t)
    return statistics.median(times) / n * 1e9


def loop_in(bf, keys):
    for k in keys:
        k in bf  # noqa: B015


def loop_add(bf, keys):
    add = bf.add
    for k in keys:
        add(k)


def libraries(n: int, wanted: list[str]):
    """name -> a function making an empty filter for n keys at FPR."""
    libs = {"lesshash": lambda: lesshash.BloomFilter(n, FPR)}
    if "abloom" in wanted:
        try:
            import abloom

            libs["abloom"] = lambda: abloom.BloomFilter(n, FPR)
        except ImportError:
            print("abloom not installed: skipped", file=sys.stderr)
    if "rbloom" in wanted:
        try:
            import rbloom

            libs["rbloom"] = lambda: rbloom.Bloom(n, FPR)
        except ImportError:
            print("rbloom not installed: skipped", file=sys.stderr)
    return {k: v for k, v in libs.items() if k in wanted}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--libs", default="lesshash,abloom,rbloom")
    args = ap.parse_args()
    n, repeat = args.n, args.repeat

    print(f"CPU: {cpu_name()} ({os.cpu_count()} logical CPUs)")
    print(f"Python {platform.python_version()}, lesshash kernel {lesshash.KERNEL}")
    print(f"1-min load before: {load()}")

    arr = np.random.default_rng(7).integers(-(2**63), 2**63 - 1, size=n, dtype=np.int64)
    ints = arr.tolist()
    strs = [f"user-{k}" for k in ints]
    libs = libraries(n, args.libs.split(","))

    def built(make, keys):
        bf = make()
        for k in keys:
            bf.add(k)
        return bf

    rows: list[tuple[str, str, float]] = []

    def row(op, lib, ns):
        rows.append((op, lib, ns))
        print(f"  {op:<28} {lib:<9} {ns:8.1f} ns/key", flush=True)

    for name, make in libs.items():
        bf_int = built(make, ints)
        bf_str = built(make, strs)
        row("key in bf (int)", name, timed(lambda _: loop_in(bf_int, ints), repeat, n))
        row("key in bf (str)", name, timed(lambda _: loop_in(bf_str, strs), repeat, n))
        row("bf.add(key) (int)", name, timed(lambda f: loop_add(f, ints), repeat, n, make))
        row("bf.add(key) (str)", name, timed(lambda f: loop_add(f, strs), repeat, n, make))
        if name == "lesshash":
            row(
                "contains_many(list of int)",
                name,
                timed(lambda _: bf_int.contains_many(ints), repeat, n),
            )
            row(
                "contains_many(list of str)",
                name,
                timed(lambda _: bf_str.contains_many(strs), repeat, n),
            )
            row("add_many(list of int)", name, timed(lambda f: f.add_many(ints), repeat, n, make))
            row("add_many(list of str)", name, timed(lambda f: f.add_many(strs), repeat, n, make))
            row("add_many(numpy int64)", name, timed(lambda f: f.add_many(arr), repeat, n, make))
        else:
            row("update(list of int)", name, timed(lambda f: f.update(ints), repeat, n, make))
            row("update(list of str)", name, timed(lambda f: f.update(strs), repeat, n, make))

    print(f"1-min load after: {load()}")
    print()
    print(f"n = {n:,}, median of {repeat}, ns per key")
    print()
    print("| operation | library | ns/key |")
    print("|---|---|---:|")
    for op, lib, ns in rows:
        print(f"| {op} | {lib} | {ns:.1f} |")


if __name__ == "__main__":
    main()
