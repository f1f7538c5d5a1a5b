//! Spark's version 1 filter above 2^31 bits against version 2 of the same
//! size: the measured false-positive rates beside `expected_fpr`.
//!
//! ```sh
//! cargo run --release -p lesshash-bench --example spark_v1_ceiling            # 2^32 bits, Spark's n for 1%
//! cargo run --release -p lesshash-bench --example spark_v1_ceiling -- 31      # 2^31 bits: the two agree
//! ```
//!
//! Each filter has 2^B bits (B = 32 by default: 512 MiB each, 1 GiB in
//! all) and the k and n Spark's sizing gives for 1% at that size
//! (`BloomFilter.create(n, 0.01)` makes about this many bits); the n keys
//! are inserted in chunks (not held), then 10 million keys never inserted
//! are queried.

use lesshash::spark::{SparkBloomFilter, SparkVersion};

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn main() -> Result<(), lesshash::Error> {
    let log2: u32 = std::env::args()
        .nth(1)
        .map_or(32, |a| a.parse().expect("B: bits as a power of two"));
    let bits = 1u64 << log2;
    let ln2 = std::f64::consts::LN_2;
    // Spark's sizing inverted: the n whose optimal bits at 1% are `bits`.
    let n = (bits as f64 * ln2 * ln2 / -(0.01f64).ln()) as u64;
    let k = ((bits as f64 / n as f64 * ln2).round() as u32).max(1);
    const PROBES: u64 = 10_000_000;
    const CHUNK: u64 = 1 << 20;
    println!(
        "2^{log2} bits, k = {k}, n = {n} keys (Spark's sizing for 1%), {PROBES} probes never inserted"
    );
    for version in [SparkVersion::V1, SparkVersion::V2] {
        let mut f = SparkBloomFilter::with_bits(version, bits, k, 0)?;
        let mut keys = Vec::with_capacity(CHUNK as usize);
        for start in (0..n).step_by(CHUNK as usize) {
            keys.clear();
            keys.extend((start..n.min(start + CHUNK)).map(|i| mix(i << 1) as i64));
            f.insert_longs(&keys);
        }
        let probes: Vec<i64> = (0..PROBES).map(|i| mix((i << 1) | 1) as i64).collect();
        let mut out = vec![false; PROBES as usize];
        f.contains_longs(&probes, &mut out)?;
        let measured = out.iter().filter(|&&b| b).count() as f64 / PROBES as f64;
        println!(
            "{version:?}: measured {:.4}%, expected_fpr {:.4}%, reachable bits {}, fill of those {:.4}",
            100.0 * measured,
            100.0 * f.expected_fpr(n),
            f.reachable_bits(),
            f.count_ones() as f64 / f.reachable_bits() as f64,
        );
    }
    Ok(())
}
