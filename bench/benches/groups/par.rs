//! Parallel batch paths against the sequential ones (feature `rayon`).
//!
//! Ids: `par/<layout>-<op>/n=1e7/<variant>`, op `insert` or `contains`
//! (half members, half not), variant `batch` (the sequential
//! `insert_batch` / `contains_batch`) or `par-threads=<t>` (the `par_*`
//! call on a rayon pool of t threads: 1, 2, then doubling up to the
//! machine's available parallelism). Each iteration handles `BATCH` u64
//! keys from a pool of `POOL`, hashing included, against a filter built for
//! 1e7 keys at 1% (12 MiB blocked, 11.4 MiB classic): the target case, a
//! bulk build of millions of keys (on 2 threads the filter is small enough
//! next to the batch to be built as per-thread copies);
//! `par/blocked-insert/n=1e6/<variant>` and `.../n=1e8/<variant>`: empty
//! filters for 1e6 keys (1.2 MiB: per-thread copies on 2 threads) and 1e8
//! (120 MiB: partitions).
//! `par/count_min-add/w=1048583,d=5/<variant>`:
//! `add_batch` against `par_add_batch` (count 1) into a plain two-hash
//! Count-Min sketch of 1,048,583 (the prime after 2^20) x 5 counters (40 MiB).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput};
use lesshash::{BloomFilter, CountMinSketch, Layout};

use super::common::{Cursor, member, non_member};

/// Keys per timed iteration: a pipeline's bulk call (16 rounds of the
/// partitioned insert on 2 threads).
const BATCH: usize = 1 << 20;
/// Keys in each pool (32 MiB of u64).
const POOL: usize = 1 << 22;
/// Keys the filters are sized for.
const N: u64 = 10_000_000;

fn thread_counts() -> Vec<usize> {
    let max = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut t = vec![1, 2];
    while t[t.len() - 1] * 2 <= max {
        t.push(t[t.len() - 1] * 2);
    }
    t
}

pub fn register(c: &mut Criterion) {
    let mut g = c.benchmark_group("par");
    g.throughput(Throughput::Elements(BATCH as u64));
    let inserts: Vec<u64> = (0..POOL as u64).map(non_member).collect();
    let queries: Vec<u64> = (0..POOL as u64)
        .map(|j| if j % 2 == 0 { member(j) } else { non_member(j) })
        .collect();
    let pools: Vec<(usize, rayon::ThreadPool)> = thread_counts()
        .into_iter()
        .map(|t| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(t)
                .build()
                .expect("thread pool");
            (t, pool)
        })
        .collect();
    for layout in [Layout::Blocked, Layout::Classic] {
        let name = layout.name();
        let mut filter = BloomFilter::builder()
            .layout(layout)
            .expected_items(N)
            .fpr(0.01)
            .build()
            .expect("valid bench geometry");
        let keys: Vec<u64> = (0..N).map(member).collect();
        filter.insert_batch(&keys);
        drop(keys);

        let id = |op: &str, variant: &str| BenchmarkId::new(format!("{name}-{op}/n=1e7"), variant);
        let mut cursor = Cursor::new();
        g.bench_function(id("insert", "batch"), |b| {
            b.iter(|| filter.insert_batch(black_box(cursor.next(&inserts, BATCH))))
        });
        for (t, pool) in &pools {
            let mut cursor = Cursor::new();
            g.bench_function(id("insert", &format!("par-threads={t}")), |b| {
                b.iter(|| {
                    pool.install(|| {
                        filter.par_insert_batch(black_box(cursor.next(&inserts, BATCH)))
                    })
                })
            });
        }
        let mut out = vec![false; BATCH];
        let mut cursor = Cursor::new();
        g.bench_function(id("contains", "batch"), |b| {
            b.iter(|| {
                filter
                    .contains_batch(black_box(cursor.next(&queries, BATCH)), &mut out)
                    .expect("lengths match");
                black_box(&out);
            })
        });
        for (t, pool) in &pools {
            let mut cursor = Cursor::new();
            g.bench_function(id("contains", &format!("par-threads={t}")), |b| {
                b.iter(|| {
                    pool.install(|| {
                        filter
                            .par_contains_batch(black_box(cursor.next(&queries, BATCH)), &mut out)
                            .expect("lengths match")
                    });
                    black_box(&out);
                })
            });
        }
    }
    // A filter small next to the batch (1.2 MiB: per-thread copies) and
    // one larger than the batch's worth of copies (120 MiB: partitions).
    for (items, size) in [(N / 10, "n=1e6"), (10 * N, "n=1e8")] {
        let mut f = BloomFilter::builder()
            .expected_items(items)
            .fpr(0.01)
            .build()
            .expect("valid bench geometry");
        let id = |variant: &str| BenchmarkId::new(format!("blocked-insert/{size}"), variant);
        let mut cursor = Cursor::new();
        g.bench_function(id("batch"), |b| {
            b.iter(|| f.insert_batch(black_box(cursor.next(&inserts, BATCH))))
        });
        for (t, pool) in &pools {
            let mut cursor = Cursor::new();
            g.bench_function(id(&format!("par-threads={t}")), |b| {
                b.iter(|| {
                    pool.install(|| f.par_insert_batch(black_box(cursor.next(&inserts, BATCH))))
                })
            });
        }
    }

    let mut sketch = CountMinSketch::builder()
        .width(1_048_583)
        .depth(5)
        .build()
        .expect("valid bench sketch");
    let id = |variant: &str| BenchmarkId::new("count_min-add/w=1048583,d=5", variant);
    let mut cursor = Cursor::new();
    g.bench_function(id("batch"), |b| {
        b.iter(|| sketch.add_batch(black_box(cursor.next(&inserts, BATCH)), 1))
    });
    for (t, pool) in &pools {
        let mut cursor = Cursor::new();
        g.bench_function(id(&format!("par-threads={t}")), |b| {
            b.iter(|| {
                pool.install(|| sketch.par_add_batch(black_box(cursor.next(&inserts, BATCH)), 1))
            })
        });
    }
    g.finish();
}
