//! Every fast path against its scalar oracle, bit for bit: the incremental
//! index sequence against the direct 128-bit formula, the bits a filter sets
//! against the oracle's positions, pre-hashed against keyed inserts, the
//! Count-Min columns against `reference_columns`, and every batch path
//! (`insert_batch`, `contains_batch`, the pre-hashed `insert_batch` and
//! `contains_batch`, Count-Min `add_batch`/`add_updates`/
//! `estimate_batch`) against the single-key path, over batch lengths and
//! chunkings chosen by the input (0, 1, odd remainders).
//!
//! The index routines (`Kernel::Scalar`, the oracle; `Wide`; `Avx2` and `Avx512` where
//! the CPU has it) are compared directly (`Kernels`: flat indices over
//! arbitrary hashes, geometries and batch lengths, and the blocked probes
//! through filters built under each kernel),
//! and the filter-level batch cases run once per available kernel
//! (`BloomFilter::set_kernel`).

#![no_main]

#[path = "common.rs"]
mod common;

use arbitrary::Arbitrary;
use lesshash::Kernel;
use lesshash::internals::count_min::reference_columns;
use lesshash::internals::kernel::{FlatSpec, flat_indices};
use lesshash::internals::primes::next_prime;
use lesshash::internals::scheme::{for_each_index, reference_index, start_and_stride};
use lesshash::{BloomFilter, CountMinScheme, CountMinSketch, Layout};
use libfuzzer_sys::fuzz_target;

#[derive(Arbitrary, Debug)]
enum Case {
    /// The index sequence over any range (no allocation, so up to 2^64 - 1).
    Indices {
        scheme: u8,
        hash: u128,
        range: u64,
        k: u8,
    },
    /// One key into an empty filter: exactly the oracle's bits get set.
    FilterBits {
        params: common::Params,
        keys: Vec<Vec<u8>>,
    },
    /// Batch calls against single calls, the batch cut into chunks of
    /// `1 + lanes % 17` keys (the remainders a lane-wise kernel handles).
    Batch {
        params: common::Params,
        keys: Vec<Vec<u8>>,
        queries: Vec<Vec<u8>>,
        lanes: u8,
    },
    /// Every available kernel against the scalar kernel, bit for bit.
    Kernels {
        blocked: bool,
        split: bool,
        scheme: u8,
        range: u64,
        partitioned: bool,
        blocks: u32,
        k: u8,
        hashes: Vec<u128>,
    },
    /// Count-Min batch calls against single calls.
    CountMinBatch {
        independent: bool,
        conservative: bool,
        width: u16,
        depth: u8,
        seed: u64,
        updates: Vec<(u8, u16)>,
        lanes: u8,
    },
    /// Count-Min: the columns the sketch updates are the oracle's.
    CountMinColumns {
        independent: bool,
        width: u32,
        depth: u8,
        seed: u64,
        key: Vec<u8>,
    },
}

fn indices(scheme: u8, hash: u128, range: u64, k: u8) {
    let scheme = common::scheme(scheme);
    if !scheme.is_two_hash() {
        return;
    }
    let range = range.max(1);
    let k = u32::from(k);
    let (a, b) = start_and_stride(hash, range);
    assert!(a < range && (b < range || range == 1));
    if range > 1 {
        assert_ne!(b, 0, "zero stride");
    }
    if range.is_power_of_two() && range > 1 {
        assert_eq!(b % 2, 1, "even stride for a power-of-two range");
    }
    let mut seen = 0;
    let done = for_each_index(scheme, hash, range, k, |i, x| {
        assert_eq!(i, seen);
        assert_eq!(
            x,
            reference_index(scheme, a, b, i, range),
            "index {i} differs"
        );
        seen += 1;
        true
    });
    assert!(done);
    assert_eq!(seen, k);
}

fn filter_bits(params: common::Params, keys: Vec<Vec<u8>>) {
    let Some(empty) = params.build() else { return };
    let m = empty.num_bits();
    let mut all = empty.clone();
    let mut expected_all = Vec::new();
    for key in keys.iter().take(8) {
        let positions = empty.positions(key);
        assert_eq!(positions.len(), empty.num_hashes() as usize);
        assert!(positions.iter().all(|&x| x < m), "position beyond m = {m}");
        let mut expected = positions.clone();
        expected.sort_unstable();
        expected.dedup();
        let mut one = empty.clone();
        one.insert(key);
        assert_eq!(
            common::set_bits(&one),
            expected,
            "insert sets other bits than the oracle"
        );
        assert!(one.contains(key));
        if empty.scheme().is_two_hash() {
            let mut hashed = empty.clone();
            hashed
                .prehashed_mut()
                .unwrap()
                .insert(empty.hash_family().hash_key(key, empty.seed()));
            assert!(hashed == one, "insert_hash sets other bits than insert");
        }
        all.insert(key);
        expected_all.extend(expected);
    }
    expected_all.sort_unstable();
    expected_all.dedup();
    assert_eq!(common::set_bits(&all), expected_all);
}

#[allow(clippy::too_many_arguments)]
fn kernels(
    blocked: bool,
    split: bool,
    scheme: u8,
    range: u64,
    partitioned: bool,
    blocks: u32,
    k: u8,
    hashes: Vec<u128>,
) {
    let k = u32::from(k % 70);
    let n = hashes.len();
    if blocked {
        // The blocked probes (scalar, `wide`'s, AVX2) end to end: the same
        // filter bytes under every kernel, by single and batch inserts of
        // the pre-hashed keys, and every key found by every query path.
        let layout = if split {
            Layout::SplitBlock
        } else {
            Layout::Blocked
        };
        let build = |kernel: Kernel| {
            BloomFilter::builder()
                .layout(layout)
                .bits(u64::from(blocks % 4096 + 1) * 512)
                .hashes(k)
                .kernel(kernel)
                .build()
        };
        let mut oracle = match build(Kernel::Scalar) {
            Ok(f) => f,
            Err(e) => {
                assert!(e.to_string().contains('`'), "{e}");
                return;
            }
        };
        let (half, rest) = hashes.split_at(n / 2);
        {
            let mut p = oracle.prehashed_mut().unwrap();
            for &h in half {
                p.insert(h);
            }
            p.insert_batch(rest);
        }
        for kernel in Kernel::available() {
            let mut f = build(kernel).unwrap();
            {
                let mut p = f.prehashed_mut().unwrap();
                p.insert_batch(half);
                for &h in rest {
                    p.insert(h);
                }
            }
            assert!(
                f == oracle,
                "{kernel:?}: other bits than the scalar probe's"
            );
            let p = f.prehashed().unwrap();
            let mut out = vec![false; n];
            p.contains_batch(&hashes, &mut out).unwrap();
            assert!(
                out.iter().all(|&b| b),
                "{kernel:?}: a false negative (batch)"
            );
            assert!(
                hashes.iter().all(|&h| p.contains(h)),
                "{kernel:?}: a false negative"
            );
        }
    } else {
        let scheme = common::scheme(scheme);
        let range = range % (lesshash::BloomFilter::MAX_BITS + 1);
        let stride = if partitioned { range } else { 0 };
        let spec = match FlatSpec::new(scheme, range, stride, k) {
            Ok(s) => s,
            Err(e) => {
                assert!(e.to_string().contains('`'), "{e}");
                return;
            }
        };
        // The scalar kernel against the scheme's oracle, probe-major.
        let mut o0 = vec![0u64; n * k as usize];
        flat_indices(Kernel::Scalar, &spec, &hashes, &mut o0).unwrap();
        for (j, &h) in hashes.iter().enumerate() {
            let (a, b) = start_and_stride(h, range);
            for i in 0..k {
                let expect = u64::from(i) * stride + reference_index(scheme, a, b, i, range);
                assert_eq!(o0[i as usize * n + j], expect, "scalar kernel vs oracle");
            }
        }
        for kernel in Kernel::available() {
            let mut o = vec![u64::MAX; n * k as usize];
            flat_indices(kernel, &spec, &hashes, &mut o).unwrap();
            assert_eq!(o, o0, "{kernel:?} flat indices differ from scalar");
        }
    }
}

fn batch(params: common::Params, keys: Vec<Vec<u8>>, queries: Vec<Vec<u8>>, lanes: u8) {
    // The filter batch paths once per kernel (each filter's option).
    for kernel in Kernel::available() {
        batch_with_kernel(params, kernel, &keys, &queries, lanes);
    }
}

fn batch_with_kernel(
    params: common::Params,
    kernel: Kernel,
    keys: &[Vec<u8>],
    queries: &[Vec<u8>],
    lanes: u8,
) {
    let Some(mut empty) = params.build() else {
        return;
    };
    empty.set_kernel(kernel).unwrap();
    let lanes = 1 + usize::from(lanes % 17);
    let (seed, family) = (empty.seed(), empty.hash_family());
    let two_hash = empty.scheme().is_two_hash();

    // Inserts: one call per key is the oracle.
    let mut single = empty.clone();
    for key in keys {
        single.insert(key);
    }
    let mut whole = empty.clone();
    whole.insert_batch(keys);
    assert!(whole == single, "insert_batch differs from single inserts");
    assert_eq!(whole.insert_calls(), single.insert_calls());
    let mut chunked = empty.clone();
    for chunk in keys.chunks(lanes) {
        chunked.insert_batch(chunk);
    }
    assert!(chunked == single, "chunked insert_batch differs");
    let hashes: Vec<u128> = keys.iter().map(|k| family.hash_key(k, seed)).collect();
    let mut hashed = empty.clone();
    match hashed.prehashed_mut() {
        Ok(mut by_hash) => {
            by_hash.insert_batch(&hashes);
            assert!(two_hash);
            assert!(hashed == single, "insert_hash_batch differs from inserts");
            assert_eq!(hashed.insert_calls(), single.insert_calls());
        }
        Err(_) => {
            assert!(!two_hash);
            assert!(hashed == empty && hashed.insert_calls() == 0);
        }
    }

    // Queries over members and other keys, empty and one-key batches too.
    let filter = single;
    let all: Vec<&Vec<u8>> = keys.iter().chain(queries).collect();
    let expect: Vec<bool> = all.iter().map(|k| filter.contains(*k)).collect();
    assert!(
        expect[..keys.len()].iter().all(|&hit| hit),
        "false negative"
    );
    let mut out = vec![false; all.len()];
    filter.contains_batch(&all, &mut out).unwrap();
    assert_eq!(out, expect, "contains_batch differs from contains");
    let mut out = vec![false; all.len()];
    for (chunk, slots) in all.chunks(lanes).zip(out.chunks_mut(lanes)) {
        filter.contains_batch(chunk, slots).unwrap();
    }
    assert_eq!(out, expect, "chunked contains_batch differs");
    let all_hashes: Vec<u128> = all.iter().map(|k| family.hash_key(*k, seed)).collect();
    let mut out = vec![false; all.len()];
    match filter.prehashed() {
        Ok(by_hash) => {
            by_hash.contains_batch(&all_hashes, &mut out).unwrap();
            assert_eq!(
                out, expect,
                "pre-hashed contains_batch differs from contains"
            );
            for (h, &e) in all_hashes.iter().zip(&expect) {
                assert_eq!(by_hash.contains(*h), e);
            }
        }
        Err(_) => assert!(!two_hash),
    }
    let empty_keys: [&[u8]; 0] = [];
    filter.contains_batch(&empty_keys, &mut []).unwrap();
    let mut none = empty.clone();
    none.insert_batch(&empty_keys);
    assert!(none == empty && none.insert_calls() == 0);
}

#[allow(clippy::too_many_arguments)]
fn count_min_batch(
    independent: bool,
    conservative: bool,
    width: u16,
    depth: u8,
    seed: u64,
    updates: Vec<(u8, u16)>,
    lanes: u8,
) {
    let scheme = if independent {
        CountMinScheme::Independent
    } else {
        CountMinScheme::DoubleHashing
    };
    let width = u64::from(width % 2048).max(1);
    let width = if independent {
        width
    } else {
        next_prime(width).unwrap()
    };
    let builder = CountMinSketch::builder()
        .scheme(scheme)
        .width(width)
        .depth(u32::from(depth % 16).max(1))
        .seed(seed)
        .conservative(conservative);
    let Ok(empty) = builder.build() else { return };
    let lanes = 1 + usize::from(lanes % 17);
    let updates: Vec<([u8; 1], u64)> = updates
        .into_iter()
        .map(|(k, c)| ([k], u64::from(c)))
        .collect();

    let mut single = empty.clone();
    for (key, count) in &updates {
        single.add(key, *count);
    }
    let mut whole = empty.clone();
    whole.add_updates(&updates);
    assert!(whole == single, "add_updates differs from single adds");
    let mut chunked = empty.clone();
    for chunk in updates.chunks(lanes) {
        chunked.add_updates(chunk);
    }
    assert!(chunked == single, "chunked add_updates differs");

    // add_batch with one count for all keys.
    let count = updates.first().map_or(1, |u| u.1);
    let keys: Vec<[u8; 1]> = updates.iter().map(|u| u.0).collect();
    let mut single_count = empty.clone();
    for key in &keys {
        single_count.add(key, count);
    }
    let mut batch = empty.clone();
    for chunk in keys.chunks(lanes) {
        batch.add_batch(chunk, count);
    }
    assert!(batch == single_count, "add_batch differs from single adds");

    let queries: Vec<[u8; 1]> = (0..=u8::MAX).map(|k| [k]).collect();
    let expect: Vec<u64> = queries.iter().map(|k| single.estimate(k)).collect();
    let mut out = vec![0; queries.len()];
    for (chunk, slots) in queries.chunks(lanes).zip(out.chunks_mut(lanes)) {
        single.estimate_batch(chunk, slots).unwrap();
    }
    assert_eq!(out, expect, "estimate_batch differs from estimate");
}

fn count_min_columns(independent: bool, width: u32, depth: u8, seed: u64, key: Vec<u8>) {
    let scheme = if independent {
        CountMinScheme::Independent
    } else {
        CountMinScheme::DoubleHashing
    };
    let width = u64::from(width % (1 << 16)).max(1);
    let width = if independent {
        width
    } else {
        next_prime(width).unwrap()
    };
    let depth = u32::from(depth % 32).max(1);
    let sketch = match CountMinSketch::builder()
        .scheme(scheme)
        .width(width)
        .depth(depth)
        .seed(seed)
        .build()
    {
        Ok(s) => s,
        Err(e) => {
            assert!(e.to_string().contains('`'), "error names no parameter: {e}");
            return;
        }
    };
    let oracle = reference_columns(scheme, &key, seed, sketch.dimensions());
    assert_eq!(
        sketch.columns(&key),
        oracle,
        "columns differ from the oracle"
    );
}

fuzz_target!(|case: Case| match case {
    Case::Indices {
        scheme,
        hash,
        range,
        k,
    } => indices(scheme, hash, range, k),
    Case::FilterBits { params, keys } => filter_bits(params, keys),
    Case::Kernels {
        blocked,
        split,
        scheme,
        range,
        partitioned,
        blocks,
        k,
        hashes,
    } => kernels(
        blocked,
        split,
        scheme,
        range,
        partitioned,
        blocks,
        k,
        hashes
    ),
    Case::Batch {
        params,
        keys,
        queries,
        lanes,
    } => batch(params, keys, queries, lanes),
    Case::CountMinBatch {
        independent,
        conservative,
        width,
        depth,
        seed,
        updates,
        lanes,
    } => count_min_batch(
        independent,
        conservative,
        width,
        depth,
        seed,
        updates,
        lanes
    ),
    Case::CountMinColumns {
        independent,
        width,
        depth,
        seed,
        key,
    } => count_min_columns(independent, width, depth, seed, key),
});
