//! The headline table: lesshash's blocked filter against sbbf-rs-safe and
//! Boost.Bloom, from one criterion run and one run of the Boost.Bloom
//! driver in the same quiet window (`bench/headline.sh` runs both and then
//! this). Two forms of one table: the README's five rows and
//! docs/benchmarks.md's, which adds the AVX-512 rows where the run has
//! them. A row whose figures the run lacks is an error (a headline is never
//! partly stale), except the AVX-512 rows, which a machine without AVX-512
//! cannot have.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use lesshash::BloomFilter;

use super::{Bench, Res, command_output, lookup};

pub const BEGIN: &str = "<!-- BEGIN generated: headline (bench/headline.sh; cargo run --release -p lesshash-bench --example bench_report -- --headline BOOST.jsonl) -->";
pub const END: &str = "<!-- END generated: headline -->";

/// The criterion id's `<layout>-<op>/n=<n>/<variant>` tail per cell: hit
/// and miss at 1e6 and 1e7, then inserts (the batch call's, or one call
/// per key for the single-key rows; the AVX-512 single-key row has none).
const SIZES: [&str; 2] = ["1e6", "1e7"];

/// One lesshash or sbbf-rs-safe row: its label, the id prefix
/// (`blocked-` or `sbbf-rs-safe-`), the variant, whether it has inserts,
/// whether the README shows it, and whether the run may lack it (a kernel
/// the machine does not have).
struct Row {
    label: &'static str,
    prefix: &'static str,
    variant: &'static str,
    inserts: bool,
    short: bool,
    optional: bool,
}

const ROWS: [Row; 7] = [
    Row {
        label: "lesshash blocked, batch (`contains_batch`, automatic kernel)",
        prefix: "blocked",
        variant: "auto",
        inserts: true,
        short: true,
        optional: false,
    },
    Row {
        label: "lesshash blocked, batch, AVX-512 kernel",
        prefix: "blocked",
        variant: "kernel-avx512",
        inserts: true,
        short: false,
        optional: true,
    },
    Row {
        label: "lesshash blocked, single key",
        prefix: "blocked",
        variant: "single",
        inserts: true,
        short: true,
        optional: false,
    },
    Row {
        label: "lesshash blocked, batch, folded-multiply hash family",
        prefix: "blocked",
        variant: "auto-fold",
        inserts: true,
        short: false,
        optional: true,
    },
    Row {
        label: "lesshash blocked, single key, folded-multiply hash family",
        prefix: "blocked",
        variant: "single-fold",
        inserts: true,
        short: false,
        optional: true,
    },
    Row {
        label: "lesshash blocked, single key, AVX-512 kernel",
        prefix: "blocked",
        variant: "single-avx512",
        inserts: false,
        short: false,
        optional: true,
    },
    Row {
        label: "sbbf-rs-safe, single key",
        prefix: "sbbf-rs-safe",
        variant: "peer",
        inserts: true,
        short: true,
        optional: false,
    },
];

/// The Boost.Bloom driver's rows (its `peer` field), both shown everywhere.
const BOOST: [(&str, &str); 2] = [
    ("boost fast_multiblock64<K> (single)", "single key"),
    ("boost fast_multiblock64<K> (bulk)", "bulk"),
];

/// The README's table and docs/benchmarks.md's, each with its caption.
pub fn tables(
    benches: &[Bench],
    run: &[HashMap<String, String>],
    boost_path: &Path,
) -> Res<(String, String)> {
    check_window(run, boost_path)?;
    let boost = read_boost(boost_path)?;
    let mut missing = Vec::new();
    let mut short = header();
    let mut full = header();
    for row in &ROWS {
        let mut cells = Vec::new();
        let mut lacking = Vec::new();
        for n in SIZES {
            let pair: Vec<Option<f64>> = ["contains_hit", "contains_miss"]
                .iter()
                .map(|op| {
                    required(
                        benches,
                        &format!("{}-{op}", row.prefix),
                        n,
                        row.variant,
                        &mut lacking,
                    )
                })
                .collect();
            cells.push(pair_cell(pair[0], pair[1]));
        }
        if row.inserts {
            let ins: Vec<Option<f64>> = SIZES
                .iter()
                .map(|n| {
                    let op = format!("{}-insert", row.prefix);
                    required(benches, &op, n, row.variant, &mut lacking)
                })
                .collect();
            cells.push(pair_cell(ins[0], ins[1]));
        } else {
            cells.push(String::new());
        }
        if !lacking.is_empty() {
            if !row.optional {
                missing.extend(lacking);
            }
            continue;
        }
        let line = format!("| {} | {} |\n", row.label, cells.join(" | "));
        if row.short {
            short.push_str(&line);
        }
        full.push_str(&line);
    }
    for (peer, form) in BOOST {
        let mut cells = Vec::new();
        let mut k = None;
        for n in SIZES {
            let Some(r) = boost.get(&(peer.to_string(), n.to_string())) else {
                missing.push(format!("{peer} at n = {n} in {}", boost_path.display()));
                continue;
            };
            k = r.get("k").and_then(serde_json::Value::as_u64);
            cells.push(pair_cell(num(r, "hit_ns"), num(r, "miss_ns")));
        }
        let inserts: Vec<Option<f64>> = SIZES
            .iter()
            .map(|n| {
                boost
                    .get(&(peer.to_string(), n.to_string()))
                    .and_then(|r| num(r, "insert_ns"))
            })
            .collect();
        cells.push(pair_cell(inserts[0], inserts[1]));
        if cells.len() != SIZES.len() + 1 {
            continue;
        }
        let k = k.map_or("K".to_string(), |k| k.to_string());
        let line = format!(
            "| Boost.Bloom `fast_multiblock64<{k}>`, {form} | {} |\n",
            cells.join(" | ")
        );
        short.push_str(&line);
        full.push_str(&line);
    }
    if !missing.is_empty() {
        return Err(format!(
            "the headline needs figures this run lacks (run bench/headline.sh): {}",
            missing.join(", ")
        )
        .into());
    }
    full.push('\n');
    full.push_str(&ratios(benches, &boost));
    let reps = boost
        .values()
        .find_map(|r| r.get("reps").and_then(serde_json::Value::as_u64))
        .unwrap_or(0);
    let caption = caption(run, reps);
    short.push('\n');
    short.push_str(&caption);
    full.push('\n');
    full.push_str(&caption);
    Ok((short, full))
}

/// The ratios the targets are stated in (mean of hit and miss, per size):
/// above 1, lesshash is slower.
fn ratios(benches: &[Bench], boost: &HashMap<(String, String), serde_json::Value>) -> String {
    let ours = |variant: &str, prefix: &str, n: &str| {
        ["contains_hit", "contains_miss"]
            .iter()
            .try_fold(0.0, |acc, op| {
                let a = format!("{prefix}-{op}");
                let b = format!("n={n}");
                lookup(benches, &["blocked", a.as_str(), b.as_str(), variant])
                    .map(|v| acc + v / 2.0)
            })
    };
    let boost_mean = |peer: &str, n: &str| {
        let r = boost.get(&(peer.to_string(), n.to_string()))?;
        Some((num(r, "hit_ns")? + num(r, "miss_ns")?) / 2.0)
    };
    let line = |what: &str, f: &dyn Fn(&str) -> Option<(f64, f64)>| ratio_line(what, &SIZES, f);
    let mut s = String::from(
        "Ratios of the queries (the mean of hit and miss; above 1, lesshash is slower):\n\n",
    );
    s.push_str(&line(
        "lesshash's batch against Boost.Bloom's bulk call",
        &|n| Some((ours("auto", "blocked", n)?, boost_mean(BOOST[1].0, n)?)),
    ));
    s.push_str(&line(
        "lesshash's single key against sbbf-rs-safe's",
        &|n| {
            Some((
                ours("single", "blocked", n)?,
                ours("peer", "sbbf-rs-safe", n)?,
            ))
        },
    ));
    s.push_str(&line("lesshash's single key against Boost.Bloom's", &|n| {
        Some((ours("single", "blocked", n)?, boost_mean(BOOST[0].0, n)?))
    }));
    s.push_str(&line("lesshash's single key against its batch", &|n| {
        Some((ours("single", "blocked", n)?, ours("auto", "blocked", n)?))
    }));
    let insert = |prefix: &str, n: &str, variant: &str| {
        let op = format!("{prefix}-insert");
        let size = format!("n={n}");
        lookup(benches, &["blocked", op.as_str(), size.as_str(), variant])
    };
    let boost_insert =
        |peer: &str, n: &str| num(boost.get(&(peer.to_string(), n.to_string()))?, "insert_ns");
    s.push_str("\nRatios of the inserts:\n\n");
    s.push_str(&line(
        "lesshash's single-key insert against sbbf-rs-safe's",
        &|n| {
            Some((
                insert("blocked", n, "single")?,
                insert("sbbf-rs-safe", n, "peer")?,
            ))
        },
    ));
    s.push_str(&line(
        "lesshash's single-key insert against Boost.Bloom's",
        &|n| {
            Some((
                insert("blocked", n, "single")?,
                boost_insert(BOOST[0].0, n)?,
            ))
        },
    ));
    s.push_str(&line(
        "lesshash's batch insert against Boost.Bloom's bulk insert",
        &|n| Some((insert("blocked", n, "auto")?, boost_insert(BOOST[1].0, n)?)),
    ));
    s
}

/// One bullet of ratios: `what`, then a / b per size from `f` (`-` where
/// the run lacks a figure).
pub fn ratio_line(what: &str, sizes: &[&str], f: &dyn Fn(&str) -> Option<(f64, f64)>) -> String {
    let cells: Vec<String> = sizes
        .iter()
        .map(|n| match f(n) {
            Some((a, b)) => format!("{:.2}x at {n}", a / b),
            None => format!("- at {n}"),
        })
        .collect();
    format!("* {what}: {}.\n", cells.join(", "))
}

/// The ns per key of `blocked/<op>/n=<n>/<variant>`, or its id added to
/// `lacking`.
fn required(
    benches: &[Bench],
    op: &str,
    n: &str,
    variant: &str,
    lacking: &mut Vec<String>,
) -> Option<f64> {
    let size = format!("n={n}");
    let id = ["blocked", op, size.as_str(), variant];
    let v = lookup(benches, &id);
    if v.is_none() {
        lacking.push(id.join("/"));
    }
    v
}

fn header() -> String {
    "| ns per key, u64 keys, 1% target | 1e6 hit / miss | 1e7 hit / miss | insert 1e6 / 1e7 |\n\
     |---|---:|---:|---:|\n"
        .to_string()
}

fn pair_cell(a: Option<f64>, b: Option<f64>) -> String {
    match (a, b) {
        (Some(a), Some(b)) => format!("{a:.2} / {b:.2}"),
        _ => String::new(),
    }
}

pub fn num(r: &serde_json::Value, field: &str) -> Option<f64> {
    r.get(field).and_then(serde_json::Value::as_f64)
}

/// The table puts the two runs side by side only if they shared a window:
/// the Boost.Bloom file must have been written after the last criterion
/// run ended and within ten minutes of it (as `bench/headline.sh` does), so
/// a later criterion run cannot be paired with older Boost.Bloom figures.
fn check_window(run: &[HashMap<String, String>], boost_path: &Path) -> Res<()> {
    let end: u64 = super::run_field(run, "end", "unix")
        .parse()
        .map_err(|_| "run.csv has no finished criterion run; run bench/headline.sh")?;
    let written = std::fs::metadata(boost_path)
        .and_then(|m| m.modified())
        .map_err(|e| format!("{}: {e}", boost_path.display()))?
        .duration_since(std::time::UNIX_EPOCH)?
        .as_secs();
    if written < end || written > end + 600 {
        return Err(format!(
            "{} was written {}s from the end of the last criterion run; the headline \
             needs both from one window: run bench/headline.sh",
            boost_path.display(),
            written as i64 - end as i64
        )
        .into());
    }
    Ok(())
}

/// The Boost.Bloom driver's JSON lines, by (peer, n as `1e6`/`1e7`).
pub fn read_boost(path: &Path) -> Res<HashMap<(String, String), serde_json::Value>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("reading the Boost.Bloom results {}: {e}", path.display()))?;
    let mut out = HashMap::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| format!("{} line {}: {e}", path.display(), i + 1))?;
        let (Some(peer), Some(n)) = (
            v.get("peer").and_then(serde_json::Value::as_str),
            v.get("n").and_then(serde_json::Value::as_f64),
        ) else {
            continue;
        };
        let n = format!("1e{}", n.log10().round());
        out.insert((peer.to_string(), n), v);
    }
    Ok(out)
}

/// Machine, toolchain, commit, date and load of the run, and the filters'
/// sizes: what a reader needs to weigh the figures.
fn caption(run: &[HashMap<String, String>], boost_reps: u64) -> String {
    let field = |event: &str, col: &str| super::run_field(run, event, col);
    let start = field("start", "unix");
    let date = command_output(
        "date",
        &["-u", "-d", &format!("@{start}"), "+%Y-%m-%d %H:%M UTC"],
    );
    let cpu = super::cpu_model();
    let threads = std::thread::available_parallelism().map_or(0, |n| n.get());
    let avx512 = if std::arch::is_x86_feature_detected!("avx512f") {
        " (AVX-512)"
    } else {
        ""
    };
    let mut commit = command_output("git", &["rev-parse", "--short", "HEAD"]);
    if !command_output("git", &["status", "--porcelain", "--untracked-files=no"]).is_empty() {
        commit.push_str(" with uncommitted changes");
    }
    let (bpk, fpr) = BloomFilter::with_fpr(1_000_000, 0.01)
        .map(|f| {
            let rate = f
                .layout()
                .fpr(f.scheme(), f.num_bits(), 1_000_000, f.num_hashes());
            (f.num_bits() as f64 / 1e6, rate)
        })
        .unwrap_or((f64::NAN, f64::NAN));
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{cpu}{avx512}, {threads} hardware threads; {}; commit {commit}; \
         {date}, load {} at the start and {} at the end of the criterion run. \
         Criterion medians (Boost.Bloom: the median of {boost_reps} rounds of a C++ \
         driver around `fast_multiblock64<K>` built with `-O3 -march=native`, \
         inserts with the constructor), every filter in the same quiet window. \
         lesshash's filter is sized for 1% ({fpr:.2}% by its layout's formula) at {bpk:.2} bits/key, \
         sbbf-rs-safe's by Parquet's rule at 10 bits/key.",
        command_output("rustc", &["-V"]),
        field("start", "loadavg"),
        field("end", "loadavg"),
        fpr = fpr * 100.0,
    );
    s
}
