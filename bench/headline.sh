#!/bin/bash
# The headline table of README.md and docs/benchmarks.md, from one quiet
# window: the blocked filter's criterion rows (batch and single key, the
# automatic and the AVX-512 kernel, sbbf-rs-safe beside them), then the
# Boost.Bloom driver on its own keys of the same sizes, then the report.
#
#   BOOSTBENCH=/path/to/boostbench bench/headline.sh                # target/bench-report/headline.md
#   BOOSTBENCH=/path/to/boostbench bench/headline.sh --update-docs  # README.md, docs/benchmarks.md
#
# BOOSTBENCH is a build of the Boost.Bloom driver (not in this repository;
# docs/benchmarks.md, "How to reproduce", says what it runs and prints).
# Start it on an idle machine: the report records the load at the start and
# the end of the criterion run, and a loaded run is not a headline.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BOOSTBENCH:?set BOOSTBENCH to the Boost.Bloom driver (docs/benchmarks.md)}"
target=${CARGO_TARGET_DIR:-target}
rows='^blocked/(blocked|sbbf-rs-safe)-(contains_hit|contains_miss|insert)/n=1e[67]/(auto|single|single-avx512|kernel-avx512|peer)$'
# Build first, then wait for the build's own load to pass: the report
# records the load at the start of the timed run.
cargo bench -p lesshash-bench --bench lesshash --no-run
cargo build --release -q -p lesshash-bench --example bench_report
if [[ -r /proc/loadavg ]]; then
    until awk '{ exit !($1 < 0.5) }' /proc/loadavg; do sleep 10; done
fi
cargo bench -p lesshash-bench --bench lesshash -- "$rows" --warm-up-time 1 --measurement-time 4
mkdir -p "$target/bench-report"
"$BOOSTBENCH" --n 1e6,1e7 --fpr 0.01 --reps 5 > "$target/bench-report/boost.jsonl"
cargo run --release -q -p lesshash-bench --example bench_report -- \
    --headline "$target/bench-report/boost.jsonl" "$@"
