"""The compact summary of a run.sh run (bench/scaling): the CLI's TSV and the cluster
tables of scale.py's runs side by side.

    python3 summary.py CLI_TSV DASK_TXT
"""

import re
import sys

cli_tsv, dask_txt = sys.argv[1], sys.argv[2]

print("== CLI (wall time, median; speed-up against the row's first thread count)")
try:
    rows = [line.rstrip("\n").split("\t") for line in open(cli_tsv)][1:]
except OSError:
    rows = []
    print("   (no cli.tsv)")
first: dict = {}
print(f"   {'what':16} {'T':>3} {'median s':>9} {'min s':>8} {'Mkeys/s':>8} {'speed-up':>8}  output")
for what, t, med, best, rate, same in rows:
    try:
        m = float(med)
    except ValueError:
        m = float("nan")
    base = first.setdefault(what, m)
    tl = "all" if t == "0" else t
    print(f"   {what:16} {tl:>3} {med:>9} {best:>8} {rate:>8} {base / m:8.2f}x  {same}")

print("\n== Dask scale.py (median seconds; columns: workers x 2 threads)")
runs: dict = {}  # W -> {row: seconds}
order: list = []
extra: dict = {}
w = None
in_table = False
try:
    text = open(dask_txt).read().splitlines()
except OSError:
    text = []
for line in text:
    m = re.match(r"=== dask W=(\d+)", line)
    if m:
        w = int(m.group(1))
        runs[w] = {}
        in_table = False
        continue
    if w is None:
        continue
    if line.startswith("cluster "):
        in_table = True
        continue
    if in_table:
        m = re.match(r"(.{40}) +([0-9.]+) +([0-9.]+)$", line)
        if m:
            name = m.group(1).strip()
            runs[w][name] = float(m.group(2))
            if name not in order:
                order.append(name)
            continue
        in_table = False
    if line.startswith("peak worker rss"):
        extra.setdefault("peak rss MB", {})[w] = line.split(":", 2)[-1].strip()
    if "Timeout" in line or "FAILED" in line or "Error" in line:
        extra.setdefault("problems", {})[w] = line.strip()[:80]
ws = sorted(runs)
if not ws:
    print("   (no dask results)")
else:
    print(f"   {'':30}" + "".join(f"{'W=' + str(x):>9}" for x in ws) + "   speed-up W1->Wmax")
    for name in order:
        vals = [runs[x].get(name) for x in ws]
        cells = "".join(f"{v:9.3f}" if v is not None else f"{'-':>9}" for v in vals)
        sp = ""
        if vals[0] and vals[-1]:
            sp = f"   {vals[0] / vals[-1]:.2f}x"
        print(f"   {name[:30]:30}{cells}{sp}")
    for k, d in extra.items():
        for x in ws:
            if x in d:
                print(f"   {k} W={x}: {d[x]}")
