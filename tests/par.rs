//! Parallel batch paths: bit-identical to the sequential build, no false
//! negatives, same answers, on pools of 1 to 8 threads.
#![cfg(feature = "rayon")]

mod common;

use common::{members, non_members};
use lesshash::{BloomFilter, Layout, Scheme, hash_key};

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
}

#[test]
fn parallel_build_is_bit_identical_and_answers_alike() {
    // Above PAR_TASK keys so the parallel path really splits.
    let n = 3 * lesshash::internals::batch::CHUNK * 1024 + 5;
    for layout in Layout::ALL {
        for (s, scheme) in Scheme::ALL.into_iter().enumerate() {
            // A filter sized for the keys is built through per-thread copies,
            // one 40 times larger by partitions (the sizes are checked in
            // src/filter/par/copies.rs's tests).
            for oversize in [1, 40] {
                let seed = layout as u64 * 10 + s as u64;
                let keys = members(seed, n);
                let queries: Vec<u64> = keys[..1000]
                    .iter()
                    .copied()
                    .chain(non_members(seed, 60_000))
                    .collect();
                let mut seq = BloomFilter::builder()
                    .layout(layout)
                    .scheme(scheme)
                    .expected_items(n as u64 * oversize)
                    .fpr(0.01)
                    .seed(seed)
                    .build()
                    .unwrap();
                let empty = seq.clone();
                seq.insert_batch(&keys);
                let mut expected = vec![false; queries.len()];
                seq.contains_batch(&queries, &mut expected).unwrap();
                for threads in 1..=8 {
                    pool(threads).install(|| {
                        let ctx = format!("{layout:?} {scheme:?} x{oversize} threads={threads}");
                        let mut par = empty.clone();
                        par.par_insert_batch(&keys);
                        assert!(par == seq, "{ctx}: bits differ");
                        assert_eq!(par.insert_calls(), n as u64);
                        let mut out = vec![false; queries.len()];
                        par.par_contains_batch(&queries, &mut out).unwrap();
                        assert_eq!(out, expected, "{ctx}");
                        let mut hits = vec![false; n];
                        par.par_contains_batch(&keys, &mut hits).unwrap();
                        assert!(hits.iter().all(|&x| x), "{ctx}: false negative");
                        if scheme.is_two_hash() {
                            let hk: Vec<u128> = keys.iter().map(|k| hash_key(k, seed)).collect();
                            let hq: Vec<u128> = queries.iter().map(|k| hash_key(k, seed)).collect();
                            let mut byhash = empty.clone();
                            byhash.prehashed_mut().unwrap().par_insert_batch(&hk);
                            assert!(byhash == seq, "{ctx}: pre-hashed bits differ");
                            let by_hash = byhash.prehashed().unwrap();
                            by_hash.par_contains_batch(&hq, &mut out).unwrap();
                            assert_eq!(out, expected, "{ctx} pre-hashed");
                            let e = by_hash.par_contains_batch(&hq, &mut [false; 1]);
                            assert!(e.unwrap_err().to_string().contains("`out`"));
                        } else {
                            assert!(empty.prehashed().is_err());
                        }
                    });
                }
            }
        }
    }
}

/// The parallel insert over many rounds (more keys than one round's
/// tasks), into a filter that already holds keys, with prefetching forced
/// on and off, into filters smaller than a part per thread and into ones
/// built by each strategy: the bits are still exactly the sequential
/// build's.
#[test]
fn parallel_insert_over_many_rounds_and_odd_sizes_is_bit_identical() {
    use lesshash::Prefetch;
    let n = 600_003;
    let keys = members(41, n);
    let before = members(42, 1000);
    for layout in Layout::ALL {
        // 40 items: one or two blocks, private copies; 3,000,000 (3.6 MiB)
        // and 30,000,000 (36 MiB): partitions, many per thread
        // (src/filter/par/copies.rs's tests check these sizes).
        for expected in [40, 3_000_000, 30_000_000] {
            for prefetch in [Prefetch::Always, Prefetch::Never] {
                let mut seq = BloomFilter::builder()
                    .layout(layout)
                    .expected_items(expected)
                    .fpr(0.01)
                    .seed(expected)
                    .prefetch(prefetch)
                    .build()
                    .unwrap();
                seq.insert_batch(&before);
                let empty = seq.clone();
                seq.insert_batch(&keys);
                for threads in [2, 3, 8] {
                    let ctx =
                        format!("{layout:?} expected={expected} {prefetch:?} threads={threads}");
                    let mut par = empty.clone();
                    pool(threads).install(|| par.par_insert_batch(&keys));
                    assert!(par == seq, "{ctx}: bits differ");
                    assert_eq!(par.insert_calls(), (n + before.len()) as u64, "{ctx}");
                }
            }
        }
    }
}

#[test]
fn parallel_length_mismatch_is_an_error() {
    let f = BloomFilter::with_fpr(100_000, 0.01).unwrap();
    let keys = members(1, 100_000);
    let mut out = vec![false; 99_999];
    let e = pool(2).install(|| f.par_contains_batch(&keys, &mut out).unwrap_err());
    assert!(e.to_string().contains("`out`"), "{e}");
}

/// A panicking key in a parallel insert leaves a usable filter (the bits
/// are given back while unwinding).
#[test]
fn panic_in_a_key_leaves_a_usable_filter() {
    struct Bomb(u64);
    impl lesshash::Key for Bomb {
        fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
            assert!(self.0 != 77_777, "bomb");
            f(&self.0.to_le_bytes())
        }
    }
    let keys: Vec<Bomb> = (0..100_000).map(Bomb).collect();
    let mut f = BloomFilter::builder()
        .layout(Layout::Blocked)
        .expected_items(100_000)
        .fpr(0.01)
        .build()
        .unwrap();
    let bits = f.num_bits();
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        pool(2).install(|| f.par_insert_batch(&keys))
    }));
    assert!(r.is_err());
    assert_eq!(f.num_bits(), bits);
    // The bits are back (an empty placeholder would have no bytes).
    assert_eq!(f.size_in_bytes() as u64 * 8, bits);
    f.insert(&5u64);
    assert!(f.contains(&5u64));
}

/// Count-Min sketches: `par_add_batch` and `par_add_updates` give the
/// sequential calls' counters and total, for both schemes, one and
/// several copies, counts that saturate, and 1 to 8 threads; conservative sketches
/// (order-dependent) take the sequential path and match too.
#[test]
fn parallel_count_min_adds_are_identical() {
    use lesshash::{CountMinScheme, CountMinSketch};
    let n = 2 * 16_384 * 3 + 11;
    let keys = members(7, n);
    // A few hot keys so that counters collide and saturate.
    let updates: Vec<(u64, u64)> = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| match i % 50 {
            0 => (keys[0], u64::MAX / 3),
            1 => (keys[1], 1 << 40),
            _ => (k, i as u64 % 17),
        })
        .collect();
    for scheme in [CountMinScheme::DoubleHashing, CountMinScheme::Independent] {
        // Explicit dimensions (one copy), and the paper's sizing for a tiny
        // delta (several copies of the two-hash tables).
        for sized in [false, true] {
            for conservative in [false, true] {
                let b = CountMinSketch::builder()
                    .scheme(scheme)
                    .conservative(conservative)
                    .seed(99);
                let b = if sized {
                    b.epsilon(1e-4).delta(1e-12)
                } else {
                    b.width(50_021).depth(4)
                };
                let empty = b.build().unwrap();
                let copies = empty.copies();
                if sized && scheme == CountMinScheme::DoubleHashing {
                    assert!(copies > 1, "the sized two-hash sketch has several copies");
                }
                let mut seq_batch = empty.clone();
                seq_batch.add_batch(&keys, 3);
                seq_batch.add_batch(&keys, 1 << 50);
                let mut seq_updates = empty.clone();
                seq_updates.add_updates(&updates);
                for threads in [1, 2, 3, 8] {
                    let ctx = format!(
                        "{scheme:?} copies={copies} conservative={conservative} threads={threads}"
                    );
                    pool(threads).install(|| {
                        let mut par = empty.clone();
                        par.par_add_batch(&keys, 3);
                        par.par_add_batch(&keys, 1 << 50);
                        assert_eq!(par.total(), seq_batch.total(), "{ctx}");
                        assert!(
                            par.to_bytes() == seq_batch.to_bytes(),
                            "{ctx}: batch counters differ"
                        );
                        let mut par = empty.clone();
                        par.par_add_updates(&updates);
                        assert_eq!(par.total(), seq_updates.total(), "{ctx}");
                        assert!(
                            par.to_bytes() == seq_updates.to_bytes(),
                            "{ctx}: update counters differ"
                        );
                    });
                }
            }
        }
    }
}
