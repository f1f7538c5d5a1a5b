//! Every fast path against its scalar oracle, bit for bit: the incremental
//! index sequence against the direct 128-bit formula, the bits a filter sets
//! against the oracle's positions, pre-hashed against keyed inserts, and the
//! Count-Min columns against `reference_columns`.

#![no_main]

#[path = "common.rs"]
mod common;

use arbitrary::Arbitrary;
use lesshash::count_min::{next_prime, reference_columns};
use lesshash::scheme::{for_each_index, reference_index, start_and_stride};
use lesshash::{CountMinScheme, CountMinSketch, hash_key};
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
            hashed.insert_hash(hash_key(key, empty.seed())).unwrap();
            assert!(hashed == one, "insert_hash sets other bits than insert");
        }
        all.insert(key);
        expected_all.extend(expected);
    }
    expected_all.sort_unstable();
    expected_all.dedup();
    assert_eq!(common::set_bits(&all), expected_all);
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
    Case::CountMinColumns {
        independent,
        width,
        depth,
        seed,
        key,
    } => count_min_columns(independent, width, depth, seed, key),
});
