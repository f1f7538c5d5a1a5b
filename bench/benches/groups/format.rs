//! Persistence: serializing, loading and the zero-copy view, in bytes per
//! second of serialized filter, plus per-key query cost of the view against
//! the owned filter.
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

/// `bytes` copied to a 64-byte-aligned buffer.
fn aligned(bytes: &[u8]) -> Vec<Block> {
    let mut blocks = vec![Block([0; 8]); bytes.len().div_ceil(64)];
    bytemuck::cast_slice_mut::<Block, u8>(&mut blocks)[..bytes.len()].copy_from_slice(bytes);
    blocks
}

/// One size's inputs, built on first use so that a run filtered to other
/// groups does not fill a 64 MiB filter.
struct Inputs {
    filter: BloomFilter,
    bytes: Vec<u8>,
    /// `bytes` in 64-byte-aligned memory (as a memory map is).
    blocks: Vec<Block>,
}

impl Inputs {
    fn new(mib: u64) -> Self {
        let filter = filled(mib);
        let bytes = filter.to_bytes();
        let blocks = aligned(&bytes);
        Inputs {
            filter,
            bytes,
            blocks,
        }
    }

    fn view_bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<Block, u8>(&self.blocks)[..self.bytes.len()]
    }
}

/// Registers the `format` group.
pub fn register(c: &mut Criterion) {
    let mut g = c.benchmark_group("format");
    for mib in [4u64, 64] {
        let inputs = std::cell::OnceCell::new();
        let get = || inputs.get_or_init(|| Inputs::new(mib));
        // The serialized length, known without filling the filter.
        let len = BloomFilter::builder()
            .bits(mib << 23)
            .hashes(7)
            .build()
            .expect("valid geometry")
            .serialized_len();
        g.throughput(Throughput::Bytes(len));
        g.bench_function(BenchmarkId::new("to_bytes", mib), |b| {
            let filter = &get().filter;
            b.iter(|| black_box(filter.to_bytes()))
        });
        g.bench_function(BenchmarkId::new("write_to_sink", mib), |b| {
            let filter = &get().filter;
            b.iter(|| filter.write_to(std::io::sink()).expect("sink"))
        });
        g.bench_function(BenchmarkId::new("from_bytes", mib), |b| {
            let bytes = &get().bytes;
            b.iter(|| black_box(BloomFilter::from_bytes(black_box(bytes)).expect("valid")))
        });
        g.bench_function(BenchmarkId::new("read_from", mib), |b| {
            let bytes = &get().bytes;
            b.iter(|| black_box(BloomFilter::read_from(black_box(&bytes[..])).expect("valid")))
        });
        g.bench_function(BenchmarkId::new("view_new_verified", mib), |b| {
            let view_bytes = get().view_bytes();
            b.iter(|| black_box(FilterView::new(black_box(view_bytes)).expect("valid")))
        });

        // Queries: the view reads the borrowed bytes; it should cost the
        // same as the owned filter (one little-endian load per probe).
        let keys: Vec<u64> = (0..10_000u64).map(|i| i * 7919 + (1 << 40)).collect();
        g.throughput(Throughput::Elements(keys.len() as u64));
        g.bench_function(BenchmarkId::new("contains_owned", mib), |b| {
            let filter = &get().filter;
            b.iter(|| keys.iter().filter(|k| filter.contains(*k)).count())
        });
        g.bench_function(BenchmarkId::new("contains_view", mib), |b| {
            // Verified by `view_new_verified`; this closure runs per sample.
            let view = FilterView::new_unverified(get().view_bytes()).expect("valid");
            b.iter(|| keys.iter().filter(|k| view.contains(*k)).count())
        });
    }
    g.finish();
}
