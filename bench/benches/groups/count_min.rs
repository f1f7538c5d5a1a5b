//! Count-Min sketch: two-hash (one XXH3-128 per key, paper Sec. 9) against
//! the classic d-hash sketch (d XXH3-64), add and estimate throughput.
//!
//! Both sketches have the same width (8191, prime) and depth, so they use
//! the same memory (256 KiB at d = 4, 512 KiB at d = 8: L2-resident on the
//! development machine) and the difference is the hashing.

use std::hint::black_box;

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};
use lesshash::{CountMinScheme, CountMinSketch, Key};

const KEYS: usize = 4096;
const WIDTH: u64 = 8191;

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn sketch(scheme: CountMinScheme, depth: u32) -> CountMinSketch {
    CountMinSketch::builder()
        .scheme(scheme)
        .width(WIDTH)
        .depth(depth)
        .build()
        .expect("valid sketch")
}

fn variants<K: Key>(group: &mut BenchmarkGroup<'_, WallTime>, keys: &[K], depth: u32, add: bool) {
    for (name, scheme) in [
        ("two-hash", CountMinScheme::DoubleHashing),
        ("d-hash", CountMinScheme::Independent),
    ] {
        let mut s = sketch(scheme, depth);
        for key in keys {
            s.add(key, 1);
        }
        if add {
            group.bench_function(name, |b| {
                b.iter(|| {
                    for key in keys {
                        s.add(black_box(key), black_box(1));
                    }
                })
            });
        } else {
            group.bench_function(name, |b| {
                b.iter(|| {
                    let mut sum = 0u64;
                    for key in keys {
                        sum = sum.wrapping_add(s.estimate(black_box(key)));
                    }
                    black_box(sum)
                })
            });
        }
    }
}

/// Registers the `count_min/{add,estimate}/{u64,64B}/d{4,8}` groups, each
/// with a `two-hash` and a `d-hash` function.
pub fn register(c: &mut Criterion) {
    let mut state = 0x636f_756e_745f_6d69;
    let small: Vec<u64> = (0..KEYS).map(|_| splitmix(&mut state)).collect();
    let large: Vec<[u8; 64]> = (0..KEYS)
        .map(|_| {
            let mut key = [0u8; 64];
            for chunk in key.chunks_exact_mut(8) {
                chunk.copy_from_slice(&splitmix(&mut state).to_le_bytes());
            }
            key
        })
        .collect();
    for op in ["add", "estimate"] {
        for depth in [4u32, 8] {
            for key_kind in ["u64", "64B"] {
                let mut group = c.benchmark_group(format!("count_min/{op}/{key_kind}/d{depth}"));
                group.throughput(Throughput::Elements(KEYS as u64));
                let add = op == "add";
                match key_kind {
                    "u64" => variants(&mut group, &small, depth, add),
                    _ => variants(&mut group, &large, depth, add),
                }
                group.finish();
            }
        }
    }
}
