//! `lesshash demo`: the one-command showcase on generated keys.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use lesshash::{BloomFilter, Layout, Scheme};

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// Keys inserted into each filter (the same number of non-members is
    /// queried).
    #[arg(long, value_name = "N", default_value_t = 2_000_000,
          value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    keys: u64,

    /// Target false-positive rate.
    #[arg(long, value_name = "P", default_value_t = 0.01, value_parser = crate::parse_fpr)]
    fpr: f64,
}

/// SplitMix64: distinct streams for members and non-members.
fn keys(seed: u64, n: u64) -> Vec<u64> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

struct Row {
    bits_per_key: f64,
    k: u32,
    insert_ns: f64,
    query_ns: f64,
    measured: f64,
    predicted: f64,
}

/// Builds one filter, inserts the members, checks every member is found,
/// and measures the non-members' false-positive rate and the batch
/// throughput.
fn measure(
    layout: Layout,
    scheme: Scheme,
    fpr: f64,
    members: &[u64],
    others: &[u64],
) -> Result<Row> {
    const BATCH: usize = 1024;
    let n = members.len() as u64;
    let mut f = BloomFilter::builder()
        .expected_items(n)
        .fpr(fpr)
        .layout(layout)
        .scheme(scheme)
        .build()
        .with_context(|| format!("building a {} filter", layout.name()))?;
    let t = Instant::now();
    for batch in members.chunks(BATCH) {
        f.insert_batch(batch);
    }
    let insert_ns = t.elapsed().as_secs_f64() * 1e9 / n as f64;

    let mut out = vec![false; BATCH];
    for batch in members.chunks(BATCH) {
        let out = &mut out[..batch.len()];
        f.contains_batch(batch, out)?;
        ensure!(
            out.iter().all(|&b| b),
            "a member was not found: a false negative (bug)"
        );
    }
    let t = Instant::now();
    let mut positives = 0u64;
    for batch in others.chunks(BATCH) {
        let out = &mut out[..batch.len()];
        f.contains_batch(batch, out)?;
        positives += out.iter().filter(|&&b| b).count() as u64;
    }
    let query_ns = t.elapsed().as_secs_f64() * 1e9 / others.len() as f64;
    let (m, k) = (f.num_bits(), f.num_hashes());
    Ok(Row {
        bits_per_key: m as f64 / n as f64,
        k,
        insert_ns,
        query_ns,
        measured: positives as f64 / others.len() as f64,
        predicted: layout.fpr(scheme, m, n, k),
    })
}

fn mkeys(ns: f64) -> f64 {
    1e3 / ns
}

pub(crate) fn run(args: Args, _quiet: bool) -> Result<ExitCode> {
    let start = Instant::now();
    let mut out = std::io::stdout().lock();
    let members = keys(1, args.keys);
    let others = keys(2, args.keys);
    let n = args.keys;
    writeln!(
        out,
        "lesshash demo: {n} random u64 members, {n} non-members, target FPR {}%.\n\
         Each filter is sized by its layout's own formula; every member is checked \
         (no false negatives); FPR is measured on the non-members. Batch calls of 1024 keys.\n",
        100.0 * args.fpr
    )?;

    writeln!(out, "By layout (each with its default scheme):")?;
    writeln!(
        out,
        "{:<14} {:>8} {:>3} {:>12} {:>12} {:>10} {:>10}",
        "layout", "bits/key", "k", "insert M/s", "query M/s", "measured", "predicted"
    )?;
    for layout in Layout::ALL {
        let r = measure(layout, layout.default_scheme(), args.fpr, &members, &others)?;
        writeln!(
            out,
            "{:<14} {:>8.2} {:>3} {:>12.1} {:>12.1} {:>9.3}% {:>9.3}%",
            layout.name(),
            r.bits_per_key,
            r.k,
            mkeys(r.insert_ns),
            mkeys(r.query_ns),
            100.0 * r.measured,
            100.0 * r.predicted
        )?;
        out.flush()?;
    }

    writeln!(
        out,
        "\nBy index scheme (the paper's; classic layout): one XXH3-128 per key instead of k hashes"
    )?;
    writeln!(
        out,
        "{:<16} {:>7} {:>12} {:>12} {:>10} {:>10} {:>9}",
        "scheme", "hashes", "insert M/s", "query M/s", "measured", "predicted", "vs indep."
    )?;
    let mut independent_ns = None;
    for scheme in Scheme::ALL {
        let r = measure(Layout::Classic, scheme, args.fpr, &members, &others)?;
        let base = *independent_ns.get_or_insert(r.query_ns);
        writeln!(
            out,
            "{:<16} {:>7} {:>12.1} {:>12.1} {:>9.3}% {:>9.3}% {:>8.2}x",
            scheme.name(),
            format!("{}/key", scheme.hashes_per_key(r.k)),
            mkeys(r.insert_ns),
            mkeys(r.query_ns),
            100.0 * r.measured,
            100.0 * r.predicted,
            base / r.query_ns
        )?;
        out.flush()?;
    }
    writeln!(
        out,
        "\n(measured FPR on {n} non-members: standard error about {:.3} percentage points; \
         timings on a shared machine are noisy)\ndone in {:.1} s",
        100.0 * (args.fpr * (1.0 - args.fpr) / n as f64).sqrt(),
        start.elapsed().as_secs_f64()
    )?;
    Ok(ExitCode::SUCCESS)
}
