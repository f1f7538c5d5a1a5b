//! The one-key table: one call per key (`contains` of members and of
//! non-members, `insert`) at 1e6, 1e7 and 1e8 keys, u64 and 16-byte string
//! keys, lesshash's two blocked layouts beside sbbf-rs-safe, fastbloom and
//! Boost.Bloom's one-key call, from the criterion run and the Boost.Bloom
//! driver of `bench/headline.sh` (the headline's window, so the headline's
//! caption holds for it). A row whose figures the run lacks is an error, as
//! in the headline: the table is never partly stale.

use std::collections::HashMap;

use super::headline::{num, ratio_line};
use super::{Bench, Res, lookup};

pub const BEGIN: &str = "<!-- BEGIN generated: one-key (bench/headline.sh; cargo run --release -p lesshash-bench --example bench_report -- --headline BOOST.jsonl) -->";
pub const END: &str = "<!-- END generated: one-key -->";

const SIZES: [&str; 3] = ["1e6", "1e7", "1e8"];
const OPS: [&str; 3] = ["contains_hit", "contains_miss", "insert"];

/// A criterion row: its label and how its id is spelled, as
/// `blocked/<prefix>-<op><suffix>/n=<n>/<variant>`.
struct Row {
    label: &'static str,
    prefix: &'static str,
    suffix: &'static str,
    variant: &'static str,
}

const ROWS: [Row; 6] = [
    Row {
        label: "lesshash blocked (the default), u64",
        prefix: "blocked",
        suffix: "",
        variant: "single",
    },
    Row {
        label: "lesshash split-block, u64",
        prefix: "split-block",
        suffix: "",
        variant: "single",
    },
    Row {
        label: "sbbf-rs-safe, u64",
        prefix: "sbbf-rs-safe",
        suffix: "",
        variant: "peer",
    },
    Row {
        label: "fastbloom, u64",
        prefix: "fastbloom",
        suffix: "",
        variant: "peer",
    },
    Row {
        label: "lesshash blocked, 16-byte keys",
        prefix: "blocked",
        suffix: "-str16",
        variant: "single",
    },
    Row {
        label: "sbbf-rs-safe, 16-byte keys",
        prefix: "sbbf-rs-safe",
        suffix: "-str16",
        variant: "peer",
    },
];

/// The Boost.Bloom driver's one-key row (its `peer` field).
const BOOST_SINGLE: &str = "boost fast_multiblock64<K> (single)";

fn ns(benches: &[Bench], row: &Row, op: &str, n: &str) -> Option<f64> {
    let op = format!("{}-{op}{}", row.prefix, row.suffix);
    let size = format!("n={n}");
    lookup(
        benches,
        &["blocked", op.as_str(), size.as_str(), row.variant],
    )
}

/// The table and its ratios (docs/benchmarks.md, between [`BEGIN`] and
/// [`END`]); `boost` is the driver's lines by (peer, n).
pub fn table(
    benches: &[Bench],
    boost: &HashMap<(String, String), serde_json::Value>,
) -> Res<String> {
    let mut missing = Vec::new();
    let mut s = String::from(
        "| ns per key, one call per key, 1% target: hit / miss / insert | 1e6 | 1e7 | 1e8 |\n\
         |---|---:|---:|---:|\n",
    );
    for row in &ROWS {
        let mut cells = Vec::new();
        for n in SIZES {
            let v: Vec<Option<f64>> = OPS.iter().map(|op| ns(benches, row, op, n)).collect();
            for (op, x) in OPS.iter().zip(&v) {
                if x.is_none() {
                    missing.push(format!(
                        "blocked/{}-{op}{}/n={n}/{}",
                        row.prefix, row.suffix, row.variant
                    ));
                }
            }
            cells.push(triple(&v));
        }
        s.push_str(&format!("| {} | {} |\n", row.label, cells.join(" | ")));
    }
    let mut cells = Vec::new();
    let mut k = None;
    for n in SIZES {
        let Some(r) = boost.get(&(BOOST_SINGLE.to_string(), n.to_string())) else {
            missing.push(format!("{BOOST_SINGLE} at n = {n}"));
            continue;
        };
        k = r.get("k").and_then(serde_json::Value::as_u64);
        cells.push(triple(&[
            num(r, "hit_ns"),
            num(r, "miss_ns"),
            num(r, "insert_ns"),
        ]));
    }
    if !missing.is_empty() {
        return Err(format!(
            "the one-key table needs figures this run lacks (run bench/headline.sh): {}",
            missing.join(", ")
        )
        .into());
    }
    let k = k.map_or("K".to_string(), |k| k.to_string());
    s.push_str(&format!(
        "| Boost.Bloom `fast_multiblock64<{k}>`, u64 (insert with its constructor) | {} |\n",
        cells.join(" | ")
    ));
    s.push('\n');
    s.push_str(&ratios(benches, boost));
    Ok(s)
}

/// The ratios the one-key targets are stated in: above 1, lesshash is
/// slower (queries: the mean of hit and miss).
fn ratios(benches: &[Bench], boost: &HashMap<(String, String), serde_json::Value>) -> String {
    let query = |row: &Row, n: &str| {
        Some((ns(benches, row, OPS[0], n)? + ns(benches, row, OPS[1], n)?) / 2.0)
    };
    let insert = |row: &Row, n: &str| ns(benches, row, OPS[2], n);
    let boost_row = |n: &str| boost.get(&(BOOST_SINGLE.to_string(), n.to_string()));
    let boost_query = |n: &str| {
        let r = boost_row(n)?;
        Some((num(r, "hit_ns")? + num(r, "miss_ns")?) / 2.0)
    };
    let [blocked, split, sbbf, fastbloom, str16, sbbf16] = &ROWS;
    let line = |what: &str, f: &dyn Fn(&str) -> Option<(f64, f64)>| ratio_line(what, &SIZES, f);
    let mut s = String::from(
        "Ratios (queries: the mean of hit and miss; above 1, lesshash is slower):\n\n",
    );
    s.push_str(&line("blocked `contains` against sbbf-rs-safe's", &|n| {
        Some((query(blocked, n)?, query(sbbf, n)?))
    }));
    s.push_str(&line(
        "blocked `contains` against Boost.Bloom's one-key call",
        &|n| Some((query(blocked, n)?, boost_query(n)?)),
    ));
    s.push_str(&line("blocked `contains` against fastbloom's", &|n| {
        Some((query(blocked, n)?, query(fastbloom, n)?))
    }));
    s.push_str(&line(
        "split-block `contains` against sbbf-rs-safe's",
        &|n| Some((query(split, n)?, query(sbbf, n)?)),
    ));
    s.push_str(&line(
        "blocked `contains`, 16-byte keys against u64",
        &|n| Some((query(str16, n)?, query(blocked, n)?)),
    ));
    s.push_str(&line(
        "16-byte keys, blocked `contains` against sbbf-rs-safe's",
        &|n| Some((query(str16, n)?, query(sbbf16, n)?)),
    ));
    s.push_str(&line("blocked `insert` against sbbf-rs-safe's", &|n| {
        Some((insert(blocked, n)?, insert(sbbf, n)?))
    }));
    s.push_str(&line("split-block `insert` against sbbf-rs-safe's", &|n| {
        Some((insert(split, n)?, insert(sbbf, n)?))
    }));
    // The floors of the same window: what the hash alone costs, and what
    // one independent random cache-line load per key costs at each size
    // (the host's caches are shared, so this moves between windows).
    let floor = |id: [&str; 2], n: &str| {
        let op = format!("floor-{}", id[0]);
        let size = format!("n={n}");
        lookup(benches, &["blocked", op.as_str(), size.as_str(), id[1]])
    };
    let cells = |id: [&str; 2]| {
        SIZES
            .iter()
            .map(|n| floor(id, n).map_or(format!("- at {n}"), |v| format!("{v:.2} at {n}")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    s.push_str(&format!(
        "\nFloors in the same run, ns per key: XXH3-128 of the u64 key alone {}; one random \
         cache-line load per key of an array of the filter's size {}.\n",
        cells(["hash", "xxh3-128"]),
        cells(["loads", "loads"]),
    ));
    s
}

fn triple(v: &[Option<f64>]) -> String {
    v.iter()
        .map(|x| x.map_or("-".to_string(), |x| format!("{x:.2}")))
        .collect::<Vec<_>>()
        .join(" / ")
}
