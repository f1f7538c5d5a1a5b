#!/usr/bin/env bash
# One-shot scaling run of lesshash on a many-core machine: the command
# line's build and filter on 1..16 threads (bench/cli/threads.py), and
# python/benchmarks/scale.py (Dask) on 1..8 workers x 2 threads; then the
# two side by side (summary.py). Made for a machine that cannot build or
# fetch anything: it takes a built binary and wheels.
#
#   # on the build machine, from the repo root (the target's Python version):
#   cargo build --release -p lesshash-cli && mkdir -p .devrun && cp target/release/lesshash .devrun/
#   (cd python && maturin build --release -i python3.12 -o ../.whl)
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 -d .whl \
#       dask distributed tornado tblib zict partd locket   # what the target lacks
#   # on the target, from the repo root, .devrun and .whl copied along:
#   bash bench/scaling/run.sh
#   SCALE=small bash bench/scaling/run.sh   # smoke test: 1e6 keys, threads and workers 1 2
#
# Environment (all optional): BIN (the binary, .devrun/lesshash), OUT (results; /tmp/lesshash-devrun-out), PY
# (python3), WHL (wheel folder, .whl), SITE (their install target, /tmp/site;
# SKIP_INSTALL=1 uses the interpreter's own packages), BUDGET (seconds for
# the whole script, 420: each section's timeout is cut to what is left),
# WORK (data folder, /tmp/lh-devrun), SKIP_CLI=1 (the Dask part alone), DASK_ARGS (more scale.py options,
# e.g. --profile), and the sizes below.
set -uo pipefail
export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/../.." || exit 2
HERE=$PWD/bench/scaling
ROOT=$PWD
OUT=${OUT:-/tmp/lesshash-devrun-out}
PY=${PY:-python3}
WHL=${WHL:-$ROOT/.whl}
BIN=${BIN:-$ROOT/.devrun/lesshash}
SITE=${SITE:-/tmp/site}
WORK=${WORK:-/tmp/lh-devrun}
BUDGET=${BUDGET:-420}
RESERVE=15 # kept for the summary
START=$(date +%s)
mkdir -p "$OUT" "$WORK"

if [ "${SCALE:-full}" = small ]; then
    : "${EVENTS:=1e6}" "${USERS:=1e5}" "${THREADS:=1 2}" "${PQ_THREADS:=1 2}" "${REPS:=2}"
    : "${DASK_KEYS:=1e6}" "${DASK_FILES:=8}" "${WORKERS:=1 2}" "${DASK_REPEAT:=1}"
else
    : "${EVENTS:=2e7}" "${USERS:=2e6}" "${THREADS:=1 2 4 8 16}" "${PQ_THREADS:=1 16}" "${REPS:=5}"
    : "${DASK_KEYS:=1e8}" "${DASK_FILES:=64}" "${WORKERS:=1 2 4 8}" "${DASK_REPEAT:=3}"
fi
export EVENTS USERS THREADS PQ_THREADS REPS

elapsed() { echo $(( $(date +%s) - START )); }
# cap WANT: WANT seconds, or what the budget has left if less (0: skip).
cap() {
    local left=$(( BUDGET - RESERVE - $(elapsed) ))
    if (( left < 10 )); then echo 0; elif (( left < $1 )); then echo "$left"; else echo "$1"; fi
}
section() { echo; echo "######## $* (t=$(elapsed) s, load $(cut -d' ' -f1-3 /proc/loadavg))"; }

main() {
    section "machine"
    date -u
    echo "nproc: $(nproc)"
    if command -v lscpu >/dev/null; then
        lscpu | grep -E '^(Model name|Architecture|CPU\(s\)|Thread\(s\) per core|Core\(s\) per socket|Socket\(s\)|NUMA node\(s\)|L2 cache|L3 cache|Flags)' \
            | sed -E 's/^(Flags:[[:space:]]*).*/\1(avx2: '"$(grep -c -w avx2 /proc/cpuinfo | head -1)"' cpus, avx512f: '"$(grep -c -w avx512f /proc/cpuinfo | head -1)"' cpus)/'
    else
        grep -m1 'model name' /proc/cpuinfo
    fi
    uname -srm
    free -g | head -2
    df -h /tmp | tail -1
    git -C "$ROOT" log -1 --format='repo HEAD %h %s' 2>/dev/null || true
    cat "$(dirname "$BIN")/BUILD.txt" 2>/dev/null || true

    section "python packages"
    if [ "${SKIP_INSTALL:-0}" != 1 ]; then
        ls "$WHL"
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target "$SITE" "$WHL"/*.whl || echo "FAILED: wheel install (the Dask sections will fail)"
        export PYTHONPATH=$SITE${PYTHONPATH:+:$PYTHONPATH}
    fi
    local dask_ok=1
    "$PY" - <<'PY' || { echo "FAILED: imports: the Dask sections are skipped"; dask_ok=0; }
import sys, numpy, pandas, pyarrow, dask, distributed, lesshash
import dask.dataframe  # the dataframe extra's needs
import lesshash.dask
print("python", sys.version.split()[0], sys.executable)
for m in (numpy, pandas, pyarrow, dask, distributed, lesshash):
    print(f"  {m.__name__:12} {getattr(m, '__version__', '?'):12} {m.__file__}")
PY

    local bin=$WORK/bin/lesshash
    mkdir -p "$WORK/bin" && cp "$BIN" "$bin" && chmod +x "$bin"
    "$bin" --version || { echo "FAILED: the lesshash binary does not run"; return 1; }

    section "CLI scaling: $EVENTS events, $USERS users, threads $THREADS (Parquet: $PQ_THREADS), $REPS runs each"
    local t
    t=$(cap 150)
    [ "${SKIP_CLI:-0}" = 1 ] && t=0
    if (( t > 0 )); then
        timeout -k 5 "$t" "$PY" "$ROOT/bench/cli/threads.py" "$bin" "$WORK/cli" "$OUT/cli.tsv" \
            || echo "FAILED or TIMED OUT (limit $t s): CLI section, exit $?"
    else
        echo "SKIPPED: CLI section (budget spent)"
    fi

    section "Dask dataset: $DASK_KEYS keys in $DASK_FILES Parquet files"
    local dir=$WORK/scale
    t=$(cap 90)
    (( dask_ok )) || t=0
    if (( t > 0 )); then
        timeout -k 5 "$t" "$PY" - "$dir/data" "$DASK_KEYS" "$DASK_FILES" <<'PY' || echo "FAILED or TIMED OUT (limit $t s): dataset, exit $?"
import sys, time
sys.path.insert(0, "python/benchmarks")
import scale
t = time.perf_counter()
scale.write_dataset(sys.argv[1], int(float(sys.argv[2])), int(sys.argv[3]))
print(f"dataset ready in {time.perf_counter() - t:.1f} s")
PY
        du -sh "$dir/data" 2>/dev/null
    fi

    : >"$OUT/dask.txt"
    local w last=${WORKERS##* } want skip
    for w in $WORKERS; do
        if [ "$w" = "$last" ]; then skip=; want=120; else skip=--skip-single; want=$(( w == 1 ? 150 : 100 )); fi
        section "Dask: scale.py --workers $w --threads 2 ${skip:-(with the single-process rows)}"
        t=$(cap "$want")
        (( dask_ok )) || t=0
        if (( t <= 0 )); then echo "SKIPPED: W=$w (budget spent or imports failed)"; continue; fi
        echo "=== dask W=$w" >>"$OUT/dask.txt"
        timeout -k 10 "$t" "$PY" python/benchmarks/scale.py --keys "$DASK_KEYS" --files "$DASK_FILES" \
            --workers "$w" --threads 2 --repeat "$DASK_REPEAT" --dir "$dir" $skip ${DASK_ARGS:-} 2>&1 | tee -a "$OUT/dask.txt"
        local rc=${PIPESTATUS[0]}
        (( rc != 0 )) && echo "FAILED or TIMED OUT (limit $t s): W=$w, exit $rc" | tee -a "$OUT/dask.txt"
    done

    section "summary"
    "$PY" "$HERE/summary.py" "$OUT/cli.tsv" "$OUT/dask.txt" | tee "$OUT/summary.txt"
    echo
    echo "total $(elapsed) s"
}

main 2>&1 | tee "$OUT/log.txt"
