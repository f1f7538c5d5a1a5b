#!/usr/bin/env python3
"""Whole-process cost of `lesshash query` / `info` on a large filter file.

The case it measures: a filter built for a billion keys at 1% (a 1.2 GB
file), asked about one key. Each run is a fresh process; the script reports
the median wall time and the median peak resident memory (from GNU time)
over `--runs` runs, for:

* `query --skip-checksum`: map, check the header and length, one query;
* `query`: the default, which also verifies the checksum (reads the file);
* `info --skip-checksum`: map and count the set bits (reads the file);
* `filter --skip-checksum` over a file of 1e6 lines (batch queries; the
  map is read ahead with `MADV_WILLNEED`);
* `--old-bin`'s `query` and `filter` (a build that loads the whole
  filter), if given.

Warm: the file's pages are in the page cache (read once before). Cold:
before each run the file's pages are dropped from the page cache with
`posix_fadvise(POSIX_FADV_DONTNEED)` (no root needed; the disk's own cache
may still hold them).

Every run of the default variants also runs under `ulimit -d` (RLIMIT_DATA:
heap and anonymous memory, not read-only file maps) of `--data-limit-mb`,
to show that the mapped process never allocates the filter.

    cargo build --release -p lesshash-cli
    python3 bench/benches/mapped_cli.py --dir /tmp/lh-mapped   # on an otherwise idle machine
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd, data_limit=None):
    """One process: (seconds, peak RSS in MB, exit code). The peak RSS comes
    from GNU time (a small C parent: `wait4` on a child forked from Python
    would count the interpreter's pages from before the exec)."""

    def limit():
        if data_limit is not None:
            resource.setrlimit(resource.RLIMIT_DATA, (data_limit, data_limit))

    with tempfile.NamedTemporaryFile("r") as rss:
        start = time.perf_counter()
        p = subprocess.run(
            ["/usr/bin/time", "-q", "-f", "%M", "-o", rss.name, *cmd],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit,
        )
        elapsed = time.perf_counter() - start
        kb = int(rss.read().split()[-1])
    return elapsed, kb / 1024, p.returncode


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def warm(path):
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="target/release/lesshash")
    ap.add_argument("--old-bin", help="a lesshash that loads filters, for comparison")
    ap.add_argument("--dir", default="/tmp/lesshash-mapped-bench")
    ap.add_argument("--items", type=int, default=1_000_000_000)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--data-limit-mb", type=int, default=50)
    args = ap.parse_args()

    os.makedirs(args.dir, exist_ok=True)
    path = os.path.join(args.dir, f"filter-{args.items}.lhbf")
    if not os.path.exists(path):
        keys = os.path.join(args.dir, "keys.txt")
        with open(keys, "w") as f:
            f.writelines(f"{i}\n" for i in range(1, 11))
        subprocess.run(
            [args.bin, "build", "-i", keys, "-o", path, "--fpr", "0.01",
             "--items", str(args.items), "-q"],
            check=True,
        )
    size = os.path.getsize(path)
    print(f"file: {path}, {size / 1e9:.2f} GB; {args.runs} runs per row; medians")

    variants = [
        ("--version (process start and exit, for reference)", [args.bin, "--version"]),
        ("query --skip-checksum", [args.bin, "query", "--skip-checksum", path, "5"]),
        ("query (checksum verified)", [args.bin, "query", path, "5"]),
        ("info --skip-checksum", [args.bin, "info", "--skip-checksum", path]),
    ]
    lines = os.path.join(args.dir, "lines-1e6.txt")
    if not os.path.exists(lines):
        with open(lines, "w") as f:
            f.writelines(f"{(i * 0x9E3779B97F4A7C15) % (1 << 64)}\n" for i in range(1_000_000))
    variants.append(
        ("filter --skip-checksum, 1e6 lines", [args.bin, "filter", "--skip-checksum", path, "-i", lines, "-q"])
    )
    if args.old_bin:
        variants.append(("query, loading the filter (--old-bin)", [args.old_bin, "query", path, "5"]))
        variants.append(
            ("filter, 1e6 lines, loading the filter (--old-bin)", [args.old_bin, "filter", path, "-i", lines, "-q"])
        )

    limit = args.data_limit_mb << 20
    print()
    print(f"| command | cache | wall (ms) | peak RSS (MB) | under ulimit -d {args.data_limit_mb} MB |")
    print("|---|---|---:|---:|---|")
    for name, cmd in variants:
        for cache in ["warm", "cold"]:
            times, rss, codes = [], [], set()
            for _ in range(args.runs):
                if cache == "cold":
                    drop_cache(path)
                else:
                    warm(path) if not times else None
                t, m, code = run(cmd)
                times.append(t * 1000)
                rss.append(m)
                codes.add(code)
            if codes - {0}:
                sys.exit(f"{name}: exit codes {codes}")
            limited = run(cmd, data_limit=limit)[2]
            print(
                f"| `{name}` | {cache} | {statistics.median(times):.2f} "
                f"(min {min(times):.2f}) | {statistics.median(rss):.1f} | "
                f"{'answers' if limited == 0 else f'fails (exit {limited})'} |"
            )
            sys.stdout.flush()


if __name__ == "__main__":
    main()
