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

    /// Rounds of the "hashing once pays" timings: each round times every
    /// case once, in turn, and the table shows their medians and the
    /// spread of the per-round ratios.
    #[arg(long, value_name = "R", default_value_t = 7,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    rounds: u32,
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
/// classic filter geometry: `rounds` rounds, each timing the six cases
/// once in turn (so that a slow moment of the machine hits them alike),
/// each case enough repetitions to handle about 2e6 keys.
fn speeds<K: lesshash::Key>(
    fpr: f64,
    members: &[K],
    others: &[K],
    rounds: u32,
) -> Result<[Ratio; 3]> {
    let (m, k) = classic_geometry(members.len(), fpr)?;
    let reps = (2_000_000 / members.len()).clamp(1, 200);
    let build = |scheme| {
        BloomFilter::builder()
            .layout(Layout::Classic)
            .scheme(scheme)
            .bits(m)
            .hashes(k)
            .build()
    };
    let mut filters = [build(Scheme::Independent)?, build(Scheme::DoubleHashing)?];
    let mut out = vec![false; BATCH];
    // times[op][scheme][round], ns per key.
    let mut times = [
        [Vec::new(), Vec::new()],
        [Vec::new(), Vec::new()],
        [Vec::new(), Vec::new()],
    ];
    for _ in 0..rounds {
        for (op, times) in times.iter_mut().enumerate() {
            for (f, times) in filters.iter_mut().zip(times.iter_mut()) {
                let t = Instant::now();
                for _ in 0..reps {
                    match op {
                        0 => members.chunks(BATCH).for_each(|b| f.insert_batch(b)),
                        _ => {
                            let keys = if op == 1 { members } else { others };
                            for b in keys.chunks(BATCH) {
                                let _ = f.contains_batch(b, &mut out[..b.len()]);
                            }
                        }
                    }
                }
                times.push(t.elapsed().as_secs_f64() * 1e9 / (reps * members.len()) as f64);
            }
        }
    }
    Ok(times.map(|[k_hashes, one]| Ratio::of(&k_hashes, &one)))
}

/// Two timings over rounds: their medians, and the median, least and
/// greatest of the per-round ratios `k_hashes / one`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ratio {
    k_hashes: f64,
    one: f64,
    ratio: f64,
    low: f64,
    high: f64,
}

impl Ratio {
    fn of(k_hashes: &[f64], one: &[f64]) -> Ratio {
        let ratios: Vec<f64> = k_hashes.iter().zip(one).map(|(k, o)| k / o).collect();
        let low = ratios.iter().copied().fold(f64::INFINITY, f64::min);
        let high = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Ratio {
            k_hashes: median(k_hashes),
            one: median(one),
            ratio: median(&ratios),
            low,
            high,
        }
    }

    /// "28.7 -> 14.1 (2.0x, 1.9-2.1)"; a spread that crosses 1.0 is no
    /// result either way: "28.7 -> 29.0 (noisy: 0.8-1.3x)".
    fn cell(&self) -> String {
        let (k, one) = (self.k_hashes, self.one);
        if self.low <= 1.0 && self.high >= 1.0 && self.low < self.high {
            format!(
                "{k:.1} -> {one:.1} (noisy: {:.1}-{:.1}x)",
                self.low, self.high
            )
        } else {
            format!(
                "{k:.1} -> {one:.1} ({:.1}x, {:.1}-{:.1})",
                self.ratio, self.low, self.high
            )
        }
    }
}

/// The median (the mean of the middle two of an even count).
fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
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
            speeds(args.fpr, &members[..small], &others[..small], args.rounds)?,
        ),
        (
            format!("in cache, 64-byte keys ({small} keys)"),
            speeds(
                args.fpr,
                &long(&members[..small]),
                &long(&others[..small]),
                args.rounds,
            )?,
        ),
        (
            format!(
                "larger, u64 keys ({n} keys, {:.1} MiB)",
                m as f64 / 8.0 / 1024.0 / 1024.0
            ),
            speeds(args.fpr, &members, &others, args.rounds)?,
        ),
    ];
    // Columns as wide as their widest cell, so that every row lines up.
    let rows: Vec<[String; 4]> = cases
        .iter()
        .map(|(case, [insert, hit, miss])| [case.clone(), insert.cell(), hit.cell(), miss.cell()])
        .collect();
    let head = [
        String::new(),
        "insert".into(),
        "member query".into(),
        "non-member query".into(),
    ];
    let width = |c: usize| {
        rows.iter()
            .chain([&head])
            .map(|r| r[c].len())
            .max()
            .unwrap_or(0)
    };
    let w = [width(0), width(1), width(2), width(3)];
    for row in [&head].into_iter().chain(&rows) {
        writeln!(
            out,
            "{:<w0$}  {:>w1$}  {:>w2$}  {:>w3$}",
            row[0],
            row[1],
            row[2],
            row[3],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3]
        )?;
    }
    writeln!(
        out,
        "(medians of {} rounds, each timing every case in turn; in brackets the median \
         ratio and its least and greatest over the rounds: a spread across 1.0 is \
         \"noisy\", no result either way)",
        args.rounds
    )?;
    out.flush()?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        // A steady 2x: the ratio and its spread.
        let r = Ratio::of(&[20.0, 21.0, 19.0], &[10.0, 10.0, 10.0]);
        assert_eq!(
            (r.k_hashes, r.one, r.ratio, r.low, r.high),
            (20.0, 10.0, 2.0, 1.9, 2.1)
        );
        assert_eq!(r.cell(), "20.0 -> 10.0 (2.0x, 1.9-2.1)");
    }

    /// A noisy timer whose ratios straddle 1.0 never prints a confident
    /// win or loss, whatever its median ratio says.
    #[test]
    fn a_spread_across_one_is_noisy() {
        // Per-round ratios 0.8, 1.25, 1.3, 0.75, 1.4: median 1.25.
        let r = Ratio::of(
            &[28.0, 36.0, 37.0, 27.0, 40.0],
            &[35.0, 28.8, 28.5, 36.0, 28.6],
        );
        assert!(r.ratio > 1.2);
        let cell = r.cell();
        assert!(
            cell.contains("noisy: 0.8-1.4x") && !cell.contains("1.2x,"),
            "{cell}"
        );
        // A seeded synthetic timer: the same work (ratio 1) with +-40% noise
        // per measurement, over many seeds: always "noisy" once the rounds
        // see both sides, never a ratio outside the spread.
        let mut x = 1u64;
        let mut noise = || {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            0.6 + 0.8 * ((x >> 11) as f64 / (1u64 << 53) as f64)
        };
        for _ in 0..200 {
            let k: Vec<f64> = (0..7).map(|_| 30.0 * noise()).collect();
            let one: Vec<f64> = (0..7).map(|_| 30.0 * noise()).collect();
            let r = Ratio::of(&k, &one);
            assert!(r.low <= r.ratio && r.ratio <= r.high);
            if r.low <= 1.0 && r.high >= 1.0 {
                assert!(r.cell().contains("noisy"), "{}", r.cell());
            }
        }
    }
}
