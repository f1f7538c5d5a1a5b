//! The blocked filter's batch paths.
//!
//! Single thread, u64 keys, XXH3-128 hashing included, filters built for
//! 1% FPR and filled with n keys before timing. Ids:
//! `blocked/<layout>-<op>/<n>/<variant>`, op one of `contains_hit`,
//! `contains_miss`, `insert`; every iteration handles `BATCH` keys from a
//! pool of 2^20 (so a 120 MiB filter is not served from cache).
//!
//! * `n=1e6` (1.2 MiB), `n=1e7` (12 MiB) and `n=1e8` (118 MiB): `auto`
//!   (default kernel, prefetch mode and distance), `prefetch-off`,
//!   `prefetch-on` (the default distance, one chunk ahead) and
//!   `prefetch-ahead-<d>` (d = 2, 4, 8 chunks ahead): the prefetch
//!   distance sweep;
//! * kernels at n = 1e6: `kernel-scalar`, `kernel-wide`, `kernel-avx2`,
//!   `kernel-avx512` (blocked, split-block and classic layouts, so "SIMD
//!   saved" shows on each); at n = 1e7 the x86 vector kernels other than
//!   the automatic one (blocked);
//! * `par` at n = 1e7: `par_contains_batch` on rayon pools of 1 and 2
//!   threads, `PAR_BATCH` keys per iteration;
//! * peers at n = 1e6, 1e7 and 1e8: sbbf-rs-safe (256-bit split blocks, XXH3-64,
//!   Parquet sizing: 10 bits/key, 1.26% measured) and fastbloom, one call
//!   per key as their APIs offer.
//! * the folded-multiply hash family at every size: the batch calls
//!   (`auto-fold`) and one call per key (`single-fold`);
//! * beside the peers: lesshash's single-key calls (`single`, and
//!   `single-<kernel>` for the x86 vector kernels other than the automatic
//!   one; `insert` rows one call per key for lesshash, sbbf-rs-safe and
//!   fastbloom), the same on 16-byte string keys (`-str16` rows, beside
//!   sbbf-rs-safe), the split-block layout's one-key calls at every size
//!   (`split-block-<op>/<n>/single`: its one bit per segment is
//!   sbbf-rs-safe's), and the
//!   floors (`floor-hash/<n>/xxh3-128`: hashing alone;
//!   `floor-loads/<n>/loads`: one random cache line of an array of the
//!   filter's size per key).
//!
//! The kernel and prefetch mode are each filter's options; every benchmark
//! resets its filter to the defaults and sets the ones it needs.

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, Throughput};
use lesshash::Prefetch;
use lesshash::{BloomFilter, HashFamily, Kernel, Layout};
use xxhash_rust::xxh3::xxh3_64;

use super::common::{Cursor, hex16, member, non_member};

/// Keys per timed iteration.
const BATCH: usize = 4096;
/// Keys per iteration of the parallel benchmarks (several rayon tasks).
const PAR_BATCH: usize = 1 << 17;
/// Keys in each query pool.
const POOL: usize = 1 << 20;

struct Setup {
    filter: BloomFilter,
    hits: Vec<u64>,
    misses: Vec<u64>,
}

fn setup(layout: Layout, n: u64) -> Setup {
    setup_in(layout, n, HashFamily::Xxh3)
}

fn setup_in(layout: Layout, n: u64, family: HashFamily) -> Setup {
    let mut filter = BloomFilter::builder()
        .hash_family(family)
        .layout(layout)
        .expected_items(n)
        .fpr(0.01)
        .build()
        .expect("valid bench geometry");
    let keys: Vec<u64> = (0..n).map(member).collect();
    filter.insert_batch(&keys);
    let hits = (0..POOL as u64).map(|j| member(j * 7919 % n)).collect();
    let misses = (0..POOL as u64).map(non_member).collect();
    Setup {
        filter,
        hits,
        misses,
    }
}

fn bench_ops(
    g: &mut BenchmarkGroup<'_, WallTime>,
    s: &mut Setup,
    layout: Layout,
    n: &str,
    variant: &str,
    configure: &dyn Fn(&mut BloomFilter),
) {
    s.filter.set_kernel(Kernel::auto()).expect("available");
    s.filter.set_prefetch(Prefetch::Auto);
    s.filter
        .set_prefetch_distance(lesshash::Prefetch::DEFAULT_DISTANCE)
        .expect("in range");
    configure(&mut s.filter);
    let name = layout.name();
    for op in ["contains_hit", "contains_miss"] {
        let pool = if op == "contains_hit" {
            &s.hits
        } else {
            &s.misses
        };
        let filter = &s.filter;
        let mut cursor = Cursor::new();
        let mut out = vec![false; BATCH];
        g.bench_function(BenchmarkId::new(format!("{name}-{op}/{n}"), variant), |b| {
            b.iter(|| {
                filter
                    .contains_batch(black_box(cursor.next(pool, BATCH)), &mut out)
                    .expect("lengths match");
                black_box(&out);
            })
        });
    }
    let mut cursor = Cursor::new();
    let (filter, misses) = (&mut s.filter, &s.misses);
    g.bench_function(
        BenchmarkId::new(format!("{name}-insert/{n}"), variant),
        |b| b.iter(|| filter.insert_batch(black_box(cursor.next(misses, BATCH)))),
    );
}

/// Registers the blocked group.
pub fn register(c: &mut Criterion) {
    let default_kernel = Kernel::auto();
    eprintln!("blocked: default kernel {}", default_kernel.name());
    let mut g = c.benchmark_group("blocked");
    g.throughput(Throughput::Elements(BATCH as u64));

    // n = 1e6: default, prefetch on/off, every kernel; classic's kernels.
    let mut s = setup(Layout::Blocked, 1_000_000);
    let auto = |_: &mut BloomFilter| {};
    bench_ops(&mut g, &mut s, Layout::Blocked, "n=1e6", "auto", &auto);
    prefetch_sweep(&mut g, &mut s, "n=1e6");
    for kern in Kernel::available() {
        bench_ops(
            &mut g,
            &mut s,
            Layout::Blocked,
            "n=1e6",
            &format!("kernel-{}", kern.name()),
            &|f: &mut BloomFilter| f.set_kernel(kern).expect("available"),
        );
    }
    let mut split = setup(Layout::SplitBlock, 1_000_000);
    bench_ops(
        &mut g,
        &mut split,
        Layout::SplitBlock,
        "n=1e6",
        "auto",
        &auto,
    );
    for kern in Kernel::available() {
        bench_ops(
            &mut g,
            &mut split,
            Layout::SplitBlock,
            "n=1e6",
            &format!("kernel-{}", kern.name()),
            &|f: &mut BloomFilter| f.set_kernel(kern).expect("available"),
        );
    }
    split_single(&mut g, &split, "n=1e6");
    drop(split);
    let mut classic = setup(Layout::Classic, 1_000_000);
    for kern in Kernel::available() {
        bench_ops(
            &mut g,
            &mut classic,
            Layout::Classic,
            "n=1e6",
            &format!("kernel-{}", kern.name()),
            &|f: &mut BloomFilter| f.set_kernel(kern).expect("available"),
        );
    }
    drop(classic);
    peers(&mut g, &s, 1_000_000, "n=1e6");
    fold_rows(&mut g, 1_000_000, "n=1e6");
    peers_str16(&mut g, 1_000_000, "n=1e6");
    floors(&mut g, &s, "n=1e6");
    drop(s);

    // n = 1e7 (12 MiB: beyond L2, inside the 32 MiB L3 this machine
    // reports): default, the prefetch sweep, single-key calls and peers,
    // parallel contains on 1 and 2 threads.
    let mut s = setup(Layout::Blocked, 10_000_000);
    bench_ops(&mut g, &mut s, Layout::Blocked, "n=1e7", "auto", &auto);
    for kern in other_x86_kernels() {
        bench_ops(
            &mut g,
            &mut s,
            Layout::Blocked,
            "n=1e7",
            &format!("kernel-{}", kern.name()),
            &|f: &mut BloomFilter| f.set_kernel(kern).expect("available"),
        );
    }
    prefetch_sweep(&mut g, &mut s, "n=1e7");
    peers(&mut g, &s, 10_000_000, "n=1e7");
    fold_rows(&mut g, 10_000_000, "n=1e7");
    peers_str16(&mut g, 10_000_000, "n=1e7");
    split_single(&mut g, &setup(Layout::SplitBlock, 10_000_000), "n=1e7");
    floors(&mut g, &s, "n=1e7");
    par(&mut g, &s);
    drop(s);

    // n = 1e8 (118 MiB, DRAM-resident): default, prefetch on/off.
    let mut s = setup(Layout::Blocked, 100_000_000);
    bench_ops(&mut g, &mut s, Layout::Blocked, "n=1e8", "auto", &auto);
    prefetch_sweep(&mut g, &mut s, "n=1e8");
    peers(&mut g, &s, 100_000_000, "n=1e8");
    fold_rows(&mut g, 100_000_000, "n=1e8");
    peers_str16(&mut g, 100_000_000, "n=1e8");
    split_single(&mut g, &setup(Layout::SplitBlock, 100_000_000), "n=1e8");
    floors(&mut g, &s, "n=1e8");
    drop(s);
    g.finish();
}

/// The x86 vector kernels available here other than the automatic one
/// (`kernel-<name>` and `single-<name>` rows beside `auto` and `single`).
fn other_x86_kernels() -> Vec<Kernel> {
    [Kernel::Avx2, Kernel::Avx512]
        .into_iter()
        .filter(|k| k.is_available() && *k != Kernel::auto())
        .collect()
}

/// Prefetch off, and on at each distance: `prefetch-on` is the default
/// distance (one chunk of 32 keys ahead), `prefetch-ahead-<d>` d chunks.
fn prefetch_sweep(g: &mut BenchmarkGroup<'_, WallTime>, s: &mut Setup, n: &str) {
    let variants = [
        ("prefetch-off".to_string(), Prefetch::Never, 1),
        ("prefetch-on".to_string(), Prefetch::Always, 1),
    ]
    .into_iter()
    .chain([2, 4, 8].map(|d| (format!("prefetch-ahead-{d}"), Prefetch::Always, d)));
    for (variant, mode, distance) in variants {
        bench_ops(
            g,
            s,
            Layout::Blocked,
            n,
            &variant,
            &|f: &mut BloomFilter| {
                f.set_prefetch(mode);
                f.set_prefetch_distance(distance).expect("in range");
            },
        );
    }
}

fn par(g: &mut BenchmarkGroup<'_, WallTime>, s: &Setup) {
    let pool: Vec<u64> = (0..POOL as u64)
        .map(|j| if j % 2 == 0 { member(j) } else { non_member(j) })
        .collect();
    g.throughput(Throughput::Elements(PAR_BATCH as u64));
    for threads in [1usize, 2] {
        let rayon_pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool");
        let mut cursor = Cursor::new();
        let mut out = vec![false; PAR_BATCH];
        g.bench_function(
            BenchmarkId::new("blocked-par_contains/n=1e7", format!("threads={threads}")),
            |b| {
                b.iter(|| {
                    rayon_pool.install(|| {
                        s.filter
                            .par_contains_batch(black_box(cursor.next(&pool, PAR_BATCH)), &mut out)
                            .expect("lengths match")
                    });
                    black_box(&out);
                })
            },
        );
    }
    g.throughput(Throughput::Elements(BATCH as u64));
}

/// sbbf-rs-safe for n keys sized by Parquet's rule for 1% (10 bits/key).
fn sbbf_filter(n: u64) -> sbbf_rs_safe::Filter {
    let bits_per_key = (-8.0 / (1.0 - 0.01f64.powf(1.0 / 8.0)).ln()).ceil() as usize;
    sbbf_rs_safe::Filter::new(bits_per_key, n as usize)
}

/// The one-key rows on 16-byte string keys (the hex digits of the u64
/// keys, passed as byte slices, so the hash meets them at a run-time
/// length as it meets `&str`): lesshash's `contains` and `insert` beside
/// sbbf-rs-safe's (XXH3-64 of the same bytes). Ids
/// `blocked/<filter>-<op>-str16/<n>/<single|peer>`.
fn peers_str16(g: &mut BenchmarkGroup<'_, WallTime>, n: u64, size: &str) {
    let mut filter = BloomFilter::builder()
        .expected_items(n)
        .fpr(0.01)
        .build()
        .expect("valid bench geometry");
    let mut sbbf = sbbf_filter(n);
    for i in 0..n {
        let key = hex16(member(i));
        filter.insert(&key[..]);
        sbbf.insert_hash(xxh3_64(&key));
    }
    let hits: Vec<[u8; 16]> = (0..POOL as u64)
        .map(|j| hex16(member(j * 7919 % n)))
        .collect();
    let misses: Vec<[u8; 16]> = (0..POOL as u64).map(|j| hex16(non_member(j))).collect();
    for (op, pool) in [("contains_hit", &hits), ("contains_miss", &misses)] {
        let mut cursor = Cursor::new();
        g.bench_function(
            BenchmarkId::new(format!("blocked-{op}-str16/{size}"), "single"),
            |b| {
                b.iter(|| {
                    let mut found = 0usize;
                    for key in cursor.next(pool, BATCH) {
                        found += usize::from(filter.contains(black_box(&key[..])));
                    }
                    black_box(found)
                })
            },
        );
        let mut cursor = Cursor::new();
        g.bench_function(
            BenchmarkId::new(format!("sbbf-rs-safe-{op}-str16/{size}"), "peer"),
            |b| {
                b.iter(|| {
                    let mut found = 0usize;
                    for key in cursor.next(pool, BATCH) {
                        found += usize::from(sbbf.contains_hash(xxh3_64(black_box(&key[..]))));
                    }
                    black_box(found)
                })
            },
        );
    }
    let mut cursor = Cursor::new();
    g.bench_function(
        BenchmarkId::new(format!("blocked-insert-str16/{size}"), "single"),
        |b| {
            b.iter(|| {
                for key in cursor.next(&misses, BATCH) {
                    filter.insert(black_box(&key[..]));
                }
            })
        },
    );
    let mut cursor = Cursor::new();
    g.bench_function(
        BenchmarkId::new(format!("sbbf-rs-safe-insert-str16/{size}"), "peer"),
        |b| {
            b.iter(|| {
                for key in cursor.next(&misses, BATCH) {
                    sbbf.insert_hash(xxh3_64(black_box(&key[..])));
                }
            })
        },
    );
}

/// The floors no probe code goes below, on the same pools: `floor-hash`,
/// XXH3-128 of each key and nothing else (what a batch must compute); and
/// `floor-loads`, one load of a random cache line of an array as large as
/// the filter per key, the lines drawn by the same hash (what a batch must
/// fetch), independent loads the CPU overlaps as it overlaps the filter's.
fn floors(g: &mut BenchmarkGroup<'_, WallTime>, s: &Setup, size: &str) {
    let hash_seed = s.filter.seed();
    let mut cursor = Cursor::new();
    g.bench_function(
        BenchmarkId::new(format!("floor-hash/{size}"), "xxh3-128"),
        |b| {
            b.iter(|| {
                let mut acc = 0u128;
                for key in cursor.next(&s.hits, BATCH) {
                    acc ^= lesshash::hash_key(black_box(key), hash_seed);
                }
                black_box(acc)
            })
        },
    );
    let lines = s.filter.size_in_bytes() / 64;
    let array = vec![1u64; lines * 8];
    let at: Vec<usize> = s
        .hits
        .iter()
        .map(|k| (xxh3_64(&k.to_le_bytes()) % lines as u64) as usize * 8)
        .collect();
    let mut cursor = Cursor::new();
    g.bench_function(
        BenchmarkId::new(format!("floor-loads/{size}"), "loads"),
        |b| {
            b.iter(|| {
                let mut acc = 0u64;
                for &i in cursor.next(&at, BATCH) {
                    acc = acc.wrapping_add(array[black_box(i)]);
                }
                black_box(acc)
            })
        },
    );
}

/// The split-block layout's one-key calls (`split-block-<op>/<n>/single`),
/// the layout nearest sbbf-rs-safe's (one bit per segment): `contains` of
/// members and non-members, and one `insert` call per key into a copy of
/// the filled filter.
fn split_single(g: &mut BenchmarkGroup<'_, WallTime>, s: &Setup, size: &str) {
    let mut filter = s.filter.clone();
    filter.set_kernel(Kernel::auto()).expect("available");
    single_contains(g, "split-block", &filter, s, size, "single");
    single_insert(g, "split-block", &filter, s, size, "single");
}

/// One `contains` call per key of the hit and the miss pool
/// (`<name>-<op>/<size>/<variant>`).
fn single_contains(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    filter: &BloomFilter,
    s: &Setup,
    size: &str,
    variant: &str,
) {
    for (op, pool) in [("contains_hit", &s.hits), ("contains_miss", &s.misses)] {
        let mut cursor = Cursor::new();
        g.bench_function(
            BenchmarkId::new(format!("{name}-{op}/{size}"), variant),
            |b| {
                b.iter(|| {
                    let mut found = 0usize;
                    for key in cursor.next(pool, BATCH) {
                        found += usize::from(filter.contains(black_box(key)));
                    }
                    black_box(found)
                })
            },
        );
    }
}

/// One `insert` call per key into a copy of the filled filter (the batch
/// rows' `insert` adds the same non-members): `<name>-insert/<size>/<variant>`.
fn single_insert(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    filter: &BloomFilter,
    s: &Setup,
    size: &str,
    variant: &str,
) {
    let mut filter = filter.clone();
    let mut cursor = Cursor::new();
    g.bench_function(
        BenchmarkId::new(format!("{name}-insert/{size}"), variant),
        |b| {
            b.iter(|| {
                for key in cursor.next(&s.misses, BATCH) {
                    filter.insert(black_box(key));
                }
            })
        },
    );
}

/// The folded-multiply family's rows beside XXH3-128's: the batch calls
/// (`auto-fold`) and the one-key calls (`single-fold`) of a blocked filter
/// of n keys built in that family.
fn fold_rows(g: &mut BenchmarkGroup<'_, WallTime>, n: u64, size: &str) {
    let mut s = setup_in(Layout::Blocked, n, HashFamily::FoldedMultiply);
    bench_ops(g, &mut s, Layout::Blocked, size, "auto-fold", &|_| {});
    let filter = s.filter.clone();
    single_contains(g, "blocked", &filter, &s, size, "single-fold");
    single_insert(g, "blocked", &filter, &s, size, "single-fold");
}

/// Peers on the same keys, one call per key: sbbf-rs-safe sized by
/// Parquet's rule (10 bits/key for 1%) and fastbloom (its own sizing);
/// beside them lesshash's own single-key calls (`single`), so that the
/// batch, the single-key path and the peers share a run.
fn peers(g: &mut BenchmarkGroup<'_, WallTime>, s: &Setup, n: u64, size: &str) {
    let kernels = std::iter::once(None).chain(other_x86_kernels().into_iter().map(Some));
    for kernel in kernels {
        let mut filter = s.filter.clone();
        let variant = match kernel {
            Some(k) => {
                filter.set_kernel(k).expect("available");
                format!("single-{}", k.name())
            }
            None => "single".to_string(),
        };
        single_contains(g, "blocked", &filter, s, size, &variant);
    }
    single_insert(g, "blocked", &s.filter, s, size, "single");
    let mut sbbf = sbbf_filter(n);
    for i in 0..n {
        sbbf.insert_hash(xxh3_64(&member(i).to_le_bytes()));
    }
    for (op, pool) in [("contains_hit", &s.hits), ("contains_miss", &s.misses)] {
        let mut cursor = Cursor::new();
        g.bench_function(
            BenchmarkId::new(format!("sbbf-rs-safe-{op}/{size}"), "peer"),
            |b| {
                b.iter(|| {
                    let mut found = 0usize;
                    for key in cursor.next(pool, BATCH) {
                        found += usize::from(
                            sbbf.contains_hash(xxh3_64(&black_box(*key).to_le_bytes())),
                        );
                    }
                    black_box(found)
                })
            },
        );
    }
    let mut cursor = Cursor::new();
    g.bench_function(
        BenchmarkId::new(format!("sbbf-rs-safe-insert/{size}"), "peer"),
        |b| {
            b.iter(|| {
                for key in cursor.next(&s.misses, BATCH) {
                    sbbf.insert_hash(xxh3_64(&black_box(*key).to_le_bytes()));
                }
            })
        },
    );
    drop(sbbf);
    let mut fb = fastbloom::BloomFilter::with_false_pos(0.01).expected_items(n as usize);
    for i in 0..n {
        fb.insert(&member(i));
    }
    let mut cursor = Cursor::new();
    g.bench_function(
        BenchmarkId::new(format!("fastbloom-insert/{size}"), "peer"),
        |b| {
            b.iter(|| {
                for key in cursor.next(&s.misses, BATCH) {
                    fb.insert(black_box(key));
                }
            })
        },
    );
    for (op, pool) in [("contains_hit", &s.hits), ("contains_miss", &s.misses)] {
        let mut cursor = Cursor::new();
        g.bench_function(
            BenchmarkId::new(format!("fastbloom-{op}/{size}"), "peer"),
            |b| {
                b.iter(|| {
                    let mut found = 0usize;
                    for key in cursor.next(pool, BATCH) {
                        found += usize::from(fb.contains(black_box(key)));
                    }
                    black_box(found)
                })
            },
        );
    }
}
