//! Persistence (issue 7): serializing, loading and the zero-copy view, in
//! bytes per second of serialized filter, plus per-key query cost of the
//! view against the owned filter.
//!
//! ```sh
//! cargo bench --bench lesshash -- format
//! ```
//!
//! Sizes: 4 MiB (the loader's work in cache-sized pieces) and 64 MiB
//! (fresh memory: every load touches new pages, as a real load does).

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput};
use lesshash::{Block, BloomFilter, FilterView};

fn filled(mib: u64) -> BloomFilter {
    let bits = mib << 23;
    let mut f = BloomFilter::builder()
        .bits(bits)
        .hashes(7)
        .build()
        .expect("valid geometry");
    // About 11.7 bits per key: every page is touched, fill near half.
    for key in 0..bits / 12 {
        f.insert(&key);
    }
    f
}

/// `bytes` copied to a 64-byte-aligned buffer (as a memory map is).
fn aligned(bytes: &[u8]) -> Vec<Block> {
    let mut blocks = vec![Block([0; 8]); bytes.len().div_ceil(64)];
    bytemuck::cast_slice_mut::<Block, u8>(&mut blocks)[..bytes.len()].copy_from_slice(bytes);
    blocks
}

/// Registers the `format` group.
pub fn register(c: &mut Criterion) {
    let mut g = c.benchmark_group("format");
    for mib in [4u64, 64] {
        let filter = filled(mib);
        let bytes = filter.to_bytes();
        let len = bytes.len();
        let blocks = aligned(&bytes);
        let view_bytes = &bytemuck::cast_slice::<Block, u8>(&blocks)[..len];
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_function(BenchmarkId::new("to_bytes", mib), |b| {
            b.iter(|| black_box(filter.to_bytes()))
        });
        g.bench_function(BenchmarkId::new("write_to_sink", mib), |b| {
            b.iter(|| filter.write_to(std::io::sink()).expect("sink"))
        });
        g.bench_function(BenchmarkId::new("from_bytes", mib), |b| {
            b.iter(|| black_box(BloomFilter::from_bytes(black_box(&bytes)).expect("valid")))
        });
        g.bench_function(BenchmarkId::new("read_from", mib), |b| {
            b.iter(|| black_box(BloomFilter::read_from(black_box(&bytes[..])).expect("valid")))
        });
        g.bench_function(BenchmarkId::new("view_new_verified", mib), |b| {
            b.iter(|| black_box(FilterView::new(black_box(view_bytes)).expect("valid")))
        });

        // Queries: the view reads the borrowed bytes; it should cost the
        // same as the owned filter (one little-endian load per probe).
        let view = FilterView::new(view_bytes).expect("valid");
        let keys: Vec<u64> = (0..10_000u64).map(|i| i * 7919 + (1 << 40)).collect();
        g.throughput(Throughput::Elements(keys.len() as u64));
        g.bench_function(BenchmarkId::new("contains_owned", mib), |b| {
            b.iter(|| keys.iter().filter(|k| filter.contains(*k)).count())
        });
        g.bench_function(BenchmarkId::new("contains_view", mib), |b| {
            b.iter(|| keys.iter().filter(|k| view.contains(*k)).count())
        });
    }
    g.finish();
}
