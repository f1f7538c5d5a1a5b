#!/usr/bin/env bash
# Spark's own mightContainLong loop over the `spark/` bench group's keys,
# on one core, beside `cargo bench --bench lesshash -- '^spark/'`:
#
#   PYSPARK_JARS=/path/to/site-packages/pyspark/jars bash bench/spark/jvm.sh [n] [rounds]
#
# needs a JDK (javac, java) and the spark-sketch jar pyspark ships
# (pip install pyspark). Builds into target/spark-jvm.
set -euo pipefail
cd "$(dirname "$0")/../.."
jars="${PYSPARK_JARS:?set PYSPARK_JARS to pyspark/jars (python -c 'import pyspark, os; print(os.path.dirname(pyspark.__file__))')/jars}"
sketch=$(ls "$jars"/spark-sketch_*.jar | head -n 1)
out=target/spark-jvm
mkdir -p "$out"
javac -d "$out" -cp "$sketch" bench/spark/MightContain.java
taskset -c 1 java -cp "$out:$sketch" MightContain "${1:-10000000}" "${2:-7}"
