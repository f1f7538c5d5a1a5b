//! XXH3-128 per key: one key at a time (`hash_key`, `xxhash-rust`'s
//! one-shot call: what a single-key insert or query pays) against the
//! batched hash every batch path runs (`hash::hash_batch`: the short-input
//! formulas with the seed's constants computed once per batch; eight keys
//! per register on the AVX-512 kernel: `batch-avx512`, beside
//! `batch-avx2`, one key at a time). Ids: `hash/<keys>/<variant>`, keys `u64`,
//! `id16` (16-byte `[u8; 16]` ids) and `str16` (16-character strings, a
//! variable-length type that happens to share one length), `BATCH` keys
//! per iteration from an L1-resident pool.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput};
use lesshash::internals::hash::hash_batch_with;
use lesshash::{Kernel, Key, hash_batch, hash_key};

use super::common::{Cursor, hex16, mix};

const BATCH: usize = 512;
const POOL: usize = 4096;
const SEED: u64 = 0x5eed;

fn group<K: Key>(c: &mut Criterion, name: &str, pool: &[K]) {
    let mut g = c.benchmark_group("hash");
    g.throughput(Throughput::Elements(BATCH as u64));
    let mut cursor = Cursor::new();
    g.bench_function(BenchmarkId::new(name, "per-key"), |b| {
        b.iter(|| {
            let mut acc = 0u128;
            for key in cursor.next(pool, BATCH) {
                acc ^= hash_key(black_box(key), SEED);
            }
            black_box(acc)
        })
    });
    let mut out = vec![0u128; BATCH];
    let mut cursor = Cursor::new();
    g.bench_function(BenchmarkId::new(name, "batch"), |b| {
        b.iter(|| {
            hash_batch(black_box(cursor.next(pool, BATCH)), SEED, &mut out).expect("lengths match");
            black_box(&out);
        })
    });
    // The batch on each vector kernel: AVX-512 hashes eight keys per
    // register, the others one at a time (`batch` is the automatic one).
    for kernel in [Kernel::Avx2, Kernel::Avx512] {
        if !kernel.is_available() {
            continue;
        }
        let mut cursor = Cursor::new();
        g.bench_function(
            BenchmarkId::new(name, format!("batch-{}", kernel.name())),
            |b| {
                b.iter(|| {
                    hash_batch_with(kernel, black_box(cursor.next(pool, BATCH)), SEED, &mut out)
                        .expect("lengths match");
                    black_box(&out);
                })
            },
        );
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
}
