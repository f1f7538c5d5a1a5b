//! One-key calls through every handle a filter lends, against the owned
//! filter's own call: what a handle costs per key.
//!
//! `MappedFilter::contains` and the pre-hashed calls build a `FilterView`
//! (a copy of the geometry and the header) for each key; inlining should
//! leave nothing of it, and these rows show whether it does. The filter
//! holds n = 1e5 keys at 1% (120 KiB, in L2), so a handle's overhead is not
//! hidden behind a miss to memory. Ids:
//!
//! * `handles/contains/<layout>/<variant>`: `BATCH` one-key `contains`
//!   calls (half members), hashing included: `filter`
//!   (`BloomFilter::contains`), `view` (`BloomFilter::view()` taken once,
//!   then its `contains`), `mapped` (`MappedFilter::contains` on the same
//!   filter written to a file and mapped);
//! * `handles/contains_hash/<layout>/<variant>`: the same keys' hashes
//!   (computed before timing) through `prehashed` (`BloomFilter::prehashed`),
//!   `prehashed_mut` (`BloomFilter::prehashed_mut`), `mapped-prehashed`
//!   (`MappedFilter::prehashed`) and `atomic-prehashed`
//!   (`AtomicBloomFilter::prehashed`, relaxed loads);
//! * `handles/contains/<layout>/atomic`: `AtomicBloomFilter::contains` on
//!   the same filter made atomic (one thread);
//! * `handles/insert/<layout>/<variant>`: `BATCH` one-key inserts of new
//!   keys into an empty filter sized for n (a fresh copy per iteration, not
//!   timed): `filter` (`BloomFilter::insert`) and `atomic`
//!   (`AtomicBloomFilter::insert`, one thread); `atomic-present` inserts
//!   `BATCH` members again into the filled atomic filter (every bit
//!   already set: a build from keys with repeats, or many threads adding
//!   the same keys).
//!
//! Layouts: blocked (the default) and classic (a flat layout: k probes over
//! the whole array). Elements: keys.

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput};
use lesshash::{AtomicBloomFilter, BloomFilter, Layout, MappedFilter, hash_key};

use super::common::{member, non_member};

/// One-key calls per timed iteration.
const BATCH: usize = 4096;
/// Keys in the filter.
const N: u64 = 100_000;

pub fn register(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let keys: Vec<u64> = (0..BATCH as u64)
        .map(|j| if j % 2 == 0 { member(j) } else { non_member(j) })
        .collect();
    for layout in [Layout::Blocked, Layout::Classic] {
        let mut filter = BloomFilter::builder()
            .layout(layout)
            .expected_items(N)
            .fpr(0.01)
            .build()
            .expect("filter");
        let empty = filter.clone();
        let members: Vec<u64> = (0..N).map(member).collect();
        filter.insert_batch(&members);
        let path = dir.path().join(format!("{layout}.lhbf"));
        filter.write_file(&path).expect("write");
        let mapped = MappedFilter::open(&path).expect("map");
        let hashes: Vec<u128> = keys.iter().map(|k| hash_key(k, filter.seed())).collect();

        let mut g = c.benchmark_group("handles");
        g.throughput(Throughput::Elements(BATCH as u64));
        let id = |op: &str, v: &str| BenchmarkId::new(format!("{op}/{layout}"), v);

        g.bench_function(id("contains", "filter"), |b| {
            b.iter(|| keys.iter().filter(|k| filter.contains(*k)).count())
        });
        g.bench_function(id("contains", "view"), |b| {
            let view = filter.view();
            b.iter(|| keys.iter().filter(|k| view.contains(*k)).count())
        });
        g.bench_function(id("contains", "mapped"), |b| {
            b.iter(|| keys.iter().filter(|k| mapped.contains(*k)).count())
        });

        g.bench_function(id("contains_hash", "prehashed"), |b| {
            let p = filter.prehashed().expect("two-hash scheme");
            b.iter(|| hashes.iter().filter(|h| p.contains(black_box(**h))).count())
        });
        g.bench_function(id("contains_hash", "mapped-prehashed"), |b| {
            let p = mapped.prehashed().expect("two-hash scheme");
            b.iter(|| hashes.iter().filter(|h| p.contains(black_box(**h))).count())
        });
        let mut owned = filter.clone();
        g.bench_function(id("contains_hash", "prehashed_mut"), |b| {
            let p = owned.prehashed_mut().expect("two-hash scheme");
            b.iter(|| hashes.iter().filter(|h| p.contains(black_box(**h))).count())
        });
        let atomic = AtomicBloomFilter::new(filter.clone());
        g.bench_function(id("contains_hash", "atomic-prehashed"), |b| {
            let p = atomic.prehashed().expect("two-hash scheme");
            b.iter(|| hashes.iter().filter(|h| p.contains(black_box(**h))).count())
        });
        g.bench_function(id("contains", "atomic"), |b| {
            b.iter(|| keys.iter().filter(|k| atomic.contains(*k)).count())
        });

        g.bench_function(id("insert", "filter"), |b| {
            b.iter_batched_ref(
                || empty.clone(),
                |f| keys.iter().for_each(|k| f.insert(black_box(k))),
                BatchSize::SmallInput,
            )
        });
        g.bench_function(id("insert", "atomic"), |b| {
            b.iter_batched_ref(
                || AtomicBloomFilter::new(empty.clone()),
                |f| keys.iter().for_each(|k| f.insert(black_box(k))),
                BatchSize::SmallInput,
            )
        });
        let present = &members[..BATCH];
        g.bench_function(id("insert", "atomic-present"), |b| {
            b.iter(|| present.iter().for_each(|k| atomic.insert(black_box(k))))
        });
        g.finish();
    }
}
