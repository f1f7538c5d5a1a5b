//! Construction cost: `Builder::geometry()`, the sizing search by each
//! layout's exact rate, for the default scheme of each layout and for
//! double hashing on classic, at sizes and rates from small to large.
//! One call per iteration (the rate tables a layout builds once per process
//! are warm: criterion's warm-up builds them).
//!
//! ```sh
//! cargo bench --bench lesshash -- builder
//! ```
//!
//! Ids: `builder/<layout>-<scheme>/n=<n>/p=<p>`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion};
use lesshash::{BloomFilter, Layout, Scheme};

/// Registers the builder group.
pub fn register(c: &mut Criterion) {
    let mut g = c.benchmark_group("builder");
    // 45 points of microseconds to milliseconds each: shorter windows than
    // criterion's default keep the group near a minute and a half.
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(2));
    let configs = Layout::ALL
        .into_iter()
        .map(|l| (l, l.default_scheme()))
        .chain([(Layout::Classic, Scheme::DoubleHashing)]);
    for (layout, scheme) in configs {
        for (n, p, label) in [
            // Small filters: the classic two-hash rate is enumerated at
            // (10, 0.1) and (100, 0.1) (k = 3 over 521 bits), modelled at
            // (100, 0.01).
            (10u64, 0.1, "n=10/p=0.1"),
            (100, 0.1, "n=100/p=0.1"),
            (100, 0.01, "n=100/p=0.01"),
            (1_000, 0.01, "n=1e3/p=0.01"),
            (1_000_000, 0.01, "n=1e6/p=0.01"),
            (1_000_000_000, 0.01, "n=1e9/p=0.01"),
            (1_000, 1e-6, "n=1e3/p=1e-6"),
            (1_000_000, 1e-6, "n=1e6/p=1e-6"),
            (1_000_000_000, 1e-6, "n=1e9/p=1e-6"),
        ] {
            let builder = BloomFilter::builder()
                .layout(layout)
                .scheme(scheme)
                .expected_items(n)
                .fpr(p);
            let (group_id, param) = label.split_once('/').expect("n/p label");
            g.bench_function(
                BenchmarkId::new(
                    format!("{}-{}/{group_id}", layout.name(), scheme.name()),
                    param,
                ),
                |b| b.iter(|| black_box(black_box(&builder).geometry().expect("valid"))),
            );
        }
    }
    g.finish();
}
