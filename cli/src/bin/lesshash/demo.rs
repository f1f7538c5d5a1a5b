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

/// Keys per batch call.
const BATCH: usize = 1024;

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

/// The classic filter's (m, k) for `n` keys at `fpr`: both schemes of a
/// comparison get the same bits and probes, so only the hashing differs.
fn classic_geometry(n: usize, fpr: f64) -> Result<(u64, u32)> {
    Ok(BloomFilter::builder()
        .expected_items(n as u64)
        .fpr(fpr)
        .layout(Layout::Classic)
        .geometry()?)
}

/// ns per key of insert, member query and non-member query, for k
/// independent hashes and for one hash (double hashing) on the same
/// classic filter geometry, each the best of three runs of enough rounds
/// to handle about 2e6 keys.
fn speeds<K: lesshash::Key>(fpr: f64, members: &[K], others: &[K]) -> Result<[(f64, f64); 3]> {
    let (m, k) = classic_geometry(members.len(), fpr)?;
    let rounds = (2_000_000 / members.len()).clamp(1, 200);
    let time = |mut f: Box<dyn FnMut() + '_>| -> f64 {
        (0..3)
            .map(|_| {
                let t = Instant::now();
                for _ in 0..rounds {
                    f();
                }
                t.elapsed().as_secs_f64() * 1e9 / (rounds * members.len()) as f64
            })
            .fold(f64::INFINITY, f64::min)
    };
    let mut per_scheme = [[0.0; 3]; 2];
    for (i, scheme) in [Scheme::Independent, Scheme::DoubleHashing]
        .into_iter()
        .enumerate()
    {
        let mut f = BloomFilter::builder()
            .layout(Layout::Classic)
            .scheme(scheme)
            .bits(m)
            .hashes(k)
            .build()?;
        let insert = time(Box::new(|| {
            for batch in members.chunks(BATCH) {
                f.insert_batch(batch);
            }
        }));
        let mut out = vec![false; BATCH];
        let mut query = |keys: &[K]| {
            time(Box::new(|| {
                for batch in keys.chunks(BATCH) {
                    let _ = f.contains_batch(batch, &mut out[..batch.len()]);
                }
            }))
        };
        per_scheme[i] = [insert, query(members), query(others)];
    }
    let [k_hashes, one] = per_scheme;
    Ok([0, 1, 2].map(|j| (k_hashes[j], one[j])))
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
        "\nBy index scheme (the paper's; classic layout): the two-hash schemes meet the rate \
         of k independent hashes"
    )?;
    writeln!(
        out,
        "{:<16} {:>7} {:>10} {:>10}",
        "scheme", "hashes", "measured", "predicted"
    )?;
    for scheme in Scheme::ALL {
        let r = measure(Layout::Classic, scheme, args.fpr, &members, &others)?;
        writeln!(
            out,
            "{:<16} {:>7} {:>9.3}% {:>9.3}%",
            scheme.name(),
            format!("{}/key", scheme.hashes_per_key(r.k)),
            100.0 * r.measured,
            100.0 * r.predicted,
        )?;
        out.flush()?;
    }

    let (m, k) = classic_geometry(members.len(), args.fpr)?;
    writeln!(
        out,
        "\nWhere hashing once pays: ns per key, k = {k} independent hashes -> one XXH3-128 \
         (double hashing), classic layout, batch calls (lower is better)"
    )?;
    writeln!(
        out,
        "{:<37} {:>20} {:>20} {:>20}",
        "", "insert", "member query", "non-member query"
    )?;
    let small = members.len().min(10_000);
    let long = |ks: &[u64]| -> Vec<[u8; 64]> {
        ks.iter()
            .map(|&x| {
                let mut key = [b'k'; 64];
                key[..8].copy_from_slice(&x.to_le_bytes());
                key
            })
            .collect()
    };
    let cases = [
        (
            format!("in cache, u64 keys ({small} keys)"),
            speeds(args.fpr, &members[..small], &others[..small])?,
        ),
        (
            format!("in cache, 64-byte keys ({small} keys)"),
            speeds(args.fpr, &long(&members[..small]), &long(&others[..small]))?,
        ),
        (
            format!(
                "larger, u64 keys ({n} keys, {:.1} MiB)",
                m as f64 / 8.0 / 1024.0 / 1024.0
            ),
            speeds(args.fpr, &members, &others)?,
        ),
    ];
    for (case, [insert, hit, miss]) in cases {
        let cell = |(k_hashes, one): (f64, f64)| {
            format!("{k_hashes:.1} -> {one:.1} ({:.1}x)", k_hashes / one)
        };
        writeln!(
            out,
            "{case:<37} {:>20} {:>20} {:>20}",
            cell(insert),
            cell(hit),
            cell(miss)
        )?;
        out.flush()?;
    }
    writeln!(
        out,
        "Hashing is most of an insert's and a member query's cost in cache and for long keys; \
         a non-member query stops at its first zero bit (about 2 probes at 1%); the larger the \
         filter next to the caches, the more its cache misses decide (--keys sets its size)."
    )?;

    writeln!(
        out,
        "\n(measured FPR on {n} non-members: standard error about {:.3} percentage points; \
         timings on a shared machine are noisy)\ndone in {:.1} s",
        100.0 * (args.fpr * (1.0 - args.fpr) / n as f64).sqrt(),
        start.elapsed().as_secs_f64()
    )?;
    Ok(ExitCode::SUCCESS)
}
