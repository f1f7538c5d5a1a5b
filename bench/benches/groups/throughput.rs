//! Throughput by layout and filter size: insert, hit, miss and mixed (50%
//! hits) queries, single-key calls against batch calls.
//!
//! Every layout in `Layout::ALL` is benchmarked, so layouts added to the
//! crate appear here without edits. A filter of nominal size S is built for
//! `n = 8*S / 9.585` u64 keys at 1% (the classic layout's bits/key at 1%,
//! so a classic filter is S bytes; other layouts size themselves by their
//! own formula) and filled with n keys before any query is timed; the
//! actual bytes, n and k are written to `target/lesshash-bench/throughput.csv`.
//!
//! Sizes: 32 KiB (L1), 256 KiB (L2), 4 MiB (L3), 64 MiB (DRAM); with
//! `LESSHASH_BENCH_LARGE=1` also 256 MiB and 1 GiB (filling a 1 GiB filter
//! takes about a minute per layout).
//!
//! Benchmark ids: `<layout>/<op>/<mode>/<size>`, with `mode` one of
//! `single`, `batch`, `par_batch` (feature `rayon`: hit and insert only)
//! and `batch-<kernel>` (every kernel available on this CPU, forced with
//! `BloomFilter::set_kernel`; hit only, the figure the report's SIMD table reads).

use std::cell::RefCell;
use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput};
use lesshash::{BloomFilter, Kernel, Layout};

use super::common::{Cursor, append_side, large, member, mix, non_member, size_name};

/// Keys per timed iteration.
const CHUNK: usize = 1024;
/// Keys per timed iteration of the parallel modes: enough for rayon to
/// split across threads (its tasks are thousands of keys).
const PAR_CHUNK: usize = 1 << 16;
/// Keys in each query pool (2 MiB of u64): large enough that queries into a
/// DRAM-sized filter do not revisit cached lines.
const POOL: usize = 1 << 18;
/// Bits per key of a classic filter at 1% (so n keys fill S bytes).
const CLASSIC_BITS_PER_KEY_1PCT: f64 = 9.585;

fn sizes() -> Vec<u64> {
    let mut s = vec![32 << 10, 256 << 10, 4 << 20, 64 << 20];
    if large() {
        s.extend([256 << 20, 1 << 30]);
    }
    s
}

struct State {
    filter: BloomFilter,
    hits: Vec<u64>,
    misses: Vec<u64>,
    mixed: Vec<u64>,
    out: Vec<bool>,
    par_out: Vec<bool>,
}

fn build(layout: Layout, bytes: u64) -> State {
    let n = (bytes as f64 * 8.0 / CLASSIC_BITS_PER_KEY_1PCT) as u64;
    let mut filter = BloomFilter::builder()
        .layout(layout)
        .expected_items(n)
        .fpr(0.01)
        .build()
        .expect("valid bench geometry");
    let mut buf = Vec::with_capacity(1 << 16);
    let mut i = 0;
    while i < n {
        buf.clear();
        buf.extend((i..n.min(i + (1 << 16))).map(member));
        filter.insert_batch(&buf);
        i += buf.len() as u64;
    }
    append_side(
        "throughput.csv",
        "layout,size,n,bytes,k",
        &format!(
            "{},{},{n},{},{}",
            layout.name(),
            size_name(bytes),
            filter.size_in_bytes(),
            filter.num_hashes()
        ),
    );
    let hits: Vec<u64> = (0..POOL as u64).map(|j| member(mix(j) % n)).collect();
    let misses: Vec<u64> = (0..POOL as u64).map(non_member).collect();
    let mixed = (0..POOL)
        .map(|j| {
            if mix(!(j as u64)) & 1 == 0 {
                hits[j]
            } else {
                misses[j]
            }
        })
        .collect();
    State {
        filter,
        hits,
        misses,
        mixed,
        out: vec![false; CHUNK],
        par_out: vec![false; PAR_CHUNK],
    }
}

#[derive(Clone, Copy)]
enum Op {
    Hit,
    Miss,
    Mixed,
    Insert,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Hit => "hit",
            Op::Miss => "miss",
            Op::Mixed => "mixed",
            Op::Insert => "insert",
        }
    }
}

/// Ways to call the filter.
#[derive(Clone, Copy)]
enum Mode {
    Single,
    /// `insert_batch` / `contains_batch` with the default kernel.
    Batch,
    /// `par_insert_batch` / `par_contains_batch` on rayon's global pool.
    ParBatch,
    /// The batch path with one kernel forced for the benchmark's duration.
    BatchKernel(Kernel),
}

impl Mode {
    fn name(self) -> String {
        match self {
            Mode::Single => "single".into(),
            Mode::Batch => "batch".into(),
            Mode::ParBatch => "par_batch".into(),
            Mode::BatchKernel(k) => format!("batch-{}", k.name()),
        }
    }

    /// The modes timed for `op`: forced kernels only for hits (the SIMD
    /// table's figure) and the parallel path for hits and inserts, which
    /// keeps the group's run time bounded.
    fn for_op(op: Op) -> Vec<Mode> {
        let mut modes = vec![Mode::Single, Mode::Batch];
        if matches!(op, Op::Hit | Op::Insert) {
            modes.push(Mode::ParBatch);
        }
        if matches!(op, Op::Hit) {
            modes.extend(Kernel::available().into_iter().map(Mode::BatchKernel));
        }
        modes
    }
}

/// Registers the throughput group.
pub fn register(c: &mut Criterion) {
    let mut g = c.benchmark_group("throughput");
    for bytes in sizes() {
        for layout in Layout::ALL {
            // Built on first use, so a filtered run (`cargo bench -- peers`)
            // does not fill filters it never queries; dropped after the
            // layout's benches.
            let state: RefCell<Option<State>> = RefCell::new(None);
            // Inserts come last: they add keys to the filled filter.
            for op in [Op::Hit, Op::Miss, Op::Mixed, Op::Insert] {
                for mode in Mode::for_op(op) {
                    let mut cursor = Cursor::new();
                    let keys = match mode {
                        Mode::ParBatch => PAR_CHUNK,
                        _ => CHUNK,
                    };
                    g.throughput(Throughput::Elements(keys as u64));
                    let id = BenchmarkId::new(
                        format!("{}/{}/{}", layout.name(), op.name(), mode.name()),
                        size_name(bytes),
                    );
                    g.bench_function(id, |b| {
                        let mut guard = state.borrow_mut();
                        let st = guard.get_or_insert_with(|| build(layout, bytes));
                        let State {
                            filter,
                            hits,
                            misses,
                            mixed,
                            out,
                            par_out,
                        } = st;
                        let pool: &[u64] = match op {
                            Op::Hit => hits,
                            Op::Miss | Op::Insert => misses,
                            Op::Mixed => mixed,
                        };
                        let kernel = match mode {
                            Mode::BatchKernel(k) => k,
                            _ => Kernel::auto(),
                        };
                        filter.set_kernel(kernel).expect("an available kernel");
                        match (op, mode) {
                            (Op::Insert, Mode::Single) => b.iter(|| {
                                for key in cursor.next(pool, CHUNK) {
                                    filter.insert(black_box(key));
                                }
                            }),
                            (Op::Insert, Mode::ParBatch) => b.iter(|| {
                                filter.par_insert_batch(black_box(cursor.next(pool, PAR_CHUNK)))
                            }),
                            (Op::Insert, _) => {
                                b.iter(|| filter.insert_batch(black_box(cursor.next(pool, CHUNK))))
                            }
                            (_, Mode::Single) => b.iter(|| {
                                let mut found = 0usize;
                                for key in cursor.next(pool, CHUNK) {
                                    found += usize::from(filter.contains(black_box(key)));
                                }
                                black_box(found)
                            }),
                            (_, Mode::ParBatch) => b.iter(|| {
                                filter
                                    .par_contains_batch(
                                        black_box(cursor.next(pool, PAR_CHUNK)),
                                        par_out,
                                    )
                                    .expect("lengths match");
                                black_box(&par_out);
                            }),
                            (_, _) => b.iter(|| {
                                filter
                                    .contains_batch(black_box(cursor.next(pool, CHUNK)), out)
                                    .expect("lengths match");
                                black_box(&out);
                            }),
                        }
                    });
                }
            }
        }
    }
    g.finish();
}
