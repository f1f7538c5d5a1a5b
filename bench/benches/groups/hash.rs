//! The 128-bit hash per key, in each family (XXH3-128's rows
//! `hash/<keys>/<variant>`, the folded multiply's `hash/<keys>/fold-<variant>`):
//! one key at a time (`HashFamily::hash_key`: what a single-key insert or
//! query pays) against the
//! batched hash every batch path runs (`hash::hash_batch`: the short-input
//! formulas with the seed's constants computed once per batch; four keys
//! per register on the AVX-512 kernel: `batch-avx512`, beside
//! `batch-avx2`, one key at a time). Keys `u64`, `id16` (16-byte
//! `[u8; 16]` ids), `str16` (16-character strings, a variable-length type
//! that happens to share one length) and `id64` (64-byte ids: XXH3-128 in
//! both families), `BATCH` keys
//! per iteration from an L1-resident pool.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput};
use lesshash::{HashFamily, Kernel, Key};

use super::common::{Cursor, hex16, mix};

const BATCH: usize = 512;
const POOL: usize = 4096;
const SEED: u64 = 0x5eed;

fn group<K: Key>(c: &mut Criterion, name: &str, pool: &[K]) {
    let mut g = c.benchmark_group("hash");
    g.throughput(Throughput::Elements(BATCH as u64));
    for family in HashFamily::ALL {
        // XXH3-128's rows keep their ids; the folded multiply's are
        // `fold-<variant>`.
        let prefix = match family {
            HashFamily::Xxh3 => "",
            _ => "fold-",
        };
        let mut cursor = Cursor::new();
        g.bench_function(BenchmarkId::new(name, format!("{prefix}per-key")), |b| {
            b.iter(|| {
                let mut acc = 0u128;
                for key in cursor.next(pool, BATCH) {
                    acc ^= family.hash_key(black_box(key), SEED);
                }
                black_box(acc)
            })
        });
        let mut out = vec![0u128; BATCH];
        let mut cursor = Cursor::new();
        g.bench_function(BenchmarkId::new(name, format!("{prefix}batch")), |b| {
            b.iter(|| {
                family
                    .hash_batch(black_box(cursor.next(pool, BATCH)), SEED, &mut out)
                    .expect("lengths match");
                black_box(&out);
            })
        });
        // The batch on each vector kernel: AVX-512 hashes four keys per
        // register, the others one at a time (`batch` is the automatic one).
        for kernel in [Kernel::Avx2, Kernel::Avx512] {
            if !kernel.is_available() {
                continue;
            }
            let mut cursor = Cursor::new();
            g.bench_function(
                BenchmarkId::new(name, format!("{prefix}batch-{}", kernel.name())),
                |b| {
                    b.iter(|| {
                        family
                            .hash_batch_on(
                                kernel,
                                black_box(cursor.next(pool, BATCH)),
                                SEED,
                                &mut out,
                            )
                            .expect("lengths match");
                        black_box(&out);
                    })
                },
            );
        }
    }
    g.finish();
}

/// Registers the hash group.
pub fn register(c: &mut Criterion) {
    let ints: Vec<u64> = (0..POOL as u64).map(mix).collect();
    group(c, "u64", &ints);
    let ids: Vec<[u8; 16]> = ints
        .iter()
        .map(|&x| (u128::from(x) << 64 | u128::from(mix(x))).to_le_bytes())
        .collect();
    group(c, "id16", &ids);
    let strs: Vec<String> = ints
        .iter()
        .map(|&x| String::from_utf8(hex16(x).to_vec()).expect("hex digits"))
        .collect();
    group(c, "str16", &strs);
    // 64-byte ids: past the short-key formulas, XXH3-128 in both families.
    let long: Vec<[u8; 64]> = ints
        .iter()
        .map(|&x| {
            let mut key = [0u8; 64];
            for (i, w) in key.chunks_exact_mut(8).enumerate() {
                w.copy_from_slice(&mix(x ^ i as u64).to_le_bytes());
            }
            key
        })
        .collect();
    group(c, "id64", &long);
}
