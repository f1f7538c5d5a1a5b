//! The 128-bit hash of short inputs (0 to 16 bytes) by closed formulas,
//! the seed's constants derived once: XXH3-128's, and the folded-multiply
//! family's ([`HashFamily::FoldedMultiply`]), which reads the same words.
//!
//! Integer keys, and most ids, are at most 16 bytes long. For those XXH3-128
//! is three closed formulas, one per length class (1-3, 4-8, 9-16 bytes),
//! of a few 64-bit multiplies, xors and shifts, with no loop. This module
//! writes each formula once over [`HashLanes`], a handful of lane
//! operations on 64-bit values, implemented here by `u64` (one key at a
//! time) and by AVX-512's four 64-bit lanes in `super::avx512`, which
//! builds on this module; [`super`] chooses between the two (why no AVX2
//! backend: its docs). The seed's part of each formula (the "bitflips":
//! secret words xored and offset by the seed) is computed once
//! ([`Secrets`]: per filter for one-key calls, per batch otherwise), not
//! once per key as a one-shot call does.
//!
//! The folded-multiply family reads a key as [`short_input`] does (so one
//! reading of the bytes serves both families, in both backends) and mixes
//! the words by two 64 x 64 -> 128 multiplies instead of XXH3's
//! formulas ([`folded_lanes`]); keys over 16 bytes are XXH3-128 in both.
//!
//! The XXH3 result is XXH3-128 exactly, bit for bit what `xxhash-rust`'s
//! `xxh3_128_with_seed` returns (the formulas follow the XXH3
//! specification; tested for every length 0 to 256 and random seeds, and
//! by the `hash_batch` fuzz target). Longer keys go to
//! `xxhash-rust` one at a time: for them the hash is a loop over 16-byte
//! stripes whose cost the one-shot call already amortises.

#![forbid(unsafe_code)]

use xxhash_rust::xxh3::xxh3_128_with_seed;

use super::{HashFamily, Key};

/// The lane operations the short-input formulas need (64-bit lanes).
pub(crate) trait HashLanes: Copy {
    /// Every lane `v`.
    fn splat(v: u64) -> Self;
    /// Lane-wise xor.
    fn xor(self, y: Self) -> Self;
    /// Lane-wise wrapping addition.
    fn add(self, y: Self) -> Self;
    /// Lane-wise logical shift right by `s` (a constant at every call).
    fn shr(self, s: u32) -> Self;
    /// Lane-wise shift left by `s` (a constant at every call).
    fn shl(self, s: u32) -> Self;
    /// Lane-wise wrapping 64 x 64 -> low 64 bits.
    fn mul_lo(self, y: Self) -> Self;
    /// Lane-wise 64 x 64 -> 128 bits, as (low, high).
    fn mul_wide(self, y: Self) -> (Self, Self);
    /// Lane-wise product of the low 32 bits of each: 32 x 32 -> 64.
    fn mul32(self, y: Self) -> Self;
    /// Lane-wise byte reversal.
    fn swap_bytes(self) -> Self;
}

const PRIME32_2: u64 = 0x85EB_CA77;
const PRIME64_1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME64_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME64_3: u64 = 0x1656_67B1_9E37_79F9;
const PRIME_MX1: u64 = 0x1656_6791_9E37_79F9;
const PRIME_MX2: u64 = 0x9FB2_1C65_1E98_DF25;

/// The first 96 bytes of XXH3's default secret (all that inputs of at most
/// 16 bytes read), as little-endian 64-bit words.
const SECRET: [u64; 12] = [
    0xbe4b_a423_396c_feb8,
    0x1cad_21f7_2c81_017c,
    0xdb97_9083_e96d_d4de,
    0x1f67_b3b7_a4a4_4072,
    0x78e5_c0cc_4ee6_79cb,
    0x2172_ffcc_7dd0_5a82,
    0x8e24_43f7_7446_08b8,
    0x4c26_3a81_e690_35e0,
    0xcb00_c391_bb52_283c,
    0xa32e_531b_8b65_d088,
    0x4ef9_0da2_9748_6471,
    0xd8ac_dea9_46ef_1938,
];

/// The seed's share of each short-input formula, computed once per batch
/// (or per filter, for one-key calls), and the family it is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Secrets {
    family: HashFamily,
    seed: u64,
    /// The folded-multiply family's four keys ([`folded_lanes`]).
    fold: [u64; 4],
    /// 1-3 bytes: the low and high halves' bitflips.
    tiny: [u64; 2],
    /// 4-8 bytes: the bitflip.
    mid: u64,
    /// 9-16 bytes: the low and high bitflips.
    wide: [u64; 2],
    /// The hash of the empty input.
    empty: u128,
}

impl Secrets {
    /// The constants of `family` for `seed`. Inlined: a single-key hash
    /// builds them per call, and the constants of classes the key cannot be
    /// in (all but one, for a fixed-width key) and of the other family are
    /// dead code the compiler drops.
    #[inline(always)]
    pub(crate) fn new(family: HashFamily, seed: u64) -> Self {
        let lo32 = |w: u64| w & 0xffff_ffff;
        let hi32 = |w: u64| w >> 32;
        let mid_seed = seed ^ (u64::from((seed as u32).swap_bytes()) << 32);
        Self {
            family,
            seed,
            fold: fold_keys(seed),
            tiny: [
                (lo32(SECRET[0]) ^ hi32(SECRET[0])).wrapping_add(seed),
                (lo32(SECRET[1]) ^ hi32(SECRET[1])).wrapping_sub(seed),
            ],
            mid: (SECRET[2] ^ SECRET[3]).wrapping_add(mid_seed),
            wide: [
                (SECRET[4] ^ SECRET[5]).wrapping_sub(seed),
                (SECRET[6] ^ SECRET[7]).wrapping_add(seed),
            ],
            empty: u128::from(xxh64_avalanche(seed ^ SECRET[8] ^ SECRET[9]))
                | u128::from(xxh64_avalanche(seed ^ SECRET[10] ^ SECRET[11])) << 64,
        }
    }

    /// The seed the constants are for.
    #[inline]
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    pub(crate) fn seed(&self) -> u64 {
        self.seed
    }

    /// The family the constants are for.
    #[inline]
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    pub(crate) fn family(&self) -> HashFamily {
        self.family
    }
}

/// The folded-multiply family's keys for `seed`: XXH64's avalanche of the
/// seed (a bijection: seeds one apart give unrelated keys) xored with four
/// fixed words (XXH3's default secret's words 0 to 3, reused as
/// nothing-up-the-sleeve constants). One avalanche, not one per key: a
/// one-key hash under a seed known only at run time derives them per call.
#[inline(always)]
fn fold_keys(seed: u64) -> [u64; 4] {
    let a = xxh64_avalanche(seed);
    [0, 1, 2, 3].map(|i| a ^ SECRET[i])
}

/// XXH3's length classes of inputs up to 16 bytes, and longer ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Class {
    Empty,
    /// 1-3 bytes.
    Tiny,
    /// 4-8 bytes.
    Mid,
    /// 9-16 bytes.
    Wide,
    /// More than 16 bytes.
    Long,
}

/// What the formula of a key's class reads from it, as up to three words:
/// 1-3 bytes: the two 32-bit combinations of its bytes and length; 4-8:
/// its first and last 4 bytes as one word and the length's multiplier;
/// 9-16: its first and last 8 bytes and the length term.
#[inline(always)]
pub(crate) fn short_input(bytes: &[u8]) -> (Class, [u64; 3]) {
    let len = bytes.len();
    match len {
        0 => (Class::Empty, [0; 3]),
        1..=3 => {
            let lo = u32::from(bytes[0]) << 16
                | u32::from(bytes[len >> 1]) << 24
                | u32::from(bytes[len - 1])
                | (len as u32) << 8;
            let hi = lo.swap_bytes().rotate_left(13);
            (Class::Tiny, [u64::from(lo), u64::from(hi), 0])
        }
        4..=8 => {
            let first = u64::from(read32(bytes, 0));
            let last = u64::from(read32(bytes, len - 4));
            (
                Class::Mid,
                [
                    first.wrapping_add(last << 32),
                    PRIME64_1.wrapping_add((len as u64) << 2),
                    0,
                ],
            )
        }
        9..=16 => (
            Class::Wide,
            [
                read64(bytes, 0),
                read64(bytes, len - 8),
                (len as u64 - 1) << 54,
            ],
        ),
        _ => (Class::Long, [0; 3]),
    }
}

#[inline(always)]
fn read32(bytes: &[u8], at: usize) -> u32 {
    let mut w = [0; 4];
    w.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(w)
}

#[inline(always)]
fn read64(bytes: &[u8], at: usize) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(w)
}

#[inline(always)]
fn xorshift<V: HashLanes>(v: V, s: u32) -> V {
    v.xor(v.shr(s))
}

/// XXH3's avalanche.
#[inline(always)]
fn avalanche<V: HashLanes>(v: V) -> V {
    xorshift(xorshift(v, 37).mul_lo(V::splat(PRIME_MX1)), 32)
}

/// XXH64's avalanche (XXH3 uses it for 0-3 bytes).
#[inline(always)]
fn avalanche64<V: HashLanes>(v: V) -> V {
    let v = xorshift(v, 33).mul_lo(V::splat(PRIME64_2));
    xorshift(xorshift(v, 29).mul_lo(V::splat(PRIME64_3)), 32)
}

#[inline(always)]
fn xxh64_avalanche(v: u64) -> u64 {
    avalanche64(v)
}

/// The hash of inputs of one class, lanes of [`short_input`]'s words,
/// as (low 64 bits, high 64 bits) lanes, in the family of `s`.
#[inline(always)]
pub(crate) fn hash_lanes<V: HashLanes>(class: Class, w: [V; 3], s: &Secrets) -> (V, V) {
    match s.family {
        HashFamily::Xxh3 => xxh3_lanes(class, w, s),
        HashFamily::FoldedMultiply => folded_lanes(class, w, s),
    }
}

/// The folded-multiply family's hash of inputs of one class (not
/// [`Class::Long`]), from [`short_input`]'s words `[a, b, c]`:
///
/// ```text
/// (x, y) = (a, b ^ c) for 9-16 bytes, (a, b) otherwise (0-8 bytes; both 0 when empty)
/// (p0, p1) = (x ^ f0) * (y ^ f1)             64 x 64 -> 128 bits
/// h2 = p0 ^ p1                               the fold of the first product
/// h1 = fold((p0 ^ f2) * (p1 ^ f3))           fold(lo, hi) = lo ^ hi
/// ```
///
/// with `f0..f3` the seed's keys ([`fold_keys`]). The words hold every
/// byte of the key and its length (`b` is the length's term for 4-8
/// bytes, so the first product is an injective multiply by a constant
/// there: the u64 key itself is `a`). Each half is the fold of a full
/// product (a product's high half alone is far from uniform: a fold's
/// low half evens it out), every output bit depending on every input bit;
/// h1, which picks the block (the blocked layouts) or the start (flat),
/// has two rounds. Two multiplies and five xors, where XXH3's formulas
/// take three to six multiplies and about twenty other steps: on a
/// multiply-bound batch the multiplies are the cost.
#[inline(always)]
fn folded_lanes<V: HashLanes>(class: Class, w: [V; 3], s: &Secrets) -> (V, V) {
    let [a, b, c] = w;
    let (x, y) = match class {
        Class::Wide => (a, b.xor(c)),
        Class::Tiny | Class::Mid | Class::Empty => (a, b),
        Class::Long => unreachable!("inputs over 16 bytes are hashed one at a time"),
    };
    let f = |i: usize| V::splat(s.fold[i]);
    let (p0, p1) = x.xor(f(0)).mul_wide(y.xor(f(1)));
    let (q0, q1) = p0.xor(f(2)).mul_wide(p1.xor(f(3)));
    (q0.xor(q1), p0.xor(p1))
}

/// XXH3-128's formulas for inputs of one class.
#[inline(always)]
fn xxh3_lanes<V: HashLanes>(class: Class, w: [V; 3], s: &Secrets) -> (V, V) {
    let [a, b, c] = w;
    match class {
        Class::Tiny => (
            avalanche64(a.xor(V::splat(s.tiny[0]))),
            avalanche64(b.xor(V::splat(s.tiny[1]))),
        ),
        Class::Mid => {
            let (lo, hi) = a.xor(V::splat(s.mid)).mul_wide(b);
            let hi = hi.add(lo.shl(1));
            let lo = lo.xor(hi.shr(3));
            let lo = xorshift(xorshift(lo, 35).mul_lo(V::splat(PRIME_MX2)), 28);
            (lo, avalanche(hi))
        }
        Class::Wide => {
            let (lo, hi) = a
                .xor(b)
                .xor(V::splat(s.wide[0]))
                .mul_wide(V::splat(PRIME64_1));
            let lo = lo.add(c);
            let last = b.xor(V::splat(s.wide[1]));
            let hi = hi.add(last.add(last.mul32(V::splat(PRIME32_2 - 1))));
            let lo = lo.xor(hi.swap_bytes());
            let (rlo, rhi) = lo.mul_wide(V::splat(PRIME64_2));
            let rhi = rhi.add(hi.mul_lo(V::splat(PRIME64_2)));
            (avalanche(rlo), avalanche(rhi))
        }
        Class::Empty => {
            let (lo, hi) = super::split(s.empty);
            (V::splat(lo), V::splat(hi))
        }
        // Never sent here (longer keys are hashed one at a time); the
        // value would be wrong, so make it loud in tests.
        Class::Long => unreachable!("inputs over 16 bytes are hashed one at a time"),
    }
}

/// The 128-bit hash of one key's bytes in the family of `s`: the
/// short-input formulas in scalar code, XXH3-128 by `xxhash-rust` past 16
/// bytes (both families).
#[inline(always)]
pub(crate) fn hash_one(bytes: &[u8], s: &Secrets) -> u128 {
    let (class, w) = short_input(bytes);
    if class == Class::Long {
        return hash_long(bytes, s.seed);
    }
    let (lo, hi) = hash_lanes::<u64>(class, w, s);
    u128::from(lo) | u128::from(hi) << 64
}

/// XXH3-128 of a key longer than 16 bytes, out of line: inlined into a
/// caller that hashes keys of any length, `xxhash-rust`'s stripe loops
/// made every call save and restore five registers, short keys included
/// (docs/bench-notes/2026-11-28.md, "One key at a time").
#[inline(never)]
fn hash_long(bytes: &[u8], seed: u64) -> u128 {
    xxh3_128_with_seed(bytes, seed)
}

/// XXH3-128 of `keys` into `out` (the same length) under the seed of `s`,
/// one key at a time by [`hash_one`]: for a fixed-width key type the length
/// dispatch folds away, and the seed's constants are the batch's.
#[inline(always)]
pub(crate) fn hash_into<K: Key>(keys: &[K], s: &Secrets, out: &mut [u128]) {
    hash_into_by(keys, |k| k, s, out);
}

/// [`hash_into`] of the key `key_of` gives for each item, one at a time
/// (`super::hash_into_by` chooses between this and the AVX-512 lanes).
#[inline(always)]
pub(crate) fn hash_into_by<T, K: Key + ?Sized>(
    items: &[T],
    key_of: impl Fn(&T) -> &K,
    s: &Secrets,
    out: &mut [u128],
) {
    for (item, o) in items.iter().zip(out) {
        *o = key_of(item).with_bytes(|bytes| hash_one(bytes, s));
    }
}

impl HashLanes for u64 {
    #[inline(always)]
    fn splat(v: u64) -> Self {
        v
    }

    #[inline(always)]
    fn xor(self, y: Self) -> Self {
        self ^ y
    }

    #[inline(always)]
    fn add(self, y: Self) -> Self {
        self.wrapping_add(y)
    }

    #[inline(always)]
    fn shr(self, s: u32) -> Self {
        self >> s
    }

    #[inline(always)]
    fn shl(self, s: u32) -> Self {
        self << s
    }

    #[inline(always)]
    fn mul_lo(self, y: Self) -> Self {
        self.wrapping_mul(y)
    }

    #[inline(always)]
    fn mul_wide(self, y: Self) -> (Self, Self) {
        let p = u128::from(self) * u128::from(y);
        (p as u64, (p >> 64) as u64)
    }

    #[inline(always)]
    fn mul32(self, y: Self) -> Self {
        (self & 0xffff_ffff) * (y & 0xffff_ffff)
    }

    #[inline(always)]
    fn swap_bytes(self) -> Self {
        u64::swap_bytes(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xxhash_rust::xxh3::xxh3_128_with_seed;

    use crate::test_support::next;

    /// The scalar formulas equal `xxhash-rust` for every length up to 40
    /// (past 16 they defer to it), on edge and random seeds and bytes.
    #[test]
    fn scalar_formulas_equal_xxhash_rust() {
        let mut state = 3;
        let mut seeds = vec![0, 1, u64::MAX, 1 << 63, crate::hash::DEFAULT_SEED];
        seeds.extend((0..40).map(|_| next(&mut state)));
        for &seed in &seeds {
            let s = Secrets::new(HashFamily::Xxh3, seed);
            for len in 0..=40 {
                for fill in [0x00u8, 0xff, 0x80] {
                    let bytes = vec![fill; len];
                    assert_eq!(hash_one(&bytes, &s), xxh3_128_with_seed(&bytes, seed));
                }
                for _ in 0..8 {
                    let bytes: Vec<u8> = (0..len).map(|_| next(&mut state) as u8).collect();
                    assert_eq!(
                        hash_one(&bytes, &s),
                        xxh3_128_with_seed(&bytes, seed),
                        "len={len} seed={seed:#x}"
                    );
                }
            }
        }
    }

    /// The folded-multiply family's scalar formulas equal its oracle
    /// (written from the bytes, `super::reference`) for every length up
    /// to 40 (XXH3-128 past 16), on edge and random seeds and bytes; and
    /// differ from XXH3's.
    #[test]
    fn folded_formulas_equal_the_oracle() {
        let mut state = 5;
        let mut seeds = vec![0, 1, u64::MAX, 1 << 63, crate::hash::DEFAULT_SEED];
        seeds.extend((0..40).map(|_| next(&mut state)));
        for &seed in &seeds {
            let s = Secrets::new(HashFamily::FoldedMultiply, seed);
            for len in 0..=40 {
                for _ in 0..8 {
                    let bytes: Vec<u8> = (0..len).map(|_| next(&mut state) as u8).collect();
                    let h = hash_one(&bytes, &s);
                    assert_eq!(
                        h,
                        super::super::reference::folded_multiply(&bytes, seed),
                        "len={len} seed={seed:#x}"
                    );
                    assert_eq!(h == xxh3_128_with_seed(&bytes, seed), len > 16);
                }
            }
        }
    }

    /// Keys of every class in one batch each get their own hash.
    #[test]
    fn keys_of_every_class_in_one_batch() {
        let s = Secrets::new(HashFamily::Xxh3, 99);
        let keys: Vec<Vec<u8>> = (0..40usize).map(|i| vec![i as u8; i % 19]).collect();
        let mut out = vec![0; keys.len()];
        hash_into(&keys, &s, &mut out);
        for (k, h) in keys.iter().zip(&out) {
            assert_eq!(*h, xxh3_128_with_seed(k, 99));
        }
    }
}
