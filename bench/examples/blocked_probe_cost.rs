//! The cost of the blocked layouts' batch probe per key, for comparing the
//! kernels' insert and query paths by time or by instruction count (under
//! `valgrind --tool=callgrind`, where the run-to-run difference of two
//! round counts is the probe's cost, independent of the machine's load).
//!
//! ```text
//! cargo run --release --example blocked_probe_cost -- LAYOUT OP KERNEL [ROUNDS [FPR]]
//! ```
//!
//! LAYOUT: `blocked`, `split-block` or `classic` (the flat index routine's
//! batch path, for comparison); OP: `insert`, `contains_hit` or
//! `contains_miss` (the batch calls), `single_hit` or `single_miss` (one
//! `contains` call per key), `single_insert` (one `insert` call per key),
//! `view_hit` or `view_miss` (one `contains` call per key on the filter's
//! `FilterView`), `str16_hit`, `str16_miss`, `str16_insert` (one call
//! per key, 16-byte keys as byte slices: the hex digits of the u64 keys),
//! and `atomic_hit`, `atomic_miss`, `atomic_insert` (one call per key on
//! the filter made an `AtomicBloomFilter`; the insert's keys are members,
//! every bit already set, as in a build from keys with repeats), and
//! `atomic_insert_2t` (two threads inserting the same members at once, ns
//! per key per thread);
//! KERNEL: `scalar`, `wide` or `avx2`. A filter for 1e6
//! keys at FPR (default 1%, as the criterion group `blocked/.../n=1e6/kernel-*`), filled,
//! then ROUNDS batches of 4096 keys (default 1000); prints ns per key and k.

use std::hint::black_box;
use std::time::Instant;

use lesshash::{AtomicBloomFilter, BloomFilter, Kernel, Layout};

const N: u64 = 1_000_000;
const BATCH: usize = 4096;

fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [layout, op, kernel, rest @ ..] = args.as_slice() else {
        return Err("usage: blocked_probe_cost LAYOUT OP KERNEL [ROUNDS [FPR]]".into());
    };
    let layout = match layout.as_str() {
        "blocked" => Layout::Blocked,
        "split-block" => Layout::SplitBlock,
        "classic" => Layout::Classic,
        other => return Err(format!("unknown layout {other}").into()),
    };
    let kernel: Kernel = kernel.parse()?;
    let rounds: usize = rest.first().map_or(Ok(1000), |r| r.parse())?;
    let fpr: f64 = rest.get(1).map_or(Ok(0.01), |p| p.parse())?;
    let mut filter = BloomFilter::builder()
        .layout(layout)
        .expected_items(N)
        .fpr(fpr)
        .build()?;
    let members: Vec<u64> = (0..N).map(|i| mix(i << 1)).collect();
    filter.insert_batch(&members);
    filter.set_kernel(kernel)?;
    let misses: Vec<u64> = (0..1u64 << 20).map(|i| mix((i << 1) | 1)).collect();
    let pool = if op.ends_with("_hit") {
        &members[..]
    } else {
        &misses[..]
    };
    let str_keys = |keys: &[u64]| -> Vec<[u8; 16]> {
        keys.iter()
            .map(|&k| {
                let mut key = [0u8; 16];
                key.copy_from_slice(format!("{k:016x}").as_bytes());
                key
            })
            .collect()
    };
    let (str_members, str_misses) = if op.starts_with("str16") {
        let m = str_keys(&members);
        for k in &m {
            filter.insert(&k[..]);
        }
        (m, str_keys(&misses))
    } else {
        (Vec::new(), Vec::new())
    };
    let str_pool = if op.ends_with("_hit") {
        &str_members[..]
    } else {
        &str_misses[..]
    };
    let atomic = op
        .starts_with("atomic")
        .then(|| AtomicBloomFilter::new(filter.clone()));
    if op == "atomic_insert_2t" {
        // Both threads insert the same members (nothing new is written),
        // as threads adding overlapping keys do; ns per key per thread.
        let atomic = atomic.as_ref().expect("made for atomic ops");
        let start = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for r in 0..rounds {
                        let from = r * BATCH % (members.len() - BATCH);
                        for k in black_box(&members[from..from + BATCH]) {
                            atomic.insert(k);
                        }
                    }
                });
            }
        });
        let ns = start.elapsed().as_nanos() as f64 / (rounds * BATCH) as f64;
        println!("{ns:.2} ns/key per thread (k = {})", filter.num_hashes());
        return Ok(());
    }
    let mut out = vec![false; BATCH];
    let start = Instant::now();
    for r in 0..rounds {
        let at = r * BATCH % (pool.len() - BATCH);
        let keys = black_box(&pool[at..at + BATCH]);
        match op.as_str() {
            "insert" => filter.insert_batch(keys),
            "contains_hit" | "contains_miss" => filter.contains_batch(keys, &mut out)?,
            "single_hit" | "single_miss" => {
                for (o, k) in out.iter_mut().zip(keys) {
                    *o = filter.contains(k);
                }
            }
            "view_hit" | "view_miss" => {
                let view = filter.view();
                for (o, k) in out.iter_mut().zip(keys) {
                    *o = view.contains(k);
                }
            }
            "str16_hit" | "str16_miss" => {
                for (o, k) in out.iter_mut().zip(&str_pool[at..at + BATCH]) {
                    *o = filter.contains(&k[..]);
                }
            }
            "str16_insert" => {
                for k in &str_pool[at..at + BATCH] {
                    filter.insert(&k[..]);
                }
            }
            "atomic_hit" | "atomic_miss" => {
                let atomic = atomic.as_ref().expect("made for atomic ops");
                for (o, k) in out.iter_mut().zip(keys) {
                    *o = atomic.contains(k);
                }
            }
            "atomic_insert" => {
                let atomic = atomic.as_ref().expect("made for atomic ops");
                let from = at % (members.len() - BATCH);
                for k in &members[from..from + BATCH] {
                    atomic.insert(k);
                }
            }
            "single_insert" => {
                for k in keys {
                    filter.insert(k);
                }
            }
            other => return Err(format!("unknown op {other}").into()),
        }
        black_box(&out);
    }
    let ns = start.elapsed().as_nanos() as f64 / (rounds * BATCH) as f64;
    println!("{ns:.2} ns/key (k = {})", filter.num_hashes());
    Ok(())
}
