"""Thread scaling of the `lesshash` command line (build and filter), one
shot: generates the data, times each command REPS times (wall time,
time.perf_counter around the whole process), checks that every thread
count gives the same bytes as --threads 1, and writes a TSV of the
results.

    python3 bench/cli/threads.py target/release/lesshash DATADIR results.tsv

(numpy and pyarrow needed). For a machine with many cores: the line
formats' and Parquet's thread scaling (docs/bench-notes/2026-11-28.md
has a 16-core run).

Environment: EVENTS (default 2e7 distinct integer lines), USERS (2e6, the
filter's keys: every EVENTS/USERS-th id, so about USERS/EVENTS of the
events pass, plus 1% false positives), THREADS ("1 2 4 8 16"), PQ_THREADS
("1 16"), REPS (5), RUN_TIMEOUT (seconds per command, 120).
"""

from __future__ import annotations

import filecmp
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

BIN, DATA, TSV = sys.argv[1], sys.argv[2], sys.argv[3]
EVENTS = int(float(os.environ.get("EVENTS", "2e7")))
USERS = int(float(os.environ.get("USERS", "2e6")))
THREADS = [int(t) for t in os.environ.get("THREADS", "1 2 4 8 16").split()]
PQ_THREADS = [int(t) for t in os.environ.get("PQ_THREADS", "1 16").split()]
REPS = int(os.environ.get("REPS", "5"))
RUN_TIMEOUT = float(os.environ.get("RUN_TIMEOUT", "120"))

os.makedirs(DATA, exist_ok=True)
os.chdir(DATA)
rows: list[tuple] = []


def write_lines(path: str, a: np.ndarray) -> None:
    # One int64 column, no header: one decimal integer per line, "\n" ends.
    pacsv.write_csv(pa.table({"k": a}), path,
                    write_options=pacsv.WriteOptions(include_header=False))


def gen() -> None:
    stamp = f"{EVENTS} {USERS}"
    if os.path.exists("_stamp") and open("_stamp").read() == stamp:
        print(f"# data already there: {stamp}")
        return
    t = time.perf_counter()
    rng = np.random.default_rng(7)
    events = rng.permutation(EVENTS).astype(np.int64)  # distinct ids 0..EVENTS-1, shuffled
    step = max(1, EVENTS // USERS)
    users = np.arange(0, step * USERS, step, dtype=np.int64)  # USERS distinct ids
    write_lines("events.txt", events)
    write_lines("users.txt", users)
    pq.write_table(pa.table({"user_id": events, "v": rng.random(EVENTS)}), "events.parquet")
    with open("_stamp", "w") as f:
        f.write(stamp)
    print(f"# generated {EVENTS:,} events, {USERS:,} users in {time.perf_counter() - t:.1f} s: "
          + ", ".join(f"{n} {os.path.getsize(n) / 1e6:.0f} MB"
                      for n in ("events.txt", "users.txt", "events.parquet")))


# /dev/null opened write-only: subprocess.DEVNULL opens it O_RDWR, which the
# CLI takes for a closed stdout (main.rs, stdout_is_closed) and refuses
# `filter`, even with -o.
NULL = open(os.devnull, "wb")


def run(args: list[str]) -> float:
    t = time.perf_counter()
    p = subprocess.run([BIN, *args], stdout=NULL, stderr=subprocess.PIPE, timeout=RUN_TIMEOUT)
    dt = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.decode()[-2000:]}")
    return dt


def bench(name: str, threads: int, args: list[str], out: str | None, ref: str | None,
          lines: int) -> None:
    try:
        times = [run(args) for _ in range(REPS)]
    except Exception as e:  # keep going: one broken row must not lose the rest
        print(f"{name:18} T={threads:<3} FAILED: {e}", flush=True)
        rows.append((name, threads, "nan", "nan", "nan", "FAILED"))
        return
    same = "-"
    if out and ref:
        if out == ref:
            same = "ref"
        else:
            same = "same" if filecmp.cmp(out, ref, shallow=False) else "DIFFERENT"
    med, best = statistics.median(times), min(times)
    print(f"{name:18} T={threads:<3} median {med:7.3f} s  min {best:7.3f} s  "
          f"{lines / med / 1e6:8.1f} M keys/s  output {same}   "
          f"[{' '.join(f'{x:.3f}' for x in times)}]", flush=True)
    rows.append((name, threads, f"{med:.4f}", f"{best:.4f}", f"{lines / med / 1e6:.2f}", same))


gen()
print(f"# {REPS} runs each; wall time of the whole process; files in the page cache", flush=True)
n = EVENTS
# The users' filter, as the filter rows use it (and its build at 1 and all threads).
for t in (1, 0):
    bench("build users", t, ["build", "-q", "-i", "users.txt", "--keys", "int", "--fpr", "0.01",
                             "--threads", str(t), "-o", f"users{t}.lhbf"],
          f"users{t}.lhbf", "users1.lhbf", USERS)
os.replace("users1.lhbf", "users.lhbf")

for t in THREADS:
    bench("build lines", t, ["build", "-q", "-i", "events.txt", "--keys", "int", "--items", str(n),
                             "--fpr", "0.01", "--threads", str(t), "-o", f"b{t}.lhbf"],
          f"b{t}.lhbf", f"b{THREADS[0]}.lhbf", n)
for t in THREADS:
    bench("filter lines", t, ["filter", "-q", "users.lhbf", "-i", "events.txt", "--keys", "int",
                              "--threads", str(t), "-o", f"out{t}.txt"],
          f"out{t}.txt", f"out{THREADS[0]}.txt", n)
for t in PQ_THREADS:
    bench("filter parquet", t, ["filter", "-q", "users.lhbf", "-i", "events.parquet", "--column",
                                "user_id", "--threads", str(t), "-o", f"outpq{t}.parquet"],
          f"outpq{t}.parquet", f"outpq{PQ_THREADS[0]}.parquet", n)
for t in PQ_THREADS:
    bench("build parquet", t, ["build", "-q", "-i", "events.parquet", "--column", "user_id",
                               "--fpr", "0.01", "--threads", str(t), "-o", f"bpq{t}.lhbf"],
          f"bpq{t}.lhbf", f"bpq{PQ_THREADS[0]}.lhbf", n)

try:
    hits = sum(1 for _ in open(f"out{THREADS[0]}.txt", "rb"))
    print(f"# filter lines: {hits:,} of {n:,} lines selected "
          f"({USERS:,} members, so {(hits - USERS) / max(1, n - USERS):.4%} false positives)")
except OSError:
    pass
for name in os.listdir("."):  # the outputs; the inputs stay for a rerun
    if name.startswith(("b", "out")) and name not in ("events.txt", "events.parquet"):
        os.remove(name)

with open(TSV, "w") as f:
    f.write("what\tthreads\tmedian_s\tmin_s\tM_keys_per_s\toutput_vs_T1\n")
    for r in rows:
        f.write("\t".join(map(str, r)) + "\n")
