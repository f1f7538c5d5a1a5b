//! The hash families' accuracy on structured keys: for XXH3-128 and the
//! folded multiply, on every layout (its default scheme, and double
//! hashing on the flat layouts), the measured false-positive rate of
//! queries from the same structure as the members is within the exact
//! rate's band, and the blocked layouts' block choice is uniform
//! (chi-square).
//!
//! Key sets (members are keys 0..n of a set, queries keys n..n+q, so both
//! share the structure and never overlap): random u64; sequential u64;
//! strided u64 (multiples of 2^s, s = 1 to 40); high bits only (x << 32:
//! stride 2^32); small clustered ranges at random bases; 16-byte ids of a
//! shared 8-byte prefix and a counter, little- and big-endian; 32-byte
//! ids (past the short-key formulas: XXH3-128 in both families); and
//! short strings "user0", "user1", ...
//!
//! Band: the exact rate of the filter's m, n, k plus Z = 4.5 standard
//! deviations of the queries' binomial noise and the fill's randomness
//! (`common::fill_relative_variance`, as in `false_positive_rate.rs`).
//! The block choice: Pearson's X^2 of the keys per block at most its mean
//! plus Z standard deviations (b - 1 + Z sqrt(2 (b - 1)) for b blocks).
//! Seeded: a build passes or fails every run.
//!
//! The test runs n = 1,000 and 100,000; `long_structured_keys` (ignored:
//! `cargo test --release --test hash_family_accuracy -- --ignored long`)
//! runs n = 1e6 and 1e7, and `LESSHASH_ACCURACY_N` (comma-separated, e.g.
//! `1e8`) any sizes (docs/testing.md).

mod common;

use common::{SplitMix64, Z, binomial_variance, fill_relative_variance};
use lesshash::{BloomFilter, HashFamily, Layout, Scheme};

/// Bits per key of every filter here (k = 7, about 0.8% for the flat
/// layouts, 1% for blocked).
const BITS_PER_KEY: u64 = 10;

/// Appends key i of a set to the buffer.
type KeyFn = Box<dyn Fn(u64, &mut Vec<u8>) + Sync>;

/// A structured key set: key i of the set as bytes.
struct KeySet {
    name: String,
    key: KeyFn,
}

fn u64_set(name: impl Into<String>, f: impl Fn(u64) -> u64 + Sync + 'static) -> KeySet {
    KeySet {
        name: name.into(),
        key: Box::new(move |i, out| out.extend_from_slice(&f(i).to_le_bytes())),
    }
}

fn key_sets() -> Vec<KeySet> {
    let mix = |i: u64| SplitMix64(i ^ 0x0123_4567_89ab_cdef).next_u64();
    let mut sets = vec![u64_set("random u64", mix), u64_set("sequential u64", |i| i)];
    for s in [1u32, 4, 8, 16, 24, 32, 40] {
        sets.push(u64_set(format!("u64 multiples of 2^{s}"), move |i| i << s));
    }
    // Clusters of 64 consecutive keys at random bases.
    sets.push(u64_set("clusters of 64", move |i| {
        mix(i / 64 + (1 << 40)).wrapping_add(i % 64)
    }));
    let prefix = 0x6c65_7373_6861_7368u64.to_le_bytes();
    sets.push(KeySet {
        name: "16-byte ids, shared prefix, counter LE".into(),
        key: Box::new(move |i, out| {
            out.extend_from_slice(&prefix);
            out.extend_from_slice(&i.to_le_bytes());
        }),
    });
    sets.push(KeySet {
        name: "16-byte ids, shared prefix, counter BE".into(),
        key: Box::new(move |i, out| {
            out.extend_from_slice(&prefix);
            out.extend_from_slice(&i.to_be_bytes());
        }),
    });
    sets.push(KeySet {
        name: "32-byte ids, shared prefix".into(),
        key: Box::new(move |i, out| {
            out.extend_from_slice(&[0xa5; 24]);
            out.extend_from_slice(&i.to_be_bytes());
        }),
    });
    sets.push(KeySet {
        name: "strings user0, user1, ...".into(),
        key: Box::new(|i, out| out.extend_from_slice(format!("user{i}").as_bytes())),
    });
    sets
}

/// Keys `from..to` of `set`, in chunks of 4,096, to `f`.
fn for_chunks(set: &KeySet, from: u64, to: u64, mut f: impl FnMut(&[Vec<u8>])) {
    let mut chunk: Vec<Vec<u8>> = Vec::new();
    let mut at = from;
    while at < to {
        let len = (to - at).min(4096) as usize;
        chunk.resize_with(len, Vec::new);
        for (j, key) in chunk.iter_mut().enumerate() {
            key.clear();
            (set.key)(at + j as u64, key);
        }
        f(&chunk);
        at += len as u64;
    }
}

struct Outcome {
    rate: f64,
    expected: f64,
    band: f64,
    /// Pearson's X^2 of the keys per block and its bound (blocked layouts).
    chi: Option<(f64, f64)>,
}

fn measure(family: HashFamily, layout: Layout, scheme: Scheme, set: &KeySet, n: u64) -> Outcome {
    let k = 7;
    let mut f = BloomFilter::builder()
        .hash_family(family)
        .layout(layout)
        .scheme(scheme)
        .bits(BITS_PER_KEY * n)
        .hashes(k)
        .seed(lesshash::DEFAULT_SEED)
        .build()
        .unwrap();
    for_chunks(set, 0, n, |keys| f.insert_batch(keys));
    let expected = layout.fpr(scheme, f.num_bits(), n, k);
    // About 4,000 false positives expected, at least 100,000 queries.
    let q = ((4e3 / expected) as u64).max(100_000);
    let mut hits = 0;
    let mut out = vec![false; 4096];
    for_chunks(set, n, n + q, |keys| {
        let out = &mut out[..keys.len()];
        f.contains_batch(keys, out).unwrap();
        hits += out.iter().filter(|&&x| x).count();
    });
    let rate = hits as f64 / q as f64;
    let variance = binomial_variance(expected, q as usize)
        + expected * expected * fill_relative_variance(layout, f.num_bits(), n, k);
    let chi = layout.is_blocked().then(|| {
        let blocks = f.num_bits() / 512;
        let mut counts = vec![0u64; blocks as usize];
        for_chunks(set, 0, n, |keys| {
            for key in keys {
                counts[(f.positions(key)[0] / 512) as usize] += 1;
            }
        });
        let e = n as f64 / blocks as f64;
        let x2: f64 = counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum();
        let dof = (blocks - 1) as f64;
        (x2, dof + Z * (2.0 * dof).sqrt())
    });
    Outcome {
        rate,
        expected,
        band: Z * variance.sqrt(),
        chi,
    }
}

/// Every family, layout (default scheme; double hashing too on the flat
/// layouts) and key set at each of `sizes`; fails naming every cell out of
/// its band.
fn check(sizes: &[u64]) {
    let mut failures = Vec::new();
    for &n in sizes {
        for set in key_sets() {
            for layout in Layout::ALL {
                let mut schemes = vec![layout.default_scheme()];
                if !schemes.contains(&Scheme::DoubleHashing) {
                    schemes.push(Scheme::DoubleHashing);
                }
                for scheme in schemes {
                    for family in HashFamily::ALL {
                        let o = measure(family, layout, scheme, &set, n);
                        let cell = format!(
                            "n={n} {:<40} {layout:<11} {scheme:<15} {family:<15}",
                            set.name
                        );
                        println!(
                            "{cell} rate {:.5} exact {:.5} band +-{:.1}%{}",
                            o.rate,
                            o.expected,
                            100.0 * o.band / o.expected,
                            o.chi.map_or(String::new(), |(x2, bound)| format!(
                                " X^2 {x2:.0} <= {bound:.0}"
                            )),
                        );
                        if (o.rate - o.expected).abs() > o.band {
                            failures.push(format!(
                                "{cell}: rate {:.5} vs exact {:.5} (band {:.5})",
                                o.rate, o.expected, o.band
                            ));
                        }
                        if let Some((x2, bound)) = o.chi
                            && x2 > bound
                        {
                            failures.push(format!("{cell}: block X^2 {x2:.0} > {bound:.0}"));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn structured_keys_in_both_families() {
    check(&[1_000, 100_000]);
}

/// n = 1e6 and 1e7, or the sizes `LESSHASH_ACCURACY_N` lists.
#[test]
#[ignore = "long statistical run (minutes in release); see docs/testing.md"]
fn long_structured_keys_in_both_families() {
    let sizes: Vec<u64> = match std::env::var("LESSHASH_ACCURACY_N") {
        Ok(list) => list
            .split(',')
            .map(|s| s.trim().parse::<f64>().expect("sizes like 1e6,1e8") as u64)
            .collect(),
        Err(_) => vec![1_000_000, 10_000_000],
    };
    check(&sizes);
}
