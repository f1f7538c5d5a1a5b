//! A sequence of filter operations checked against a set model (a
//! `BTreeSet`: ordered, so a seeded run repeats its coverage): no
//! false negatives on any path, and every path (single, batch, pre-hashed,
//! atomic, parallel through the atomic filter, serialized and loaded,
//! viewed, serde) answers the same.
//!
//! `ParallelInsert` drives both parallel paths: `AtomicBloomFilter` shared
//! by 2 to 4 jobs on a 4-thread pool, and `par_insert_batch` /
//! `par_contains_batch` (and their pre-hashed forms) on rayon's pool, and
//! on a batch expanded above the parallel threshold (`par_above_task`,
//! when the op says so), where they really run in parallel.

#![no_main]

#[path = "common.rs"]
mod common;

use std::collections::BTreeSet;
use std::sync::OnceLock;

use arbitrary::Arbitrary;
use common::Params;
use lesshash::{BloomFilter, FilterView};
use libfuzzer_sys::fuzz_target;

type Key = Vec<u8>;

#[derive(Arbitrary, Debug)]
enum Op {
    Insert(Key),
    Contains(Key),
    InsertBatch(Vec<Key>),
    ContainsBatch(Vec<Key>),
    InsertHash(Key),
    ContainsHash(Key),
    /// Pre-hashed batches (two-hash schemes; `Independent` refuses them).
    InsertHashBatch(Vec<Key>),
    ContainsHashBatch(Vec<Key>),
    /// Inserts through an `AtomicBloomFilter` and converts back.
    InsertAtomic(Vec<Key>),
    /// Inserts from `2 + threads % 3` jobs on a thread pool sharing an
    /// `AtomicBloomFilter`, each checking its keys right after inserting.
    ParallelInsert {
        keys: Vec<Key>,
        threads: u8,
    },
    Clear,
    /// Union with a second filter of the same parameters holding these keys.
    Union(Vec<Key>),
    /// Intersection with a second filter of the same parameters.
    Intersect(Vec<Key>),
    /// Union with a filter of other parameters: an error, nothing changes.
    UnionIncompatible(Params),
    /// `to_bytes` then every loader.
    Reload,
    /// Reloads with the insert counter at `u64::MAX - below_max` (a file
    /// may carry any value), then inserts on every path: the counter must
    /// saturate, never panic or wrap.
    SaturatedCounter(u8),
}

#[derive(Arbitrary, Debug)]
struct Input {
    params: Params,
    ops: Vec<Op>,
}

/// Four worker threads, started once. Threads spawned and joined per input
/// (`std::thread::scope`) made LeakSanitizer report glibc's per-thread
/// destructor list (32 bytes from `__cxa_thread_atexit_impl`) as a leak
/// when a thread was still exiting after the join: a false positive that
/// stopped a 10-minute run. Pool threads never exit.
fn pool() -> &'static rayon::ThreadPool {
    static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .expect("a 4-thread pool")
    })
}

/// The filter must contain every key the model holds, on every query path.
fn check_members(filter: &BloomFilter, model: &BTreeSet<Key>) {
    let keys: Vec<&Key> = model.iter().collect();
    let mut out = vec![false; keys.len()];
    filter.contains_batch(&keys, &mut out).unwrap();
    for (key, hit) in keys.iter().zip(&out) {
        assert!(*hit, "false negative (batch) for {key:?}");
        assert!(filter.contains(*key), "false negative for {key:?}");
    }
}

/// The filter's bits, from its serialized payload (64-byte header, then
/// little-endian words): an oracle for the set operations that does not go
/// through them.
fn payload_words(filter: &BloomFilter) -> Vec<u64> {
    let bytes = filter.to_bytes();
    let words = filter.num_bits().div_ceil(64) as usize;
    bytes[64..64 + 8 * words]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn same_params(filter: &BloomFilter) -> BloomFilter {
    let mut other = filter.clone();
    other.clear();
    other
}

/// Keys per parallel task (`TASK` in src/util/parts.rs, `PAR_TASK` in
/// src/filter/par/mod.rs): batches of this many keys or fewer run sequentially,
/// so a fuzz input (at most a few KiB) never reaches the parallel code
/// unless its keys are expanded, as [`par_above_task`] does.
const PAR_TASK: usize = 1 << 14;

/// The `threads` of a `ParallelInsert` (and the `below_max` of a
/// `SaturatedCounter`) that expands the op's keys above [`PAR_TASK`]. A
/// rare value: an expansion costs about a hundred ordinary inputs, and
/// `.ci/fuzz`'s fixed budget must stay about the same. A committed seed
/// (fuzz/seeds/ops_vs_hashset/par-above-task) holds it, so every CI run
/// executes the parallel paths at least once.
const EXPAND: u8 = 0xA5;

/// Expansions per process: the first 16 inputs that ask expand, later ones
/// do not (mutants of the seed keep its `EXPAND` byte: without this cap
/// 30,000 runs took 153 s instead of 61 s). Deterministic for a given
/// sequence of inputs (CI's fixed seed), and a reproducer replayed alone
/// expands.
fn expansion_allowed() -> bool {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static EXPANSIONS: AtomicUsize = AtomicUsize::new(0);
    EXPANSIONS.fetch_add(1, Ordering::Relaxed) < 16
}

/// The parallel batch paths above their threshold, once per input: the
/// fuzzed keys expanded deterministically (key `j` is fuzzed key `j % len`
/// followed by `j`) to `PAR_TASK + 1 + 97 * threads` keys (`threads` the
/// op's job count, 2 for `EXPAND`), so there are
/// a full task and a partial one, on the 4-thread pool. The parallel
/// insert (plain and pre-hashed) must give the sequential insert's bits,
/// and the parallel queries the sequential answers for every key, members
/// and non-members alike (an answer in the wrong slot or a key left out
/// of a task differs). `filter` is not changed.
fn par_above_task(filter: &BloomFilter, keys: &[Key], threads: usize) {
    let n = PAR_TASK + 1 + 97 * threads;
    // A filter of the fuzzed layout, scheme and seed sized for the n keys
    // (a fuzzed filter is often a few bits, saturated by n keys: a key
    // left out or an answer in the wrong slot would not show): 1% for an
    // even number of fuzzed keys, small enough for the parallel insert's
    // private copies (src/filter/par/copies.rs), 1e-4 for an odd number, too
    // large for them (the insert by part, src/filter/par/by_part.rs).
    let parts = keys.len() % 2 == 1;
    let fpr = if parts { 1e-4 } else { 0.01 };
    let Ok(filter) = BloomFilter::builder()
        .layout(filter.layout())
        .scheme(filter.scheme())
        .seed(filter.seed())
        .expected_items(n as u64)
        .fpr(fpr)
        .build()
    else {
        return;
    };
    let filter = &filter;
    // Finding the seeds (fuzz/seeds/ops_vs_hashset/par-above-task-*): with
    // LESSHASH_FUZZ_FIND_EXPAND=copies or =parts the first input that
    // expands a two-hash filter of that kind panics, and libFuzzer writes
    // it out.
    if std::env::var("LESSHASH_FUZZ_FIND_EXPAND")
        .is_ok_and(|w| (w == "parts") == parts && (w == "parts" || w == "copies"))
        && filter.scheme().is_two_hash()
    {
        panic!("an input that expands above PAR_TASK (parts: {parts})");
    }
    let base: &[Key] = if keys.is_empty() { &[Vec::new()] } else { keys };
    let derive = |j: usize, tag: u8| {
        let mut key = base[j % base.len()].clone();
        key.extend_from_slice(&(j as u32).to_le_bytes());
        key.push(tag);
        key
    };
    let big: Vec<Key> = (0..n).map(|j| derive(j, 0)).collect();
    let mut seq = filter.clone();
    seq.insert_batch(&big);
    let mut par = filter.clone();
    pool().install(|| par.par_insert_batch(&big));
    assert!(par == seq, "par_insert_batch above PAR_TASK differs");
    // Members and non-members interleaved.
    let queries: Vec<Key> = (0..n)
        .map(|j| {
            if j % 2 == 0 {
                big[j].clone()
            } else {
                derive(j, 1)
            }
        })
        .collect();
    let mut want = vec![false; n];
    seq.contains_batch(&queries, &mut want).unwrap();
    let mut got = vec![true; n];
    pool().install(|| par.par_contains_batch(&queries, &mut got).unwrap());
    assert!(got == want, "par_contains_batch above PAR_TASK differs");
    if filter.scheme().is_two_hash() {
        let (seed, family) = (filter.seed(), filter.hash_family());
        let hashes: Vec<u128> = big.iter().map(|k| family.hash_key(k, seed)).collect();
        let mut par_hashed = filter.clone();
        pool().install(|| {
            par_hashed
                .prehashed_mut()
                .unwrap()
                .par_insert_batch(&hashes)
        });
        assert!(
            par_hashed == seq,
            "par_insert_hash_batch above PAR_TASK differs"
        );
        let hashes: Vec<u128> = queries.iter().map(|k| family.hash_key(k, seed)).collect();
        let mut got = vec![true; n];
        pool().install(|| {
            par.prehashed()
                .unwrap()
                .par_contains_batch(&hashes, &mut got)
                .unwrap()
        });
        assert!(
            got == want,
            "par_contains_hash_batch above PAR_TASK differs"
        );
    }
}

fn run(input: Input) {
    let Some(mut filter) = input.params.build() else {
        return;
    };
    let two_hash = filter.scheme().is_two_hash();
    let (seed, family) = (filter.seed(), filter.hash_family());
    let mut model: BTreeSet<Key> = BTreeSet::new();
    let mut above_task_done = false;
    for op in input.ops {
        match op {
            Op::Insert(key) => {
                filter.insert(&key);
                assert!(filter.contains(&key), "false negative right after insert");
                model.insert(key);
            }
            Op::Contains(key) => {
                let hit = filter.contains(&key);
                assert!(hit || !model.contains(&key), "false negative for {key:?}");
                let mut out = [false];
                filter.contains_batch(&[&key], &mut out).unwrap();
                assert_eq!(out[0], hit, "batch and single disagree");
            }
            Op::InsertBatch(keys) => {
                let mut single = filter.clone();
                for key in &keys {
                    single.insert(key);
                }
                filter.insert_batch(&keys);
                assert!(filter == single, "batch insert differs from single inserts");
                assert_eq!(filter.insert_calls(), single.insert_calls());
                model.extend(keys);
            }
            Op::ContainsBatch(keys) => {
                let mut out = vec![false; keys.len()];
                filter.contains_batch(&keys, &mut out).unwrap();
                for (key, hit) in keys.iter().zip(&out) {
                    assert_eq!(*hit, filter.contains(key), "batch and single disagree");
                    assert!(*hit || !model.contains(key), "false negative for {key:?}");
                }
                // A wrong-length output is an error, not a panic.
                let mut short = vec![false; keys.len() + 1];
                assert!(filter.contains_batch(&keys, &mut short).is_err());
            }
            Op::InsertHash(key) => {
                let hash = family.hash_key(&key, seed);
                let mut by_key = filter.clone();
                by_key.insert(&key);
                match filter.prehashed_mut() {
                    Ok(mut by_hash) => {
                        by_hash.insert(hash);
                        assert!(two_hash);
                        assert!(filter == by_key, "insert_hash differs from insert");
                        model.insert(key);
                    }
                    Err(e) => assert!(!two_hash, "pre-hashed insert refused: {e}"),
                }
            }
            Op::ContainsHash(key) => {
                let hash = family.hash_key(&key, seed);
                match filter.prehashed() {
                    Ok(by_hash) => {
                        let hit = by_hash.contains(hash);
                        assert_eq!(hit, filter.contains(&key), "contains_hash differs");
                        let mut out = [false];
                        by_hash.contains_batch(&[hash], &mut out).unwrap();
                        assert_eq!(out[0], hit);
                    }
                    Err(_) => assert!(!two_hash),
                }
            }
            Op::InsertHashBatch(keys) => {
                let hashes: Vec<u128> = keys.iter().map(|k| family.hash_key(k, seed)).collect();
                let before = filter.clone();
                let mut by_key = filter.clone();
                by_key.insert_batch(&keys);
                match filter.prehashed_mut() {
                    Ok(mut by_hash) => {
                        by_hash.insert_batch(&hashes);
                        assert!(two_hash);
                        assert!(filter == by_key, "insert_hash_batch differs from inserts");
                        assert_eq!(filter.insert_calls(), by_key.insert_calls());
                        model.extend(keys);
                    }
                    Err(e) => {
                        assert!(!two_hash, "pre-hashed batch refused: {e}");
                        assert!(filter == before, "a refused batch changed the filter");
                        assert_eq!(filter.insert_calls(), before.insert_calls());
                    }
                }
            }
            Op::ContainsHashBatch(keys) => {
                let hashes: Vec<u128> = keys.iter().map(|k| family.hash_key(k, seed)).collect();
                let mut out = vec![false; keys.len()];
                match filter.prehashed() {
                    Ok(by_hash) => {
                        by_hash.contains_batch(&hashes, &mut out).unwrap();
                        for (key, hit) in keys.iter().zip(&out) {
                            assert_eq!(*hit, filter.contains(key), "hash batch and single differ");
                            assert!(*hit || !model.contains(key), "false negative for {key:?}");
                        }
                        let mut short = vec![false; keys.len() + 1];
                        assert!(by_hash.contains_batch(&hashes, &mut short).is_err());
                    }
                    Err(_) => assert!(!two_hash),
                }
            }
            Op::ParallelInsert { keys, threads } => {
                let expand = threads == EXPAND && expansion_allowed();
                let before_par = filter.clone();
                let mut plain = filter.clone();
                plain.insert_batch(&keys);
                let threads = 2 + usize::from(threads % 3);
                let chunk = keys.len().div_ceil(threads).max(1);
                let atomic = filter.into_atomic();
                pool().scope(|s| {
                    for part in keys.chunks(chunk) {
                        let atomic = &atomic;
                        s.spawn(move |_| {
                            for key in part {
                                atomic.insert(key);
                                assert!(atomic.contains(key), "parallel false negative");
                            }
                        });
                    }
                });
                // Every job has finished: all keys are visible.
                for key in &keys {
                    assert!(
                        atomic.contains(key),
                        "false negative after the threads joined"
                    );
                }
                assert_eq!(atomic.insert_calls(), plain.insert_calls());
                filter = atomic.into_inner();
                assert!(
                    filter == plain,
                    "parallel inserts differ from plain inserts"
                );
                // The rayon batch methods: the same bits, the same answers.
                let mut par = before_par;
                par.par_insert_batch(&keys);
                assert!(par == filter, "par_insert_batch differs from inserts");
                let mut out = vec![false; keys.len()];
                par.par_contains_batch(&keys, &mut out).unwrap();
                assert!(
                    out.iter().all(|&hit| hit),
                    "par_contains_batch false negative"
                );
                if two_hash {
                    let hashes: Vec<u128> = keys.iter().map(|k| family.hash_key(k, seed)).collect();
                    let mut par_hashed = same_params(&filter);
                    par_hashed
                        .prehashed_mut()
                        .unwrap()
                        .par_insert_batch(&hashes);
                    let mut plain_hashed = same_params(&filter);
                    plain_hashed.insert_batch(&keys);
                    assert!(par_hashed == plain_hashed, "par_insert_hash_batch differs");
                    par.prehashed()
                        .unwrap()
                        .par_contains_batch(&hashes, &mut out)
                        .unwrap();
                    assert!(out.iter().all(|&hit| hit));
                }
                if expand && !above_task_done {
                    above_task_done = true;
                    par_above_task(&filter, &keys, threads);
                }
                model.extend(keys);
            }
            Op::InsertAtomic(keys) => {
                let mut plain = filter.clone();
                plain.insert_batch(&keys);
                let atomic = filter.into_atomic();
                for key in &keys {
                    atomic.insert(key);
                    assert!(atomic.contains(key), "atomic false negative");
                }
                filter = atomic.into_inner();
                assert!(filter == plain, "atomic inserts differ from plain inserts");
                model.extend(keys);
            }
            Op::Clear => {
                filter.clear();
                model.clear();
                assert_eq!(filter.count_ones(), 0);
                assert_eq!(filter.insert_calls(), 0);
            }
            Op::Union(keys) => {
                let mut other = same_params(&filter);
                other.insert_batch(&keys);
                let est = filter.estimated_union_len(&other).unwrap();
                let (before, theirs) = (payload_words(&filter), payload_words(&other));
                let by_fn = BloomFilter::union_of(&filter, &other).unwrap();
                filter.union(&other).unwrap();
                assert!(filter == by_fn, "union and union_of differ");
                // Bit for bit the OR of the inputs' bits (a no-op or a
                // partial union fails here), and the streaming estimate is
                // the union's own estimate.
                let or: Vec<u64> = before.iter().zip(&theirs).map(|(a, b)| a | b).collect();
                assert!(
                    payload_words(&filter) == or,
                    "union is not the OR of the inputs"
                );
                assert_eq!(
                    est.to_bits(),
                    filter.estimated_len().to_bits(),
                    "estimated_union_len differs from the union's estimated_len"
                );
                model.extend(keys);
                check_members(&filter, &model);
            }
            Op::Intersect(keys) => {
                let mut other = same_params(&filter);
                other.insert_batch(&keys);
                let (before, theirs) = (payload_words(&filter), payload_words(&other));
                let by_fn = BloomFilter::intersection_of(&filter, &other).unwrap();
                filter.intersect(&other).unwrap();
                assert!(filter == by_fn, "intersect and intersection_of differ");
                let and: Vec<u64> = before.iter().zip(&theirs).map(|(a, b)| a & b).collect();
                assert!(
                    payload_words(&filter) == and,
                    "intersect is not the AND of the inputs"
                );
                let keys: BTreeSet<Key> = keys.into_iter().collect();
                model.retain(|k| keys.contains(k));
                check_members(&filter, &model);
            }
            Op::UnionIncompatible(params) => {
                let Some(other) = params.build() else {
                    continue;
                };
                let before = filter.clone();
                let compatible = filter.check_compatible(&other).is_ok();
                match filter.union(&other) {
                    Ok(()) => assert!(compatible),
                    Err(e) => {
                        assert!(!compatible, "union refused a compatible filter: {e}");
                        assert!(filter == before, "a failed union changed the filter");
                    }
                }
                if compatible {
                    // Same geometry: the union must hold our members.
                    check_members(&filter, &model);
                }
            }
            Op::SaturatedCounter(below_max) => {
                let mut bytes = filter.to_bytes();
                let counter = u64::MAX - u64::from(below_max);
                let mut header = lesshash::format::Header::parse(&bytes).unwrap();
                header.insert_calls = counter;
                bytes[..64].copy_from_slice(&header.to_bytes()); // header checksum included
                let end = bytes.len() - 8;
                let sum = xxhash_rust::xxh3::xxh3_64(&bytes[..end]);
                bytes[end..].copy_from_slice(&sum.to_le_bytes());
                filter = BloomFilter::from_bytes(&bytes).unwrap();
                assert_eq!(filter.insert_calls(), counter);
                let key = vec![below_max; 3];
                // Above PAR_TASK (when `below_max` is `EXPAND`): the
                // parallel paths really run in parallel.
                let copies = if below_max == EXPAND && expansion_allowed() {
                    PAR_TASK + 1
                } else {
                    300
                };
                let many = vec![key.clone(); copies];
                filter.insert(&key);
                filter.insert_batch(&many);
                pool().install(|| filter.par_insert_batch(&many));
                if let Ok(mut by_hash) = filter.prehashed_mut() {
                    let h = by_hash.hash(&key);
                    by_hash.insert(h);
                    by_hash.insert_batch(&[h; 300]);
                    pool().install(|| by_hash.par_insert_batch(&[h; 300]));
                }
                let atomic = filter.into_atomic();
                atomic.insert(&key);
                if let Ok(by_hash) = atomic.prehashed() {
                    by_hash.insert(by_hash.hash(&key));
                }
                filter = atomic.into_inner();
                assert_eq!(filter.insert_calls(), u64::MAX, "the counter must saturate");
                model.insert(key);
                check_members(&filter, &model);
            }
            Op::Reload => {
                let bytes = filter.to_bytes();
                assert_eq!(bytes.len() as u64, filter.serialized_len());
                let loaded = BloomFilter::from_bytes(&bytes).unwrap();
                assert!(loaded == filter, "from_bytes changed the filter");
                assert_eq!(loaded.insert_calls(), filter.insert_calls());
                let streamed = BloomFilter::read_from(&bytes[..]).unwrap();
                assert!(streamed == filter, "read_from changed the filter");
                let mut written = Vec::new();
                filter.write_to(&mut written).unwrap();
                assert_eq!(written, bytes, "write_to and to_bytes differ");
                let aligned = common::Aligned::new(&bytes);
                let view = FilterView::new(aligned.bytes()).unwrap();
                for key in &model {
                    assert!(view.contains(key), "view false negative for {key:?}");
                }
                assert!(view.to_filter().unwrap() == filter);
                // serde: JSON has no byte strings (a sequence of u8), CBOR has.
                let json = serde_json::to_vec(&filter).unwrap();
                let from_json: BloomFilter = serde_json::from_slice(&json).unwrap();
                assert!(
                    from_json == filter,
                    "serde_json round trip changed the filter"
                );
                let mut cbor = Vec::new();
                ciborium::into_writer(&filter, &mut cbor).unwrap();
                let from_cbor: BloomFilter = ciborium::from_reader(&cbor[..]).unwrap();
                assert!(from_cbor == filter, "CBOR round trip changed the filter");
                filter = loaded;
            }
        }
    }
    check_members(&filter, &model);
}

fuzz_target!(|input: Input| run(input));
