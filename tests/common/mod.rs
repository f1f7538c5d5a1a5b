//! Shared helpers for the integration tests: seeded key streams and the
//! statistical tolerance used to compare measured false-positive rates with
//! formulas.

#![allow(dead_code)] // each test binary uses a subset

use lesshash::FormatError;
use lesshash::{BloomFilter, Layout, Scheme};

/// An empty filter of explicit geometry: `layout`, `scheme`, m bits, k
/// probes, `seed` (the one helper every test binary builds filters with).
pub fn build(layout: Layout, scheme: Scheme, m: u64, k: u32, seed: u64) -> BloomFilter {
    build_in(lesshash::HashFamily::Xxh3, layout, scheme, m, k, seed)
}

/// [`build`] in a hash family.
pub fn build_in(
    family: lesshash::HashFamily,
    layout: Layout,
    scheme: Scheme,
    m: u64,
    k: u32,
    seed: u64,
) -> BloomFilter {
    BloomFilter::builder()
        .hash_family(family)
        .layout(layout)
        .scheme(scheme)
        .bits(m)
        .hashes(k)
        .seed(seed)
        .build()
        .unwrap()
}

/// Whether `n` is prime, by trial division (an oracle independent of the
/// crate's Miller-Rabin; fast enough below 2^40).
pub fn is_prime(n: u64) -> bool {
    n >= 2
        && (2..)
            .take_while(|d| d * d <= n)
            .all(|d| !n.is_multiple_of(d))
}

/// The m a filter asked for `m` bits and k probes is built with, written
/// independently of the crate: the partitioned layout rounds down to k
/// sub-arrays, the blocked ones up to 512-bit blocks, and a two-hash scheme
/// on the classic or partitioned layout grows the range (m, or m / k) to the
/// next prime.
pub fn built_bits(layout: Layout, scheme: Scheme, m: u64, k: u32) -> u64 {
    let parts = if layout == Layout::Partitioned {
        u64::from(k)
    } else {
        1
    };
    if layout.is_blocked() {
        return m.next_multiple_of(512);
    }
    let range = m / parts;
    if scheme == Scheme::Independent {
        return range * parts;
    }
    (range..).find(|&r| is_prime(r)).unwrap() * parts
}

/// SplitMix64: a tiny, well-mixed, seedable generator for test keys.
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// `n` member keys: distinct with overwhelming probability, all even.
pub fn members(seed: u64, n: usize) -> Vec<u64> {
    let mut rng = SplitMix64(seed);
    (0..n).map(|_| rng.next_u64() & !1).collect()
}

/// `n` keys that are certainly not members: all odd.
pub fn non_members(seed: u64, n: usize) -> Vec<u64> {
    let mut rng = SplitMix64(seed ^ 0x5555_5555_5555_5555);
    (0..n).map(|_| rng.next_u64() | 1).collect()
}

/// z for the two-sided tolerance bands: 4.5 sigma, a false alarm about once
/// in 150,000 runs per comparison (the tests are seeded, so a given build
/// either always passes or always fails; the band is what makes a real
/// deviation fail).
pub const Z: f64 = 4.5;

/// Variance of a measured rate over `queries` Bernoulli(p) queries.
pub fn binomial_variance(p: f64, queries: usize) -> f64 {
    p * (1.0 - p) / queries as f64
}

fn load_rate(layout: Layout, keys: u64, k: u32) -> f64 {
    match layout {
        Layout::SplitBlock => lesshash::internals::rates::split_block_load_fpr(keys, k),
        _ => lesshash::internals::rates::blocked_load_fpr(keys, k),
    }
}

/// Relative variance of one blocked or split-block filter's conditional
/// rate over the filters a seed draws: the variance of a block's rate over its Binomial(n, 1/b) load,
/// divided by b and the squared mean.
pub fn blocked_filter_relative_variance(layout: Layout, m: u64, n: u64, k: u32) -> f64 {
    let b = (m / 512) as f64;
    let mean_load = n as f64 / b;
    let (mut e1, mut e2, mut mass) = (0.0, 0.0, 0.0);
    let hi = (mean_load + 12.0 * mean_load.sqrt() + 32.0) as u64;
    // Poisson weights, summed directly (small loads only in these tests).
    let mut w = (-mean_load).exp();
    for i in 0..=hi {
        if i > 0 {
            w *= mean_load / i as f64;
        }
        let r = load_rate(layout, i, k);
        e1 += w * r;
        e2 += w * r * r;
        mass += w;
    }
    let (e1, e2) = (e1 / mass, e2 / mass);
    (e2 - e1 * e1) / b / (e1 * e1)
}

/// Relative variance of one filter's conditional rate from the fill's
/// randomness (the module docs of `false_positive_rate.rs` derive it).
pub fn fill_relative_variance(layout: Layout, m: u64, n: u64, k: u32) -> f64 {
    if layout.is_blocked() {
        // A blocked filter's rate varies with its blocks' loads, far more
        // than with its total fill.
        return blocked_filter_relative_variance(layout, m, n, k);
    }
    let (bins, probes, factor) = match layout {
        Layout::Partitioned => ((m / u64::from(k)) as f64, n as f64, f64::from(k)),
        _ => (m as f64, (u64::from(k) * n) as f64, f64::from(k * k)),
    };
    let lambda = probes / bins;
    let empty = (-lambda).exp();
    let var_x = bins * empty * (1.0 - (1.0 + lambda) * empty);
    let x = bins * (1.0 - empty);
    factor * var_x / (x * x)
}

/// Whether this run is CI's (`LESSHASH_CI=1`, set by `.ci/run` on its Rust
/// test steps): there every test must run, none may skip.
pub fn in_ci() -> bool {
    std::env::var_os("LESSHASH_CI").is_some_and(|v| v == "1")
}

/// A test (or part of one) that needs `what`, which this environment lacks:
/// a failure in CI ([`in_ci`]), where a skip would pass silently; elsewhere
/// a line on stderr saying what was skipped and why (shown with
/// `--nocapture`), and the caller returns.
pub fn skip_unless_ci(what: &str) {
    assert!(
        !in_ci(),
        "LESSHASH_CI=1 and this test cannot run: {what}; CI must run every test"
    );
    eprintln!("skipped: {what} (with LESSHASH_CI=1 this is a failure)");
}

/// `read_file` (`read`) of a FIFO (a pipe: no length) fed by a thread:
/// `data` whole reads as the item it is (`to_bytes` gives `data` back);
/// one byte more is `SizeMismatch` (`input length`) and 3 bytes short is
/// `Truncated` (`checksum`), as for a file of that length.
#[cfg(unix)]
pub fn check_read_file_of_a_pipe<T: std::fmt::Debug>(
    data: &[u8],
    read: impl Fn(&std::path::Path) -> Result<T, lesshash::Error>,
    to_bytes: impl Fn(&T) -> Vec<u8>,
) {
    use lesshash::Error;
    let [whole, more, short] = read_fifo_cases(data, read);
    assert!(to_bytes(&whole.unwrap()) == data);
    assert!(
        matches!(
            more,
            Err(Error::Format(FormatError::SizeMismatch {
                field: "input length",
                ..
            }))
        ),
        "{more:?}"
    );
    assert!(
        matches!(
            short,
            Err(Error::Format(FormatError::Truncated {
                field: "checksum",
                ..
            }))
        ),
        "{short:?}"
    );
}

#[cfg(unix)]
fn read_fifo_cases<T>(
    data: &[u8],
    read: impl Fn(&std::path::Path) -> Result<T, lesshash::Error>,
) -> [Result<T, lesshash::Error>; 3] {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        data.to_vec(),
        [data, &[0]].concat(),
        data[..data.len() - 3].to_vec(),
    ];
    let mut i = 0;
    cases.map(|bytes| {
        i += 1;
        let fifo = dir.path().join(format!("pipe{i}"));
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || {
                use std::io::Write;
                // A reader that stops early makes the rest fail: ignored.
                let _ = std::fs::OpenOptions::new()
                    .write(true)
                    .open(fifo)
                    .and_then(|mut w| w.write_all(&bytes));
            })
        };
        let got = read(&fifo);
        writer.join().unwrap();
        got
    })
}
