//! Writes the fuzz targets' seed corpora (`fuzz/seeds/<target>/`):
//!
//! ```text
//! cargo run -p lesshash-bench --example fuzz_seeds -- fuzz/seeds
//! ```
//!
//! `from_bytes` gets valid serialized filters of every layout and scheme
//! (so mutations start past the magic, the version and the checksum), one
//! of them followed by a second filter (the streaming reader stops after
//! the first), and one whose insert counter is `u64::MAX` (a loaded
//! counter may hold any value, and inserts must saturate it).
//! `count_min_from_bytes` gets valid serialized Count-Min sketches of both
//! schemes and update rules (one of them the copies construction, one
//! followed by a second sketch, one with a saturated counter). The
//! structured targets decode any bytes, so they get a few
//! deterministic pseudo-random inputs of different lengths. Small by
//! design: the whole corpus is a few kilobytes.

use std::fs;
use std::path::Path;

use lesshash::{BloomFilter, CountMinScheme, CountMinSketch, Layout, Scheme};

/// SplitMix64: deterministic bytes without a dependency.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A valid serialized filter whose `insert_calls` (bytes 40..48) is
/// `u64::MAX`, both checksums recomputed (docs/format.md): no API sets the
/// counter, so the bytes are patched.
fn counter_at_max() -> Result<Vec<u8>, Box<dyn std::error::Error>> {
    use xxhash_rust::xxh3::xxh3_64;
    let mut f = BloomFilter::with_fpr(20, 0.01)?;
    for i in 0..20u64 {
        f.insert(&i);
    }
    let mut bytes = f.to_bytes();
    bytes[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
    let header = xxh3_64(&bytes[..56]);
    bytes[56..64].copy_from_slice(&header.to_le_bytes());
    let end = bytes.len() - 8;
    let checksum = xxh3_64(&bytes[..end]);
    bytes[end..].copy_from_slice(&checksum.to_le_bytes());
    Ok(bytes)
}

/// Small Count-Min sketches of every scheme and update rule, fed a few
/// updates, named by what they are.
fn count_min_seeds() -> Result<Vec<(String, Vec<u8>)>, lesshash::Error> {
    let mut out = Vec::new();
    for scheme in CountMinScheme::ALL {
        for conservative in [false, true] {
            let mut s = CountMinSketch::builder()
                .scheme(scheme)
                .conservative(conservative)
                .width(7)
                .depth(3)
                .seed(3)
                .build()?;
            for i in 0..10u64 {
                s.add(&i, 1 + i % 3);
            }
            let rule = if conservative {
                "conservative"
            } else {
                "plain"
            };
            out.push((format!("{}-{rule}.bin", scheme.name()), s.to_bytes()));
        }
    }
    let mut copies = CountMinSketch::with_error(0.5, 0.01)?;
    copies.add("a", 2);
    out.push(("double-copies.bin".into(), copies.to_bytes()));
    let one = CountMinSketch::builder()
        .scheme(CountMinScheme::Independent)
        .width(1)
        .depth(1)
        .build()?;
    let mut two = one.to_bytes();
    two.extend(copies.to_bytes());
    out.push(("two-sketches.bin".into(), two));
    let mut saturated = one;
    saturated.add("x", u64::MAX);
    out.push(("saturated.bin".into(), saturated.to_bytes()));
    Ok(out)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "fuzz/seeds".into());
    let root = Path::new(&root);

    let dir = root.join("from_bytes");
    fs::create_dir_all(&dir)?;
    for layout in Layout::ALL {
        for scheme in Scheme::ALL {
            for (m, k, n) in [(1u64, 1u32, 1u64), (700, 5, 20), (1001, 11, 40)] {
                let Ok(mut f) = BloomFilter::builder()
                    .layout(layout)
                    .scheme(scheme)
                    .bits(m)
                    .hashes(k)
                    .seed(m)
                    .build()
                else {
                    continue;
                };
                for i in 0..n {
                    f.insert(&i);
                }
                let name = format!("{}-{}-{m}.bin", layout.name(), scheme.name());
                fs::write(dir.join(name), f.to_bytes())?;
            }
        }
    }
    let a = BloomFilter::with_fpr(10, 0.01)?;
    let mut two = a.to_bytes();
    two.extend(BloomFilter::with_fpr(3, 0.1)?.to_bytes());
    fs::write(dir.join("two-filters.bin"), two)?;
    fs::write(dir.join("counter-max.bin"), counter_at_max()?)?;

    let dir = root.join("count_min_from_bytes");
    fs::create_dir_all(&dir)?;
    for (name, bytes) in count_min_seeds()? {
        fs::write(dir.join(name), bytes)?;
    }

    let mut state = 0x6c65_7373_6861_7368;
    for target in [
        "ops_vs_hashset",
        "kernel_diff",
        "count_min",
        "builder_params",
    ] {
        let dir = root.join(target);
        fs::create_dir_all(&dir)?;
        for (i, len) in [8usize, 32, 64, 128, 256, 512].into_iter().enumerate() {
            let bytes: Vec<u8> = (0..len).map(|_| splitmix(&mut state) as u8).collect();
            fs::write(dir.join(format!("random-{i}.bin")), bytes)?;
        }
    }
    println!("wrote the seed corpora under {}", root.display());
    Ok(())
}
