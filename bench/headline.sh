#!/bin/bash
# The headline table of README.md and docs/benchmarks.md and the one-key
# table of docs/benchmarks.md, from one quiet window: the blocked filter's
# criterion rows (batch and single key, the automatic and the AVX-512
# kernel, both hash families, sbbf-rs-safe beside them; one call per key at 1e6, 1e7 and 1e8
# for both blocked layouts, sbbf-rs-safe and fastbloom, u64 and 16-byte
# keys), then the Boost.Bloom driver on its own keys of the same sizes,
# then the report. About 11 minutes on a 2-core machine.
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
# The headline's rows (1e6 and 1e7), then the one-key table's: one call
# per key at 1e6, 1e7 and 1e8 for both blocked layouts and the peers, on
# u64 and 16-byte keys.
headline_rows='(blocked|sbbf-rs-safe)-(contains_hit|contains_miss|insert)/n=1e[67]/(auto|auto-fold|single|single-fold|single-avx512|kernel-avx512|peer)'
one_key_rows='((blocked|split-block)-(contains_hit|contains_miss|insert)(-str16)?/n=1e[678]/single|(sbbf-rs-safe|fastbloom)-(contains_hit|contains_miss|insert)/n=1e[678]/peer|sbbf-rs-safe-(contains_hit|contains_miss|insert)-str16/n=1e[678]/peer)'
# The floors (XXH3-128 alone; one random cache-line load per key) say in
# the one-key table how much the memory system gave in this window.
floor_rows='floor-(hash/n=1e[678]/xxh3-128|loads/n=1e[678]/loads)'
rows="^blocked/($headline_rows|$one_key_rows|$floor_rows)\$"
# Build first, then wait for the build's own load to pass: the report
# records the load at the start of the timed run.
cargo bench -p lesshash-bench --bench lesshash --no-run
cargo build --release -q -p lesshash-bench --example bench_report
if [[ -r /proc/loadavg ]]; then
    until awk '{ exit !($1 < 0.5) }' /proc/loadavg; do sleep 10; done
fi
cargo bench -p lesshash-bench --bench lesshash -- "$rows" --warm-up-time 1 --measurement-time 4
mkdir -p "$target/bench-report"
"$BOOSTBENCH" --n 1e6,1e7,1e8 --fpr 0.01 --reps 5 > "$target/bench-report/boost.jsonl"
cargo run --release -q -p lesshash-bench --example bench_report -- \
    --headline "$target/bench-report/boost.jsonl" "$@"
