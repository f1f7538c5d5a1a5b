//! What one XXH3-128 plus (enhanced) double hashing saves against k
//! independent hash computations (Kirsch and Mitzenmacher's claim, measured).
//!
//! Three groups, each over k in {3, 6, 8, 11, 16} and key sizes in
//! {8, 16, 64, 256} bytes, for `Independent` (k XXH3-64), `DoubleHashing`
//! and `EnhancedDoubleHashing(Cube)` (one XXH3-128 each):
//!
//! * `hashes_saved_index`: hashing and the k indices only, no memory;
//! * `hashes_saved_cache`: end-to-end insert into a 16 KiB classic filter
//!   (L1-resident: hashing dominates);
//! * `hashes_saved_dram`: end-to-end insert into a 256 MiB classic filter
//!   (memory dominates), for key sizes 8 and 64 only to bound the run time;
//! * `hashes_saved_batch`: `insert_batch` of the `CHUNK` keys into the
//!   16 KiB classic filter (the batch pipeline: batched hash, the flat
//!   index routine, no prefetch at this size), k = 8 and key sizes 8, 16
//!   and 64;
//! * `hashes_saved_bound`: one XXH3-64 (`xxh3-64/key=<bytes>`) and one
//!   XXH3-128 (`xxh3-128/key=<bytes>`) per key and nothing else: the
//!   report's bound of the speedup, k * t64 / t128;
//! * `hashes_saved_kernel`: the k indices of `CHUNK` pre-hashed keys
//!   through each index routine available here (`flat_indices`,
//!   ids `<scheme>/k=<k>/kernel=<name>`): the index arithmetic alone, the
//!   hash already paid.
//!
//! Benchmark ids are `<scheme>/k=<k>/key=<bytes>`; the report generator
//! derives hash computations per key (`Scheme::hashes_per_key`) and bytes
//! hashed from them.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput};
use lesshash::internals::hash::{hash128, independent_hash};
use lesshash::internals::kernel::{FlatSpec, flat_indices};
use lesshash::internals::scheme::{for_each_index, reduce};
use lesshash::{BloomFilter, Enhancement, Kernel, Layout, Scheme};

use super::common::{Cursor, mix};

const KS: [u32; 5] = [3, 6, 8, 11, 16];
const KEY_SIZES: [usize; 4] = [8, 16, 64, 256];
const DRAM_KEY_SIZES: [usize; 2] = [8, 64];
const SCHEMES: [Scheme; 3] = [
    Scheme::Independent,
    Scheme::DoubleHashing,
    Scheme::EnhancedDoubleHashing(Enhancement::Cube),
];
/// Keys per timed iteration.
const CHUNK: usize = 512;
/// Keys per step of the batch pipeline (`lesshash::internals::batch::CHUNK`).
const PIPELINE_CHUNK: usize = lesshash::internals::batch::CHUNK;
/// Keys in the in-cache pools (the cursor walks them chunk by chunk).
const POOL: usize = 4096;
const CACHE_BITS: u64 = 16 * 1024 * 8;
/// The range of a two-hash classic filter of `CACHE_BITS` (the builder's
/// prime range: the next prime above 131072).
const CACHE_BITS_PRIME: u64 = 131_101;
const DRAM_BITS: u64 = 256 * 1024 * 1024 * 8;
const SEED: u64 = 0x5eed;

/// `POOL` distinct keys of `size` bytes in one flat buffer.
fn key_pool(size: usize) -> Vec<u8> {
    let mut buf = vec![0u8; POOL * size];
    for (i, key) in buf.chunks_exact_mut(size).enumerate() {
        for (j, word) in key.chunks_mut(8).enumerate() {
            let v = mix(((i as u64) << 16) ^ j as u64).to_le_bytes();
            word.copy_from_slice(&v[..word.len()]);
        }
    }
    buf
}

fn id(scheme: Scheme, k: u32, size: usize) -> BenchmarkId {
    BenchmarkId::new(scheme.name(), format!("k={k}/key={size}"))
}

/// The k indices of a key over `[0, range)` folded into one value: hashing
/// and index arithmetic with no memory access. The two-hash schemes use the
/// crate's own incremental path; `Independent` the crate's k seeded hashes.
#[inline(always)]
fn indices_only(scheme: Scheme, bytes: &[u8], range: u64, k: u32) -> u64 {
    match scheme {
        Scheme::Independent => (0..k).fold(0, |acc, i| {
            acc ^ reduce(independent_hash(bytes, SEED, i), range)
        }),
        s => {
            let mut acc = 0;
            for_each_index(s, hash128(bytes, SEED), range, k, |_, x| {
                acc ^= x;
                true
            });
            acc
        }
    }
}

fn classic(scheme: Scheme, bits: u64, k: u32) -> BloomFilter {
    BloomFilter::builder()
        .layout(Layout::Classic)
        .scheme(scheme)
        .seed(SEED)
        .bits(bits)
        .hashes(k)
        .build()
        .expect("valid bench geometry")
}

/// Registers the three hashes-saved groups.
pub fn register(c: &mut Criterion) {
    let pools: Vec<(usize, Vec<u8>)> = KEY_SIZES.iter().map(|&s| (s, key_pool(s))).collect();

    let mut g = c.benchmark_group("hashes_saved_index");
    g.throughput(Throughput::Elements(CHUNK as u64));
    for (size, pool) in &pools {
        for k in KS {
            for scheme in SCHEMES {
                let mut cursor = Cursor::new();
                g.bench_function(id(scheme, k, *size), |b| {
                    b.iter(|| {
                        let keys = cursor.next(pool, CHUNK * size);
                        let mut acc = 0u64;
                        for key in keys.chunks_exact(*size) {
                            acc ^= indices_only(scheme, black_box(key), CACHE_BITS, k);
                        }
                        black_box(acc)
                    })
                });
            }
        }
    }
    g.finish();

    // The bound of the speedup: k XXH3-64 against one XXH3-128 and
    // nothing else, so the ratio k * t64 / t128 is what hashing once could
    // save if deriving and using the k indices cost nothing.
    let mut g = c.benchmark_group("hashes_saved_bound");
    g.throughput(Throughput::Elements(CHUNK as u64));
    for (size, pool) in &pools {
        for hash in ["xxh3-64", "xxh3-128"] {
            let mut cursor = Cursor::new();
            g.bench_function(BenchmarkId::new(hash, format!("key={size}")), |b| {
                b.iter(|| {
                    let keys = cursor.next(pool, CHUNK * size);
                    let mut acc = 0u64;
                    for key in keys.chunks_exact(*size) {
                        acc ^= if hash == "xxh3-64" {
                            independent_hash(black_box(key), SEED, 0)
                        } else {
                            let h = hash128(black_box(key), SEED);
                            (h ^ (h >> 64)) as u64
                        };
                    }
                    black_box(acc)
                })
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("hashes_saved_kernel");
    g.throughput(Throughput::Elements(CHUNK as u64));
    let hashes: Vec<u128> = (0..CHUNK as u64)
        .map(|i| u128::from(mix(i)) << 64 | u128::from(mix(!i)))
        .collect();
    for k in [8, 16] {
        for scheme in &SCHEMES[1..] {
            let spec = FlatSpec::new(*scheme, CACHE_BITS_PRIME, 0, k).expect("valid spec");
            let mut out = vec![0u64; CHUNK * k as usize];
            for kernel in Kernel::available() {
                g.bench_function(
                    BenchmarkId::new(scheme.name(), format!("k={k}/kernel={}", kernel.name())),
                    |b| {
                        // In slices of the batch pipeline's chunk (32 keys):
                        // probe-major output over 512 keys would put 4 KiB
                        // between a key's consecutive indices.
                        b.iter(|| {
                            for (hs, o) in hashes
                                .chunks(PIPELINE_CHUNK)
                                .zip(out.chunks_mut(PIPELINE_CHUNK * k as usize))
                            {
                                flat_indices(kernel, &spec, black_box(hs), o)
                                    .expect("lengths match");
                            }
                            black_box(&out);
                        })
                    },
                );
            }
        }
    }
    g.finish();

    let mut g = c.benchmark_group("hashes_saved_batch");
    g.throughput(Throughput::Elements(CHUNK as u64));
    for (size, pool) in &pools {
        if *size > 64 {
            continue;
        }
        for scheme in SCHEMES {
            let mut cursor = Cursor::new();
            let mut filter: Option<BloomFilter> = None;
            let keys: Vec<&[u8]> = pool.chunks_exact(*size).collect();
            g.bench_function(id(scheme, 8, *size), |b| {
                let filter = filter.get_or_insert_with(|| classic(scheme, CACHE_BITS, 8));
                b.iter(|| filter.insert_batch(black_box(cursor.next(&keys, CHUNK))));
                black_box(filter.count_ones());
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("hashes_saved_cache");
    g.throughput(Throughput::Elements(CHUNK as u64));
    for (size, pool) in &pools {
        for k in KS {
            for scheme in SCHEMES {
                let mut cursor = Cursor::new();
                let mut filter: Option<BloomFilter> = None;
                g.bench_function(id(scheme, k, *size), |b| {
                    let filter = filter.get_or_insert_with(|| classic(scheme, CACHE_BITS, k));
                    b.iter(|| {
                        let keys = cursor.next(pool, CHUNK * size);
                        for key in keys.chunks_exact(*size) {
                            filter.insert(black_box(key));
                        }
                    });
                    black_box(filter.count_ones());
                });
            }
        }
    }
    g.finish();

    let mut g = c.benchmark_group("hashes_saved_dram");
    g.throughput(Throughput::Elements(CHUNK as u64));
    for size in DRAM_KEY_SIZES {
        for k in KS {
            for scheme in SCHEMES {
                // Keys are made on the fly from a running counter so that no
                // cache line is reused between iterations; the counter write
                // costs the same for every scheme.
                let mut key = key_pool(size)[..size].to_vec();
                let mut counter = 0u64;
                let mut filter: Option<BloomFilter> = None;
                g.bench_function(id(scheme, k, size), |b| {
                    let filter = filter.get_or_insert_with(|| {
                        let mut f = classic(scheme, DRAM_BITS, k);
                        // Touch every page before timing (the allocation is
                        // lazily mapped; page faults are not what is measured).
                        f.clear();
                        f
                    });
                    b.iter(|| {
                        for _ in 0..CHUNK {
                            counter += 1;
                            key[..8].copy_from_slice(&mix(counter).to_le_bytes());
                            filter.insert(black_box(&key[..]));
                        }
                    });
                });
            }
        }
    }
    g.finish();
}
