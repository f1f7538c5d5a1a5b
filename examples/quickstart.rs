//! Builds a filter for every scheme and layout, sized for one million keys
//! at a 1% false-positive rate, and prints what each costs and measures:
//! bits per key, k, hash computations per key, insert and query time, and
//! the measured false-positive rate next to the one the layout's formula
//! predicts.
//!
//! ```sh
//! cargo run --release --example quickstart
//! ```

use std::time::Instant;

use lesshash::{BloomFilter, Layout, Scheme, rates};

const N: usize = 1_000_000;
const QUERIES: usize = 1_000_000;
const TARGET: f64 = 0.01;

/// SplitMix64 keys: members are even, non-members odd, so the sets are
/// disjoint by construction.
fn keys(seed: u64, n: usize, odd: bool) -> Vec<u64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            let z = z ^ (z >> 31);
            if odd { z | 1 } else { z & !1 }
        })
        .collect()
}

fn main() -> Result<(), lesshash::Error> {
    let members = keys(1, N, false);
    let strangers = keys(2, QUERIES, true);
    let mut answers = vec![false; QUERIES];

    println!("n = {N} keys, target false-positive rate {TARGET}, {QUERIES} non-member queries");
    println!(
        "space lower bound n*log2(1/p): {:.2} bits/key\n",
        rates::space_lower_bound(N as u64, TARGET) / N as f64
    );
    println!(
        "{:<12} {:<16} {:>8} {:>3} {:>7} {:>10} {:>10} {:>10} {:>10}",
        "layout",
        "scheme",
        "bits/key",
        "k",
        "hashes",
        "insert ns",
        "query ns",
        "predicted",
        "measured"
    );
    for layout in Layout::ALL {
        for scheme in Scheme::ALL {
            let mut filter = BloomFilter::builder()
                .layout(layout)
                .scheme(scheme)
                .expected_items(N as u64)
                .fpr(TARGET)
                .build()?;
            let (m, k) = (filter.num_bits(), filter.num_hashes());

            let start = Instant::now();
            filter.insert_batch(&members);
            let insert_ns = start.elapsed().as_nanos() as f64 / N as f64;

            let start = Instant::now();
            filter.contains_batch(&strangers, &mut answers)?;
            let query_ns = start.elapsed().as_nanos() as f64 / QUERIES as f64;

            let measured = answers.iter().filter(|&&hit| hit).count() as f64 / QUERIES as f64;
            let predicted = layout.fpr(scheme, m, N as u64, k);
            println!(
                "{:<12} {:<16} {:>8.2} {:>3} {:>7} {:>10.1} {:>10.1} {:>9.4}% {:>9.4}%",
                layout.name(),
                scheme.name(),
                m as f64 / N as f64,
                k,
                scheme.hashes_per_key(k),
                insert_ns,
                query_ns,
                100.0 * predicted,
                100.0 * measured,
            );
        }
    }
    println!(
        "\nmeasured rates are over {QUERIES} queries: one binomial standard deviation at 1% is {:.4}%",
        100.0 * (TARGET * (1.0 - TARGET) / QUERIES as f64).sqrt()
    );
    println!("(times are wall-clock single runs for orientation; see bench/ for measurements)");
    Ok(())
}
