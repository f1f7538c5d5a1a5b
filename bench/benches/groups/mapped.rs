//! Memory-mapped filters against loaded ones (feature `mmap`).
//!
//! Ids:
//! * `mapped/open-query/n=<n>/<variant>`: open a blocked filter file built
//!   for n keys at 1% and answer one query. `read_file` loads it (reads and
//!   checks every byte into an allocation); `open` maps it and verifies the
//!   checksum (one pass over the mapped file); `open_unverified` maps it and
//!   checks the header and length only. Per iteration: one open, one query,
//!   one drop. The file's pages are in the page cache (it was just written):
//!   the warm case.
//! * `mapped/contains/n=<n>/<variant>`: `contains_batch` of `BATCH` keys
//!   (half members), hashing included, on the loaded filter and on the
//!   mapped one, whose pages have all been touched before timing (resident).
//!   Elements: keys.
//!
//! n = 1e7 (12 MiB) and 1e8 (120 MiB); the files live in a temporary
//! directory that is removed at the end.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput};
use lesshash::{BloomFilter, MappedFilter};

use super::common::{member, non_member};

/// Keys per timed batch iteration.
const BATCH: usize = 1 << 20;

fn filter_file(dir: &std::path::Path, n: u64) -> std::path::PathBuf {
    let mut f = BloomFilter::with_fpr(n, 0.01).expect("filter");
    let mut keys = Vec::with_capacity(1 << 20);
    let mut i = 0;
    while i < n {
        keys.clear();
        keys.extend((i..n.min(i + (1 << 20))).map(member));
        f.par_insert_batch(&keys);
        i += 1 << 20;
    }
    let path = dir.join(format!("n{n}.lhbf"));
    f.write_file(&path).expect("write");
    path
}

pub fn register(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let queries: Vec<u64> = (0..BATCH as u64)
        .map(|j| if j % 2 == 0 { member(j) } else { non_member(j) })
        .collect();
    for (n, label) in [(10_000_000u64, "1e7"), (100_000_000, "1e8")] {
        let path = filter_file(dir.path(), n);

        let mut g = c.benchmark_group("mapped");
        g.throughput(Throughput::Elements(1));
        let id = |v: &str| BenchmarkId::new(format!("open-query/n={label}"), v);
        g.bench_function(id("read_file"), |b| {
            b.iter(|| {
                let f = BloomFilter::read_file(&path).expect("load");
                black_box(f.contains(&member(3)))
            })
        });
        g.bench_function(id("open"), |b| {
            b.iter(|| {
                let f = MappedFilter::open(&path).expect("map");
                black_box(f.contains(&member(3)))
            })
        });
        g.bench_function(id("open_unverified"), |b| {
            b.iter(|| {
                let f = MappedFilter::open_unverified(&path).expect("map");
                black_box(f.contains(&member(3)))
            })
        });

        g.throughput(Throughput::Elements(BATCH as u64));
        let loaded = BloomFilter::read_file(&path).expect("load");
        let mapped = MappedFilter::open(&path).expect("map"); // touches every page
        let mut out = vec![false; BATCH];
        let id = |v: &str| BenchmarkId::new(format!("contains/n={label}"), v);
        g.bench_function(id("loaded"), |b| {
            b.iter(|| loaded.contains_batch(black_box(&queries), &mut out))
        });
        g.bench_function(id("mapped"), |b| {
            b.iter(|| mapped.contains_batch(black_box(&queries), &mut out))
        });
        g.finish();
    }
}
