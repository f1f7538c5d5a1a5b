//! Turns the results of `cargo bench --bench lesshash` into the
//! benchmarks page's tables and SVG plots: by default a report under
//! `target/bench-report/` (`benchmarks.md`, `figures/`), so a trial run
//! never edits the docs; `--update-docs` rewrites docs/benchmarks.md's
//! generated part and docs/figures/.
//!
//! ```sh
//! cargo bench --bench lesshash
//! cargo run --release -p lesshash-bench --example bench_report                   # target/bench-report/
//! cargo run --release -p lesshash-bench --example bench_report -- --update-docs  # docs/
//! ```
//!
//! Reads criterion's `target/criterion/**/new/{benchmark,estimates}.json`
//! (the median of each benchmark, divided by its `Throughput::Elements`, is
//! the ns/key shown) and the side results the benches write under
//! `target/lesshash-bench/` (bits/key and measured FPR of each peer, the
//! actual size of each throughput filter, the run's start and end; the
//! "Run" line shows the last `cargo bench` invocation recorded, so generate
//! the report right after the full run it describes). Only
//! the part of docs/benchmarks.md between the `bench_report` markers is
//! rewritten; other sections of the page are kept as they are.
//!
//! Options: `--target DIR` (default `$CARGO_TARGET_DIR` or `target`),
//! `--out FILE` (default `<target>/bench-report/benchmarks.md`), `--figures
//! DIR` (default `<target>/bench-report/figures`), `--update-docs` (both to
//! docs/: `docs/benchmarks.md`, `docs/figures`).
//!
//! `--headline BOOST.jsonl` writes the headline table instead (module
//! `headline`): the blocked filter's rows of the criterion run beside the
//! Boost.Bloom driver's JSON lines from the same window, to
//! `<target>/bench-report/headline.md`, or with `--update-docs` between the
//! `headline` markers of README.md (five rows) and docs/benchmarks.md (with
//! the AVX-512 rows), and the one-key table (module `one_key`: one call
//! per key at 1e6, 1e7 and 1e8, u64 and 16-byte keys, beside sbbf-rs-safe,
//! fastbloom and Boost.Bloom) between docs/benchmarks.md's `one-key`
//! markers. `bench/headline.sh` runs the benches, the driver and this in
//! one quiet window.

#![forbid(unsafe_code)]

use std::collections::{BTreeSet, HashMap};
use std::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use plotters::prelude::*;

mod headline;
mod one_key;

type Res<T> = Result<T, Box<dyn Error>>;

const BEGIN: &str = "<!-- BEGIN generated: bench_report (cargo run --release -p lesshash-bench --example bench_report) -->";
const END: &str = "<!-- END generated: bench_report -->";

/// A line-plot panel: its title and its labelled series of (x, y) points.
type LinePanel = (String, Vec<(String, Vec<(f64, f64)>)>);

/// One criterion benchmark: its id split at `/` and its median ns per key.
#[derive(Debug, Clone)]
struct Bench {
    parts: Vec<String>,
    ns_per_key: f64,
}

fn main() -> Res<()> {
    // The repository root (this example lives in bench/), so that the
    // defaults do not depend on where it is run from.
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("target"));
    let (mut out, mut figures, mut boost, mut update_docs) = (None, None, None, false);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--target" => target = PathBuf::from(value()?),
            "--out" => out = Some(PathBuf::from(value()?)),
            "--figures" => figures = Some(PathBuf::from(value()?)),
            "--headline" => boost = Some(PathBuf::from(value()?)),
            "--update-docs" => {
                update_docs = true;
                out = Some(repo.join("docs/benchmarks.md"));
                figures = Some(repo.join("docs/figures"));
            }
            _ => return Err(format!("unknown argument {a} (see the example's docs)").into()),
        }
    }
    // The plots are linked as `figures/...` from the page, so by default
    // they go beside it.
    let report = target.join("bench-report");
    let out = out.unwrap_or_else(|| report.join("benchmarks.md"));
    let figures = figures.unwrap_or_else(|| report.join("figures"));
    let benches = read_criterion(&target.join("criterion"))?;
    if benches.is_empty() {
        return Err(format!(
            "no criterion results under {}; run `cargo bench --bench lesshash` first",
            target.join("criterion").display()
        )
        .into());
    }
    let side = target.join("lesshash-bench");
    let run = read_csv(&side.join("run.csv"));
    if let Some(boost) = boost {
        let (short, full) = headline::tables(&benches, &run, &boost)?;
        let one_key = one_key::table(&benches, &headline::read_boost(&boost)?)?;
        let (begin, end) = (headline::BEGIN, headline::END);
        if update_docs {
            splice(&repo.join("README.md"), &short, begin, end)?;
            let page = repo.join("docs/benchmarks.md");
            splice(&page, &full, begin, end)?;
            splice(&page, &one_key, one_key::BEGIN, one_key::END)?;
            eprintln!(
                "wrote the headline into README.md and docs/benchmarks.md (with the one-key table)"
            );
        } else {
            let out = report.join("headline.md");
            std::fs::create_dir_all(&report)?;
            std::fs::write(
                &out,
                format!(
                    "README.md:\n\n{short}\ndocs/benchmarks.md:\n\n{full}\none key at a time:\n\n{one_key}"
                ),
            )?;
            eprintln!("wrote {}", out.display());
        }
        return Ok(());
    }
    let peers = read_csv(&side.join("peers.csv"));
    let sizes = read_csv(&side.join("throughput.csv"));
    std::fs::create_dir_all(&figures)?;

    let mut md = String::new();
    header(&mut md, &run)?;
    hashes_saved(&mut md, &benches, &figures)?;
    throughput(&mut md, &benches, &sizes, &figures)?;
    peers_section(&mut md, &benches, &peers, &figures)?;
    splice(&out, &md, BEGIN, END)?;
    eprintln!(
        "wrote {} and plots under {}",
        out.display(),
        figures.display()
    );
    Ok(())
}

/// Every `new/benchmark.json` under `dir` with its `new/estimates.json`.
fn read_criterion(dir: &Path) -> Res<Vec<Bench>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "new") {
                    if let Some(b) = read_bench(&p)? {
                        out.push(b);
                    }
                } else {
                    stack.push(p);
                }
            }
        }
    }
    Ok(out)
}

fn read_bench(new: &Path) -> Res<Option<Bench>> {
    let (Ok(meta), Ok(est)) = (
        std::fs::read_to_string(new.join("benchmark.json")),
        std::fs::read_to_string(new.join("estimates.json")),
    ) else {
        return Ok(None);
    };
    let meta: serde_json::Value = serde_json::from_str(&meta)?;
    let est: serde_json::Value = serde_json::from_str(&est)?;
    let full_id = meta["full_id"]
        .as_str()
        .ok_or("benchmark.json: no full_id")?;
    let elements = meta["throughput"]["Elements"].as_f64().unwrap_or(1.0);
    let median = est["median"]["point_estimate"]
        .as_f64()
        .ok_or("estimates.json: no median")?;
    Ok(Some(Bench {
        parts: full_id.split('/').map(str::to_owned).collect(),
        ns_per_key: median / elements,
    }))
}

/// A CSV file with a header line, as maps from column to value; the last
/// line wins for repeated keys (callers dedupe). Missing file: no rows.
fn read_csv(path: &Path) -> Vec<HashMap<String, String>> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut lines = text.lines();
    let Some(head) = lines.next() else {
        return Vec::new();
    };
    let cols: Vec<&str> = head.split(',').collect();
    lines
        .filter(|l| !l.is_empty() && *l != head)
        .map(|l| {
            cols.iter()
                .zip(l.split(','))
                .map(|(c, v)| (c.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

fn lookup(benches: &[Bench], id: &[&str]) -> Option<f64> {
    benches
        .iter()
        .find(|b| b.parts.len() == id.len() && b.parts.iter().zip(id).all(|(a, b)| a == b))
        .map(|b| b.ns_per_key)
}

fn command_output(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_owned())
        .unwrap_or_else(|| "unknown".into())
}

/// The CPU's model name, as /proc/cpuinfo gives it.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// A column of the last `start` or `end` event of run.csv (`?` if none).
fn run_field(run: &[HashMap<String, String>], event: &str, col: &str) -> String {
    run.iter()
        .rev()
        .find(|r| r.get("event").is_some_and(|e| e == event))
        .and_then(|r| r.get(col).cloned())
        .unwrap_or_else(|| "?".into())
}

fn header(md: &mut String, run: &[HashMap<String, String>]) -> Res<()> {
    let cpu = cpu_model();
    let threads = std::thread::available_parallelism().map_or(0, |n| n.get());
    let field = |event: &str, col: &str| run_field(run, event, col);
    let date = |secs: String| {
        secs.parse::<i64>()
            .map(|s| {
                command_output(
                    "date",
                    &["-u", "-d", &format!("@{s}"), "+%Y-%m-%d %H:%M UTC"],
                )
            })
            .unwrap_or(secs)
    };
    writeln!(md, "### Run\n")?;
    writeln!(
        md,
        "- Machine: {cpu}, {threads} hardware threads. Timings swing by tens of \
         percent under load: the load averages below say whether the run was \
         quiet (below 0.5 at the start; one benchmark thread adds about 1.0); \
         compare ratios within this one run."
    )?;
    writeln!(md, "- Toolchain: {}.", command_output("rustc", &["-V"]))?;
    writeln!(
        md,
        "- Run: `{}` from {} to {}; load average (1 min) {} at the start, {} at the end.",
        field("start", "args"),
        date(field("start", "unix")),
        date(field("end", "unix")),
        field("start", "loadavg"),
        field("end", "loadavg"),
    )?;
    writeln!(
        md,
        "- Report: `cargo run --release -p lesshash-bench --example bench_report`. Times are criterion \
         medians per key (the median of the samples' per-iteration time divided by \
         the keys per iteration), in ns.\n"
    )?;
    Ok(())
}

const KS: [u32; 5] = [3, 6, 8, 11, 16];
const KEY_SIZES: [u64; 4] = [8, 16, 64, 256];
const TWO_HASH: [&str; 2] = ["double", "enhanced-cube"];

fn hashes_saved(md: &mut String, benches: &[Bench], figures: &Path) -> Res<()> {
    let groups = [
        ("hashes_saved_index", "index computation only (no memory)"),
        (
            "hashes_saved_cache",
            "insert into a 16 KiB classic filter (L1)",
        ),
        (
            "hashes_saved_dram",
            "insert into a 256 MiB classic filter (DRAM)",
        ),
    ];
    writeln!(
        md,
        "### Hashes saved: one XXH3-128 against k independent hashes\n"
    )?;
    writeln!(
        md,
        "`independent` computes k XXH3-64 per key (k hash computations, k x key bytes \
         hashed); `double` and `enhanced-cube` compute one XXH3-128 (1 computation, \
         key bytes hashed once) and derive the k indices by additions. Speedup = \
         independent / double-hashing time. The bound is k t64 / t128, one \
         XXH3-64 and one XXH3-128 of the same keys timed alone in the same run \
         (`hashes_saved_bound`): the speedup if the indices and the bits cost \
         nothing. \
         ![hashes-saved speedup](figures/bench-hashes-saved.svg)\n"
    )?;
    let mut series: Vec<LinePanel> = Vec::new();
    for (group, what) in groups {
        let mut rows = String::new();
        let mut lines = Vec::new();
        for size in KEY_SIZES {
            let mut points = Vec::new();
            for k in KS {
                let param = format!("k={k}");
                let key = format!("key={size}");
                let t = |s: &str| lookup(benches, &[group, s, &param, &key]);
                let Some(ind) = t("independent") else {
                    continue;
                };
                let (d, e) = (t(TWO_HASH[0]), t(TWO_HASH[1]));
                let fmt = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.1}"));
                let ratio = |x: Option<f64>| x.map_or("-".into(), |x| format!("{:.2}x", ind / x));
                // The bound k * t64 / t128 from the same run, and each
                // speedup as a share of it.
                let hash = |h: &str| lookup(benches, &["hashes_saved_bound", h, &key]);
                let bound = hash("xxh3-64")
                    .zip(hash("xxh3-128"))
                    .map(|(t64, t128)| f64::from(k) * t64 / t128);
                let share = |x: Option<f64>| match (x, bound) {
                    (Some(x), Some(b)) => format!("{:.0}%", 100.0 * ind / x / b),
                    _ => "-".into(),
                };
                writeln!(
                    rows,
                    "| {size} | {k} | {k} / 1 | {} / {size} | {:.1} | {} | {} | **{}** | {} | {} | {} / {} |",
                    u64::from(k) * size,
                    ind,
                    fmt(d),
                    fmt(e),
                    ratio(d),
                    ratio(e),
                    bound.map_or("-".into(), |b| format!("{b:.2}x")),
                    share(d),
                    share(e)
                )?;
                if let Some(d) = d {
                    points.push((f64::from(k), ind / d));
                }
            }
            if !points.is_empty() {
                lines.push((format!("{size}-byte keys"), points));
            }
        }
        if rows.is_empty() {
            continue;
        }
        writeln!(md, "#### {what} (`{group}`)\n")?;
        writeln!(
            md,
            "| key bytes | k | hashes/key (ind. / 2-hash) | bytes hashed (ind. / 2-hash) \
             | independent ns | double ns | enhanced-cube ns | speedup double | speedup enhanced \
             | bound k t64/t128 | share of the bound (double / enhanced) |"
        )?;
        writeln!(
            md,
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
        )?;
        md.push_str(&rows);
        md.push('\n');
        series.push((what.to_owned(), lines));
    }
    plot_lines(
        &figures.join("bench-hashes-saved.svg"),
        "speedup of double hashing over k independent hashes",
        "k",
        "speedup (x)",
        &series,
        false,
    )
}

fn throughput(
    md: &mut String,
    benches: &[Bench],
    sizes: &[HashMap<String, String>],
    figures: &Path,
) -> Res<()> {
    // Ids: throughput/<layout>/<op>/<mode>/<size>.
    let rows: Vec<&Bench> = benches
        .iter()
        .filter(|b| b.parts.len() == 5 && b.parts[0] == "throughput")
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    let layouts: BTreeSet<&str> = rows.iter().map(|b| b.parts[1].as_str()).collect();
    let modes: BTreeSet<&str> = rows.iter().map(|b| b.parts[3].as_str()).collect();
    let ops = ["hit", "miss", "mixed", "insert"];
    let mut size_names: Vec<&str> = rows.iter().map(|b| b.parts[4].as_str()).collect();
    size_names.sort_by_key(|s| size_bytes(s));
    size_names.dedup();
    let actual: HashMap<(String, String), (String, String, String)> = sizes
        .iter()
        .filter_map(|r| {
            Some((
                (r.get("layout")?.clone(), r.get("size")?.clone()),
                (
                    r.get("bytes")?.clone(),
                    r.get("n")?.clone(),
                    r.get("k")?.clone(),
                ),
            ))
        })
        .collect();

    writeln!(md, "### Throughput by layout and filter size\n")?;
    writeln!(
        md,
        "u64 keys; a filter of nominal size S is built for n = 8S / 9.585 keys at 1% \
         (so a classic filter is S bytes) by each layout's own formula, and filled \
         with n keys before queries are timed. `hit` queries members, `miss` \
         non-members, `mixed` half and half in random order; `insert` adds fresh \
         keys. `single` calls `insert`/`contains` per key, `batch` \
         `insert_batch`/`contains_batch` on 1024 keys. ns/key:\n\n\
         ![throughput](figures/bench-throughput.svg)\n"
    )?;
    let cols: Vec<(String, String)> = ops
        .iter()
        .flat_map(|op| modes.iter().map(move |m| (op.to_string(), m.to_string())))
        .collect();
    write!(md, "| layout | size | bytes | n | k |")?;
    for (op, m) in &cols {
        write!(md, " {op} {m} |")?;
    }
    writeln!(md)?;
    writeln!(
        md,
        "|---|---:|---:|---:|---:|{}",
        "---:|".repeat(cols.len())
    )?;
    let mut series: Vec<LinePanel> = ops.iter().map(|op| (op.to_string(), Vec::new())).collect();
    for layout in &layouts {
        for size in &size_names {
            let (bytes, n, k) = actual
                .get(&(layout.to_string(), size.to_string()))
                .cloned()
                .unwrap_or_else(|| ("?".into(), "?".into(), "?".into()));
            write!(md, "| {layout} | {size} | {bytes} | {n} | {k} |")?;
            for (op, m) in &cols {
                match lookup(benches, &["throughput", layout, op, m, size]) {
                    Some(t) => write!(md, " {t:.1} |")?,
                    None => write!(md, " - |")?,
                }
            }
            writeln!(md)?;
        }
        for (op, lines) in &mut series {
            for m in &modes {
                let points: Vec<(f64, f64)> = size_names
                    .iter()
                    .filter_map(|s| {
                        let t = lookup(benches, &["throughput", layout, op, m, s])?;
                        Some(((size_bytes(s) as f64).log2(), t))
                    })
                    .collect();
                if !points.is_empty() {
                    lines.push((format!("{layout} {m}"), points));
                }
            }
        }
    }
    writeln!(md)?;

    // SIMD against scalar: batch modes named `batch-<kernel>`.
    let kernels: Vec<&str> = modes
        .iter()
        .filter_map(|m| m.strip_prefix("batch-"))
        .collect();
    writeln!(md, "#### SIMD kernels against the scalar kernel\n")?;
    if kernels.contains(&"scalar") && kernels.len() > 1 {
        writeln!(
            md,
            "Speedup of each kernel over `scalar` (batch, hit), per layout and size:\n"
        )?;
        write!(md, "| layout | size |")?;
        for k in kernels.iter().filter(|k| **k != "scalar") {
            write!(md, " {k} |")?;
        }
        writeln!(md)?;
        writeln!(md, "|---|---:|{}", "---:|".repeat(kernels.len() - 1))?;
        for layout in &layouts {
            for size in &size_names {
                write!(md, "| {layout} | {size} |")?;
                let scalar = lookup(
                    benches,
                    &["throughput", layout, "hit", "batch-scalar", size],
                );
                for k in kernels.iter().filter(|k| **k != "scalar") {
                    let mode = format!("batch-{k}");
                    match (
                        scalar,
                        lookup(benches, &["throughput", layout, "hit", &mode, size]),
                    ) {
                        (Some(s), Some(t)) => write!(md, " {:.2}x |", s / t)?,
                        _ => write!(md, " - |")?,
                    }
                }
                writeln!(md)?;
            }
        }
        writeln!(md)?;
    } else {
        writeln!(
            md,
            "Not in this run: the crate has no way yet to force a kernel (the batch \
             SIMD kernels arrive with the blocked layouts); the bench's `Mode` gains \
             `batch-<kernel>` variants then and this table fills in.\n"
        )?;
    }
    plot_lines(
        &figures.join("bench-throughput.svg"),
        "ns/key by filter size",
        "filter size (bytes, nominal)",
        "ns/key",
        &series,
        true,
    )
}

fn size_bytes(name: &str) -> u64 {
    let (num, unit) = name.split_at(
        name.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(name.len()),
    );
    let n: u64 = num.parse().unwrap_or(0);
    n << match unit {
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        _ => 0,
    }
}

fn peers_section(
    md: &mut String,
    benches: &[Bench],
    peers: &[HashMap<String, String>],
    figures: &Path,
) -> Res<()> {
    // Ids: peers/<peer>/<op>/<key>/p=<fpr>.
    let rows: Vec<&Bench> = benches
        .iter()
        .filter(|b| b.parts.len() == 5 && b.parts[0] == "peers")
        .collect();
    if rows.is_empty() {
        return Ok(());
    }
    // The last line per (peer, key, p) wins: a later run replaces an older one.
    let mut side: HashMap<(String, String, String), (f64, f64, String)> = HashMap::new();
    for r in peers {
        let (Some(peer), Some(key), Some(p), Some(bpk), Some(fpr), Some(fp)) = (
            r.get("peer"),
            r.get("key"),
            r.get("target_fpr"),
            r.get("bits_per_key"),
            r.get("measured_fpr"),
            r.get("false_positives"),
        ) else {
            continue;
        };
        side.insert(
            (peer.clone(), key.clone(), format!("p={p}")),
            (
                bpk.parse().unwrap_or(f64::NAN),
                fpr.parse().unwrap_or(f64::NAN),
                fp.clone(),
            ),
        );
    }
    // Peers in first-seen order of the registration (lesshash first).
    let mut order: Vec<&str> = Vec::new();
    for b in &rows {
        if !order.contains(&b.parts[1].as_str()) {
            order.push(&b.parts[1]);
        }
    }
    order.sort_by_key(|p| (!p.starts_with("lesshash"), *p));
    let cases: BTreeSet<(&str, &str)> = rows
        .iter()
        .map(|b| (b.parts[3].as_str(), b.parts[4].as_str()))
        .collect();
    writeln!(md, "### lesshash against other Rust Bloom filters\n")?;
    writeln!(
        md,
        "n = 1e6 keys; each filter sized by its own rule for the target rate and \
         filled with the same keys; FPR measured on 1e6 non-members once, outside \
         the timing. ns/key, single-key calls, hashing included.\n\n\
         ![peers](figures/bench-peers.svg)\n"
    )?;
    let mut panels: Vec<Panel> = Vec::new();
    // 1% before 0.1%, u64 before str16.
    let mut cases: Vec<(&str, &str)> = cases.into_iter().collect();
    cases.sort_by(|a, b| {
        let pa: f64 = a.1[2..].parse().unwrap_or(0.0);
        let pb: f64 = b.1[2..].parse().unwrap_or(0.0);
        pb.total_cmp(&pa).then(b.0.cmp(a.0))
    });
    for (key, p) in cases {
        let target: f64 = p[2..].parse().unwrap_or(f64::NAN);
        writeln!(md, "#### {key} keys, target FPR {}%\n", 100.0 * target)?;
        writeln!(
            md,
            "| filter | bits/key | measured FPR | insert | hit | miss |\n|---|---:|---:|---:|---:|---:|"
        )?;
        let mut bars = Vec::new();
        for peer in &order {
            let t = |op: &str| lookup(benches, &["peers", peer, op, key, p]);
            let (i, h, m) = (t("insert"), t("hit"), t("miss"));
            if i.is_none() && h.is_none() && m.is_none() {
                continue;
            }
            let (bpk, fpr, fp) = side
                .get(&(peer.to_string(), key.to_owned(), p.to_owned()))
                .map(|(a, b, c)| (format!("{a:.2}"), format!("{:.3}%", 100.0 * b), c.clone()))
                .unwrap_or_else(|| ("?".into(), "?".into(), "?".into()));
            let f = |x: Option<f64>| x.map_or("-".into(), |x| format!("{x:.1}"));
            let name = if peer.starts_with("lesshash") {
                format!("**{peer}**")
            } else {
                peer.to_string()
            };
            writeln!(
                md,
                "| {name} | {bpk} | {fpr} ({fp}) | {} | {} | {} |",
                f(i),
                f(h),
                f(m)
            )?;
            bars.push((
                peer.to_string(),
                format!("{bpk} b/key, FPR {fpr}"),
                [i.unwrap_or(0.0), h.unwrap_or(0.0), m.unwrap_or(0.0)],
            ));
        }
        writeln!(md)?;
        panels.push((format!("{key} keys, target {}%", 100.0 * target), bars));
    }
    plot_bars(&figures.join("bench-peers.svg"), &panels)
}

/// Panels of line series: `(panel title, [(series label, points)])`.
fn plot_lines(
    path: &Path,
    title: &str,
    x_desc: &str,
    y_desc: &str,
    panels: &[LinePanel],
    log: bool,
) -> Res<()> {
    let panels: Vec<_> = panels.iter().filter(|(_, l)| !l.is_empty()).collect();
    if panels.is_empty() {
        return Ok(());
    }
    // One colour per series label across all panels.
    let mut labels: Vec<&str> = Vec::new();
    for (_, lines) in &panels {
        for (label, _) in lines {
            if !labels.contains(&label.as_str()) {
                labels.push(label);
            }
        }
    }
    let colour = |label: &str| {
        Palette99::pick(labels.iter().position(|l| *l == label).unwrap_or(0)).to_rgba()
    };
    let cols = panels.len().min(2);
    let rows = panels.len().div_ceil(cols);
    let root =
        SVGBackend::new(path, (560 * cols as u32, 420 * rows as u32 + 30)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title, ("sans-serif", 20))?;
    let areas = root.split_evenly((rows, cols));
    for ((name, lines), area) in panels.iter().zip(areas) {
        let pts = lines.iter().flat_map(|(_, p)| p.iter());
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for &(x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y0 = y0.min(y);
            y1 = y1.max(y);
        }
        let mut chart = ChartBuilder::on(&area);
        chart
            .caption(name.as_str(), ("sans-serif", 15))
            .margin(12)
            .x_label_area_size(35)
            .y_label_area_size(50);
        if log {
            // x is log2(bytes): one label per power of two.
            let mut c =
                chart.build_cartesian_2d(x0 - 0.5..x1 + 0.5, (y0 / 1.3..y1 * 1.3).log_scale())?;
            c.configure_mesh()
                .x_desc(x_desc)
                .y_desc(y_desc)
                .x_labels((x1 - x0) as usize + 2)
                .x_label_formatter(&|x| {
                    // Only the measured sizes are labelled.
                    let measured = lines
                        .iter()
                        .flat_map(|(_, p)| p.iter())
                        .any(|&(px, _)| (px - x).abs() < 1e-6);
                    if measured {
                        human_bytes(x.exp2())
                    } else {
                        String::new()
                    }
                })
                .y_label_formatter(&|y| format!("{y:.0}"))
                .light_line_style(WHITE)
                .draw()?;
            for (label, p) in lines {
                let color = colour(label);
                c.draw_series(LineSeries::new(p.iter().copied(), color.stroke_width(2)))?
                    .label(label.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
                c.draw_series(p.iter().map(|&q| Circle::new(q, 3, color.filled())))?;
            }
            c.configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .label_font(("sans-serif", 11))
                .draw()?;
        } else {
            let mut c = chart.build_cartesian_2d(x0 - 0.5..x1 + 0.5, 0.0..y1 * 1.15)?;
            c.configure_mesh()
                .x_desc(x_desc)
                .y_desc(y_desc)
                .x_label_formatter(&|x| format!("{x:.0}"))
                .y_label_formatter(&|y| format!("{y:.1}"))
                .light_line_style(WHITE)
                .draw()?;
            for (label, p) in lines {
                let color = colour(label);
                c.draw_series(LineSeries::new(p.iter().copied(), color.stroke_width(2)))?
                    .label(label.as_str())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color));
                c.draw_series(p.iter().map(|&q| Circle::new(q, 3, color.filled())))?;
            }
            // The break-even line: below 1x double hashing would be slower.
            c.draw_series(LineSeries::new(
                [(x0 - 0.5, 1.0), (x1 + 0.5, 1.0)],
                BLACK.mix(0.4),
            ))?;
            c.configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .label_font(("sans-serif", 11))
                .draw()?;
        }
    }
    root.present()?;
    Ok(())
}

fn human_bytes(x: f64) -> String {
    let x = x.round() as u64;
    if x >= 1 << 30 {
        format!("{}GiB", x >> 30)
    } else if x >= 1 << 20 {
        format!("{}MiB", x >> 20)
    } else if x >= 1 << 10 {
        format!("{}KiB", x >> 10)
    } else {
        format!("{x}B")
    }
}

/// A bar-chart panel: its title and, per peer, the name, a note drawn above
/// its bars (bits/key and measured FPR) and the (insert, hit, miss) ns/key.
type Panel = (String, Vec<(String, String, [f64; 3])>);

/// Grouped bars (insert, hit, miss) per peer, one panel per case.
fn plot_bars(path: &Path, panels: &[Panel]) -> Res<()> {
    if panels.is_empty() {
        return Ok(());
    }
    let cols = panels.len().min(2);
    let rows = panels.len().div_ceil(cols);
    let root =
        SVGBackend::new(path, (760 * cols as u32, 420 * rows as u32 + 30)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        "ns/key against peers (n = 1e6; bits/key and measured FPR in docs/benchmarks.md)",
        ("sans-serif", 18),
    )?;
    let ops = ["insert", "hit", "miss"];
    for ((name, bars), area) in panels.iter().zip(root.split_evenly((rows, cols))) {
        let y1 = bars
            .iter()
            .flat_map(|(_, _, v)| v.iter().copied())
            .fold(0.0, f64::max);
        let names: Vec<String> = bars.iter().map(|(n, _, _)| n.clone()).collect();
        let mut c = ChartBuilder::on(&area)
            .caption(name.as_str(), ("sans-serif", 15))
            .margin(12)
            .x_label_area_size(60)
            .y_label_area_size(50)
            .build_cartesian_2d(-0.5..bars.len() as f64 - 0.5, 0.0..y1 * 1.3)?;
        c.configure_mesh()
            .disable_x_mesh()
            .x_labels(bars.len())
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 {
                    names.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_label_style(("sans-serif", 10))
            .y_label_formatter(&|y| format!("{y:.0}"))
            .light_line_style(WHITE)
            .y_desc("ns/key")
            .draw()?;
        for (j, op) in ops.iter().enumerate() {
            let color = Palette99::pick(j).to_rgba();
            c.draw_series(bars.iter().enumerate().map(|(i, (_, _, v))| {
                let x = i as f64 - 0.36 + 0.24 * j as f64;
                Rectangle::new([(x, 0.0), (x + 0.22, v[j])], color.filled())
            }))?
            .label(*op)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
        }
        // The accuracy of each filter above its bars: fast because bigger or
        // less accurate must show.
        c.draw_series(bars.iter().enumerate().map(|(i, (_, note, v))| {
            let top = v.iter().copied().fold(0.0, f64::max);
            Text::new(
                note.clone(),
                (i as f64 - 0.45, top + y1 * 0.06),
                ("sans-serif", 10),
            )
        }))?;
        c.configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// Writes `generated` between the markers `begin` and `end` in `out`,
/// keeping the rest of the page; creates the page (or appends the block)
/// when there is none yet.
fn splice(out: &Path, generated: &str, begin: &str, end: &str) -> Res<()> {
    let block = format!("{begin}\n\n{generated}\n{end}");
    let old = std::fs::read_to_string(out).unwrap_or_default();
    let new = match (old.find(begin), old.find(end)) {
        (Some(a), Some(b)) if a < b => format!("{}{block}{}", &old[..a], &old[b + end.len()..]),
        _ if old.is_empty() => format!("# Benchmarks\n\n{block}\n"),
        _ => format!("{}\n\n{block}\n", old.trim_end()),
    };
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(out, new)?;
    Ok(())
}
