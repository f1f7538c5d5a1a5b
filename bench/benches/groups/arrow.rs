//! Arrow arrays (feature `arrow`) against the slice batch calls over the
//! same keys: what taking an Arrow array costs over `contains_batch`.
//!
//! Ids: `arrow/<keys>/<variant>` against a blocked filter of 1e6 keys at
//! 1% (1.2 MiB), queried with 1e7 keys a call (half members):
//! * `int64`: `contains_batch` over `&[i64]` (bool answers),
//!   `contains_batch_into_bitmap` over `&[i64]` (a bitmap, as Arrow's), and
//!   `contains_array` of an `Int64Array` of the same keys;
//! * `int64-10pct-null`: `contains_array` of that array with every tenth
//!   key null (its answer null), beside `contains_batch` of the slice;
//! * `utf8view-16B`: `contains_batch` over `&[&str]` of 16-byte keys, and
//!   `contains_array` of a `StringViewArray` of them;
//! * `insert-int64`: `insert_batch` of 1e6 `i64` keys into an empty filter
//!   against `insert_array` of an `Int64Array` of them.
//!
//! The targets: `contains_array` at most 1.1x `contains_batch`
//! without nulls, 1.2x with 10% nulls, and 1.2x for `Utf8View`.

use std::hint::black_box;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, StringViewArray};
use criterion::{BenchmarkId, Criterion, Throughput};
use lesshash::BloomFilter;

use super::common::{hex16, member, non_member};

/// Keys a query call takes.
const QUERIES: usize = 10_000_000;
/// Keys the filter holds.
const USERS: u64 = 1_000_000;

pub fn register(c: &mut Criterion) {
    let mut filter = BloomFilter::with_fpr(USERS, 0.01).expect("valid bench geometry");
    let users: Vec<i64> = (0..USERS).map(|i| member(i) as i64).collect();
    filter.insert_batch(&users);
    let keys: Vec<i64> = (0..QUERIES as u64)
        .map(|j| {
            if j % 2 == 0 {
                member(j / 2 % USERS)
            } else {
                non_member(j)
            }
        })
        .map(|k| k as i64)
        .collect();
    let ints: ArrayRef = Arc::new(Int64Array::from(keys.clone()));
    let with_nulls: ArrayRef = Arc::new(Int64Array::from(
        keys.iter()
            .enumerate()
            .map(|(i, &k)| (i % 10 != 9).then_some(k))
            .collect::<Vec<_>>(),
    ));
    let hex: Vec<[u8; 16]> = keys.iter().map(|&k| hex16(k as u64)).collect();
    let strs: Vec<&str> = hex
        .iter()
        .map(|h| std::str::from_utf8(h).expect("hex digits"))
        .collect();
    let text_filter = {
        let mut f = BloomFilter::with_fpr(USERS, 0.01).expect("valid bench geometry");
        let members: Vec<[u8; 16]> = (0..USERS).map(|i| hex16(member(i))).collect();
        f.insert_batch(&members);
        f
    };
    let views: ArrayRef = Arc::new(StringViewArray::from(strs.clone()));

    let mut g = c.benchmark_group("arrow");
    g.throughput(Throughput::Elements(QUERIES as u64));
    let mut out = vec![false; QUERIES];
    let mut bitmap = vec![0u64; lesshash::bitmap_words(QUERIES)];
    g.bench_function(BenchmarkId::new("int64", "contains_batch"), |b| {
        b.iter(|| filter.contains_batch(black_box(&keys), &mut out))
    });
    g.bench_function(
        BenchmarkId::new("int64", "contains_batch_into_bitmap"),
        |b| b.iter(|| filter.contains_batch_into_bitmap(black_box(&keys), &mut bitmap)),
    );
    g.bench_function(BenchmarkId::new("int64", "contains_array"), |b| {
        b.iter(|| filter.contains_array(black_box(ints.as_ref())))
    });
    g.bench_function(
        BenchmarkId::new("int64-10pct-null", "contains_batch"),
        |b| b.iter(|| filter.contains_batch(black_box(&keys), &mut out)),
    );
    g.bench_function(
        BenchmarkId::new("int64-10pct-null", "contains_array"),
        |b| b.iter(|| filter.contains_array(black_box(with_nulls.as_ref()))),
    );
    g.bench_function(BenchmarkId::new("utf8view-16B", "contains_batch"), |b| {
        b.iter(|| text_filter.contains_batch(black_box(&strs), &mut out))
    });
    g.bench_function(BenchmarkId::new("utf8view-16B", "contains_array"), |b| {
        b.iter(|| text_filter.contains_array(black_box(views.as_ref())))
    });

    g.throughput(Throughput::Elements(USERS));
    let empty = BloomFilter::with_fpr(USERS, 0.01).expect("valid bench geometry");
    let user_array: ArrayRef = Arc::new(Int64Array::from(users.clone()));
    g.bench_function(BenchmarkId::new("insert-int64", "insert_batch"), |b| {
        b.iter_batched_ref(
            || empty.clone(),
            |f| f.insert_batch(black_box(&users)),
            criterion::BatchSize::LargeInput,
        )
    });
    g.bench_function(BenchmarkId::new("insert-int64", "insert_array"), |b| {
        b.iter_batched_ref(
            || empty.clone(),
            |f| f.insert_array(black_box(user_array.as_ref())),
            criterion::BatchSize::LargeInput,
        )
    });
    g.finish();
}
