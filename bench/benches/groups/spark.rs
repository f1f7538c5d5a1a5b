//! Spark's Bloom filter (`lesshash::spark`) against lesshash's own
//! blocked filter of the same capacity and rate, and Spark's layout one key
//! at a time against the batch pipeline.
//!
//! Ids: `spark/<what>/<variant>`, filters of 1e7 long keys at 1% (Spark's
//! sizing: 95.9 million bits, k = 7, 11.4 MiB; lesshash's blocked filter:
//! 11.7 MiB), queried with 1e7 keys a call (half members):
//! * `contains-1e7`: `spark-v2-batch` (`contains_longs`: a chunk's indexes
//!   prefetched ahead), `spark-v1-batch`, `spark-v2-one-key` (a
//!   `contains_long` call per key), `lesshash-blocked-batch`
//!   (`contains_batch` over the same `i64`s);
//! * `insert-1e7`: `insert_longs` of the 1e7 members into an empty Spark
//!   filter against `insert_batch` into an empty blocked one.
//!
//! The target: `spark-v2-batch` at most 1.5x `lesshash-blocked-batch`
//! (a Spark filter is flat: k cache misses a key where the blocked one has
//! one). Spark's own loop (`mightContainLong` in the JVM) is timed by
//! `bench/spark/jvm.sh` over the same keys.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput};
use lesshash::BloomFilter;
use lesshash::spark::{SparkBloomFilter, SparkVersion};

use super::common::{member, non_member};

/// Keys a filter holds, and keys a query call takes.
const N: u64 = 10_000_000;

pub fn register(c: &mut Criterion) {
    let members: Vec<i64> = (0..N).map(|i| member(i) as i64).collect();
    let queries: Vec<i64> = (0..N)
        .map(|j| if j % 2 == 0 { member(j / 2) } else { non_member(j) } as i64)
        .collect();
    let spark = |version| {
        let mut f = SparkBloomFilter::with_fpp(version, N, 0.01).expect("valid bench geometry");
        f.insert_longs(&members);
        f
    };
    let (v2, v1) = (spark(SparkVersion::V2), spark(SparkVersion::V1));
    let mut blocked = BloomFilter::with_fpr(N, 0.01).expect("valid bench geometry");
    blocked.insert_batch(&members);

    let mut g = c.benchmark_group("spark");
    g.throughput(Throughput::Elements(N));
    let mut out = vec![false; N as usize];
    g.bench_function(BenchmarkId::new("contains-1e7", "spark-v2-batch"), |b| {
        b.iter(|| v2.contains_longs(black_box(&queries), &mut out))
    });
    g.bench_function(BenchmarkId::new("contains-1e7", "spark-v1-batch"), |b| {
        b.iter(|| v1.contains_longs(black_box(&queries), &mut out))
    });
    g.bench_function(BenchmarkId::new("contains-1e7", "spark-v2-one-key"), |b| {
        b.iter(|| {
            for (o, &k) in out.iter_mut().zip(black_box(&queries)) {
                *o = v2.contains_long(k);
            }
        })
    });
    g.bench_function(
        BenchmarkId::new("contains-1e7", "lesshash-blocked-batch"),
        |b| b.iter(|| blocked.contains_batch(black_box(&queries), &mut out)),
    );
    g.bench_function(BenchmarkId::new("insert-1e7", "spark-v2-batch"), |b| {
        b.iter(|| {
            let mut f = SparkBloomFilter::with_fpp(SparkVersion::V2, N, 0.01)
                .expect("valid bench geometry");
            f.insert_longs(black_box(&members));
            f
        })
    });
    g.bench_function(
        BenchmarkId::new("insert-1e7", "lesshash-blocked-batch"),
        |b| {
            b.iter(|| {
                let mut f = BloomFilter::with_fpr(N, 0.01).expect("valid bench geometry");
                f.insert_batch(black_box(&members));
                f
            })
        },
    );
    g.finish();
}
