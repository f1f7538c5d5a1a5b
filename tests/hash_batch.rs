//! `hash::hash_batch` (the batched XXH3-128 of every batch path) equals
//! `xxhash-rust`'s `xxh3_128_with_seed` of each key, for every key type,
//! every length 0 to 256 (the closed formulas up to 16 bytes, `xxhash-rust`
//! past them), batches of one length and of mixed lengths, and any batch
//! length, on every kernel available here (`kernels.rs` requires AVX-512's
//! where CI's CPU has it). The folded-multiply family the same way against
//! its oracle.

use lesshash::internals::hash::{folded_multiply, hash_batch_with};
use lesshash::{HashFamily, Kernel, hash_batch, hash_key};
use proptest::prelude::*;
use xxhash_rust::xxh3::xxh3_128_with_seed;

fn next(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let z = (*state ^ (*state >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn seeds(state: &mut u64) -> Vec<u64> {
    let mut s = vec![0, 1, u64::MAX, lesshash::DEFAULT_SEED];
    s.extend((0..4).map(|_| next(state)));
    s
}

/// `hash_batch` (the automatic kernel's hash) and `hash_batch_with` on
/// every kernel available here (AVX-512's four-lane hash where the CPU
/// has it) each equal `xxhash-rust`; and the folded-multiply family's
/// batch (`HashFamily::hash_batch`, `hash_batch_on` every kernel) and
/// one-key hash each equal its oracle (`folded_multiply`, written from
/// docs/format.md's definition).
#[track_caller]
fn check<K: lesshash::Key>(keys: &[K], seed: u64, what: &str) {
    let mut out = vec![0u128; keys.len()];
    hash_batch(keys, seed, &mut out).expect("lengths match");
    for (i, (key, h)) in keys.iter().zip(&out).enumerate() {
        let expect = key.with_bytes(|b| xxh3_128_with_seed(b, seed));
        assert_eq!(*h, expect, "{what} key {i} seed {seed:#x}");
        assert_eq!(*h, hash_key(key, seed));
        assert_eq!(*h, HashFamily::Xxh3.hash_key(key, seed));
    }
    for kernel in Kernel::available() {
        let mut by_kernel = vec![!0u128; keys.len()];
        hash_batch_with(kernel, keys, seed, &mut by_kernel).expect("lengths match");
        assert!(
            by_kernel == out,
            "{what} seed {seed:#x}: {kernel:?} differs"
        );
    }
    let fold = HashFamily::FoldedMultiply;
    fold.hash_batch(keys, seed, &mut out)
        .expect("lengths match");
    for (i, (key, h)) in keys.iter().zip(&out).enumerate() {
        let expect = key.with_bytes(|b| folded_multiply(b, seed));
        assert_eq!(*h, expect, "folded multiply: {what} key {i} seed {seed:#x}");
        assert_eq!(*h, fold.hash_key(key, seed));
    }
    for kernel in Kernel::available() {
        let mut by_kernel = vec![!0u128; keys.len()];
        fold.hash_batch_on(kernel, keys, seed, &mut by_kernel)
            .expect("lengths match");
        assert!(
            by_kernel == out,
            "folded multiply: {what} seed {seed:#x}: {kernel:?} differs"
        );
    }
}

#[test]
fn every_length_up_to_256_in_uniform_and_mixed_batches() {
    let mut state = 1;
    for seed in seeds(&mut state) {
        let mut mixed = Vec::new();
        for len in 0..=256usize {
            // Uniform: 0 to 9 keys of this length (whole vectors and tails).
            for count in [1usize, 3, 4, 5, 8, 9] {
                let keys: Vec<Vec<u8>> = (0..count)
                    .map(|_| (0..len).map(|_| next(&mut state) as u8).collect())
                    .collect();
                check(&keys, seed, &format!("uniform len {len} x {count}"));
            }
            mixed.push(
                (0..len)
                    .map(|_| next(&mut state) as u8)
                    .collect::<Vec<u8>>(),
            );
        }
        check(&mixed, seed, "mixed lengths 0..=256");
        // Mixed within one length class, e.g. 9-16 byte ids.
        let ids: Vec<Vec<u8>> = (0..37)
            .map(|i| (0..9 + i % 8).map(|_| next(&mut state) as u8).collect())
            .collect();
        check(&ids, seed, "mixed 9-16 bytes");
        let empty: Vec<&[u8]> = vec![b""; 6];
        check(&empty, seed, "empty keys");
    }
}

#[test]
fn every_fixed_width_key_type() {
    let mut state = 2;
    for seed in seeds(&mut state) {
        let n = 67;
        let r: Vec<u64> = (0..n).map(|_| next(&mut state)).collect();
        check(&r, seed, "u64");
        check(
            &r.iter().map(|&x| x as u32).collect::<Vec<_>>(),
            seed,
            "u32",
        );
        check(
            &r.iter().map(|&x| x as u16).collect::<Vec<_>>(),
            seed,
            "u16",
        );
        check(&r.iter().map(|&x| x as u8).collect::<Vec<_>>(), seed, "u8");
        check(
            &r.iter().map(|&x| x as i64).collect::<Vec<_>>(),
            seed,
            "i64",
        );
        check(
            &r.iter()
                .map(|&x| u128::from(x) << 64 | u128::from(!x))
                .collect::<Vec<_>>(),
            seed,
            "u128",
        );
        check(
            &r.iter().map(|&x| x as usize).collect::<Vec<_>>(),
            seed,
            "usize",
        );
        let ids: Vec<[u8; 16]> = r
            .iter()
            .map(|&x| (u128::from(x) * 0x9e37_79b9_7f4a_7c15).to_le_bytes())
            .collect();
        check(&ids, seed, "[u8; 16]");
        let strs: Vec<String> = r.iter().map(|x| format!("{x:016x}")).collect();
        check(&strs, seed, "16-character strings");
        let short: Vec<&str> = strs.iter().map(|s| &s[..3]).collect();
        check(&short, seed, "3-character strs");
    }
}

#[test]
fn out_of_length_is_an_error_naming_out() {
    let mut out = vec![0u128; 2];
    let e = hash_batch(&[1u64, 2, 3], 0, &mut out).unwrap_err();
    assert!(e.to_string().contains("`out`"), "{e}");
}

proptest! {
    #[test]
    fn random_keys_and_seeds(
        keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..40),
        len in 0usize..=16,
        seed in any::<u64>(),
    ) {
        check(&keys, seed, "random");
        // The same keys cut to one length.
        let cut: Vec<Vec<u8>> = keys.iter().map(|k| {
            let mut k = k.clone();
            k.resize(len, 0xa5);
            k
        }).collect();
        check(&cut, seed, "random, one length");
    }
}
