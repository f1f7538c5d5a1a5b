//! The batched XXH3-128 (`hash_batch`, which every batch path runs)
//! against `xxhash-rust`'s one-shot `xxh3_128_with_seed`, bit for bit: keys
//! of any length (the short-input formulas up to 16 bytes, `xxhash-rust`
//! past them), batches of one length and of mixed lengths and classes, any
//! seed, and fixed-width integer keys. The folded-multiply family's batch
//! (`HashFamily::hash_batch_on`, every kernel) and one-key hash against its
//! oracle (`folded_multiply`, written from docs/format.md) the same way.

#![no_main]

use arbitrary::Arbitrary;
use lesshash::internals::hash::{folded_multiply, hash_batch_with};
use lesshash::{HashFamily, Kernel, hash_batch};
use libfuzzer_sys::fuzz_target;
use xxhash_rust::xxh3::xxh3_128_with_seed;

#[derive(Arbitrary, Debug)]
struct Input {
    seed: u64,
    /// Cut every key to this length too (a uniform batch), when at most 40.
    uniform: u8,
    keys: Vec<Vec<u8>>,
    ints: Vec<u64>,
    wide: Vec<u128>,
}

/// `hash_batch` and `hash_batch_with` on every kernel available here (the
/// AVX-512 kernel's vector hash where the CPU has it) against `xxhash-rust`.
fn check<K: lesshash::Key>(keys: &[K], seed: u64) {
    let mut out = vec![0u128; keys.len()];
    hash_batch(keys, seed, &mut out).expect("lengths match");
    for (key, h) in keys.iter().zip(&out) {
        key.with_bytes(|b| assert_eq!(*h, xxh3_128_with_seed(b, seed), "key {b:?} seed {seed:#x}"));
    }
    for kernel in Kernel::available() {
        let mut by_kernel = vec![!0u128; keys.len()];
        hash_batch_with(kernel, keys, seed, &mut by_kernel).expect("lengths match");
        assert!(by_kernel == out, "{kernel:?} differs");
    }
    let fold = HashFamily::FoldedMultiply;
    for kernel in Kernel::available() {
        let mut by_kernel = vec![!0u128; keys.len()];
        fold.hash_batch_on(kernel, keys, seed, &mut by_kernel)
            .expect("lengths match");
        for (key, h) in keys.iter().zip(&by_kernel) {
            key.with_bytes(|b| {
                assert_eq!(
                    *h,
                    folded_multiply(b, seed),
                    "folded, {kernel:?}: key {b:?} seed {seed:#x}"
                )
            });
            assert_eq!(*h, fold.hash_key(key, seed));
        }
    }
}

fuzz_target!(|input: Input| {
    let Input {
        seed,
        uniform,
        keys,
        ints,
        wide,
    } = input;
    check(&keys, seed);
    if uniform <= 40 {
        let cut: Vec<Vec<u8>> = keys
            .iter()
            .map(|k| {
                let mut k = k.clone();
                k.resize(uniform as usize, 0x5a);
                k
            })
            .collect();
        check(&cut, seed);
    }
    check(&ints, seed);
    check(&ints.iter().map(|&x| x as u32).collect::<Vec<_>>(), seed);
    check(&ints.iter().map(|&x| x as u16).collect::<Vec<_>>(), seed);
    check(&wide, seed);
});
