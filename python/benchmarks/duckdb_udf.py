"""lesshash.duckdb.register's functions (native and Python) in DuckDB SQL
against scans and DuckDB's exact semi join, 1e7 events and 1e6 users, in
one run.

    pip install "./python[duckdb]"
    python python/benchmarks/duckdb_udf.py                  # threads 1 and 2
    python python/benchmarks/duckdb_udf.py --threads 2 --rounds 7

Tables in memory: ``events(k BIGINT, v DOUBLE)``, 1e7 rows, k uniform over
0..2e6 (half of them users), and ``users(id BIGINT)``, the 1e6 even ids;
the filter holds the users at 1%. Queries, each the median of --rounds
interleaved rounds:

* ``k >= 0``: DuckDB answers it from the column's min/max (no row read);
* ``k <> 1001``: a scan that reads every key (the fair baseline);
* ``in_users(k)``: the native function (``register``'s default on a
  database that allows unsigned extensions);
* ``in_users_py(k)``: the Python function (``register(..., native=False)``);
* ``k IN (SELECT id FROM users)``: DuckDB's exact semi join;

and ``calls``: how many times DuckDB called the Python function per query
(DuckDB's vectors are 2,048 rows). Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import statistics
import time

import duckdb
import numpy as np
import pyarrow as pa

import lesshash.duckdb
from lesshash import BloomFilter


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=float, default=1e7)
    ap.add_argument("--users", type=float, default=1e6)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    n, users = int(args.rows), int(args.users)
    rng = np.random.default_rng(7)
    events = pa.table({"k": rng.integers(0, 2 * users, n), "v": rng.random(n)})
    bf = BloomFilter(users, 0.01)
    bf.add_many(np.arange(0, 2 * users, 2))
    con = duckdb.connect(config={"allow_unsigned_extensions": True})
    con.register("events_arrow", events)
    con.execute("CREATE TABLE events AS SELECT * FROM events_arrow").fetchall()
    con.execute(f"CREATE TABLE users AS SELECT range * 2 AS id FROM range({users})").fetchall()
    calls = [0]
    assert lesshash.duckdb.register(con, "in_users", bf, native=True) == "native"
    lesshash.duckdb.register(con, "in_users_py", bf, native=False)
    inner = bf.contains_many

    def counted(name: str, bf=bf):
        def f(keys):
            calls[0] += 1
            return inner(keys, output="arrow")
        con.create_function(name, f, ["BIGINT"], "BOOLEAN", type="arrow")

    counted("in_users_counted")
    queries = {
        "k >= 0 (statistics)": "SELECT count(*) FROM events WHERE k >= 0",
        "k <> 1001 (scan)": "SELECT count(*) FROM events WHERE k <> 1001",
        "in_users(k)": "SELECT count(*) FROM events WHERE in_users(k)",
        "in_users_py(k)": "SELECT count(*) FROM events WHERE in_users_py(k)",
        "k IN (SELECT id FROM users)": "SELECT count(*) FROM events WHERE k IN (SELECT id FROM users)",
    }
    con.execute("SELECT count(*) FROM events WHERE in_users_counted(k)").fetchall()
    print(f"# {n:,} events, {users:,} users; duckdb {duckdb.__version__}; "
          f"{calls[0]:,} calls of the function per query")
    for threads in args.threads.split(","):
        con.execute(f"SET threads = {int(threads)}").fetchall()
        times: dict[str, list[float]] = {q: [] for q in queries}
        for _ in range(args.rounds):
            for q, sql in queries.items():
                t = time.perf_counter()
                con.execute(sql).fetchall()
                times[q].append(time.perf_counter() - t)
        med = {q: statistics.median(ts) for q, ts in times.items()}
        scan = med["k <> 1001 (scan)"]
        print(f"\nthreads={threads}      {'ms':>9} {'x scan':>8}")
        for q, m in med.items():
            print(f"{q:30} {m * 1e3:9.2f} {m / scan:8.2f}")
        print(f"{'IN / in_users':30} {'':9} {med['k IN (SELECT id FROM users)'] / med['in_users(k)']:8.2f}")
        print(f"{'in_users_py / in_users':30} {'':9} {med['in_users_py(k)'] / med['in_users(k)']:8.2f}")


if __name__ == "__main__":
    main()
