#!/usr/bin/env bash
# The command line on columnar input against the same keys as lines, and
# the line formats' thread scaling, in one run (hyperfine; whole commands,
# files in the page cache after hyperfine's warm-up runs).
#
#   PYTHON=path/to/python-with-numpy-and-pyarrow bench/cli/columnar.sh [DIR]
#
# DIR (default target/clibench) gets, once: events.parquet (1e7 rows,
# user_id Int64 uniform over 0..2e6 and v Float64; pyarrow's default row
# groups, Snappy), events.txt (the same user ids as lines), events20.txt
# (2e7 lines: them twice), users.txt (the 1e6 even ids), and users.lhbf
# (built from users.txt with --keys int at 1%). The binary is
# target/release/lesshash (`cargo build --release -p lesshash-cli`).
#
# Rows: `filter` of the Parquet column against `filter --keys int` of the
# lines (the target: at most 1.5x); `filter` of 2e7 lines on 1 and
# 2 threads; `build` of 1e7 lines with --items on 1 thread and the default.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-target/clibench}
bin=$PWD/target/release/lesshash
py=${PYTHON:-python3}
mkdir -p "$dir"
cd "$dir"
if [ ! -e users.lhbf ]; then
    "$py" - <<'PY'
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
rng = np.random.default_rng(7)
n = 10_000_000
uid = rng.integers(0, 2_000_000, n, dtype=np.int64)
pq.write_table(pa.table({"user_id": uid, "v": rng.random(n)}), "events.parquet")
np.savetxt("events.txt", uid, fmt="%d")
np.savetxt("events20.txt", np.concatenate([uid, uid]), fmt="%d")
np.savetxt("users.txt", np.arange(0, 2_000_000, 2, dtype=np.int64), fmt="%d")
PY
    "$bin" build -i users.txt --keys int --fpr 0.01 -o users.lhbf
fi
nproc
hyperfine --warmup 1 --runs 7 --export-markdown cli-columnar.md \
    -n parquet-column "$bin filter users.lhbf -i events.parquet --column user_id -o out.parquet" \
    -n lines-keys-int "$bin filter users.lhbf -i events.txt --keys int -o out.txt" \
    -n lines20-threads1 "$bin filter users.lhbf -i events20.txt --keys int --threads 1 -o out20.txt" \
    -n lines20-default "$bin filter users.lhbf -i events20.txt --keys int -o out20.txt" \
    -n build-threads1 "$bin build -i events.txt --keys int --items 10000000 --fpr 0.01 --threads 1 -o b.lhbf" \
    -n build-default "$bin build -i events.txt --keys int --items 10000000 --fpr 0.01 -o b.lhbf"
