//! Key hashing: one 128-bit hash per key, split into the two halves h1 and
//! h2, from one of two families ([`HashFamily`]): XXH3-128, or the
//! folded-multiply hash for keys of at most 16 bytes (XXH3-128 past that).
//!
//! # Why bytes, and why little-endian
//!
//! A filter that is written to disk and loaded on another machine must hash
//! every key to the same value there. lesshash therefore hashes the *bytes*
//! of a key, never its in-memory representation through `std::hash::Hash`:
//! integers are hashed as their little-endian bytes (`usize`/`isize` as 64-bit
//! values), strings as their UTF-8 bytes. The [`Key`] trait expresses this.
//!
//! For types that only implement [`std::hash::Hash`], [`ByHash`] collects the
//! bytes the `Hash` impl writes into a buffer and hashes them in one shot.
//! That is convenient but **not portable**: `Hash` impls write native-endian
//! integers and may change between Rust versions, so filters built that way
//! should not be persisted across platforms or toolchains.
//!
//! # Why one-shot hashing, and several keys at once
//!
//! A single key is hashed by `xxhash-rust`'s one-shot `xxh3_128_with_seed`
//! (the streaming `Xxh3` state's setup and finalisation dominate short
//! inputs). A batch ([`hash_batch`], and every
//! batch path of the filters and the sketch) hashes keys of at most 16
//! bytes (integers, fixed-width ids) by `short`: XXH3-128's closed
//! short-input formulas, the seed's constants computed once per batch
//! instead of once per key, no length dispatch where the key type has one
//! width. Bit for bit the same value.
//!
//! Why not four keys per AVX2 register: AVX2 has no 64-bit multiply, and
//! the 4-8-byte formula needs three (one of them 64 x 64 -> 128). Built
//! from `vpmuludq` (32 x 32 -> 64) it measured slower than the scalar
//! formulas (docs/bench-notes/2026-11-25.md, "Hash engine, index lanes and
//! kernel layer"). `wide`'s 64-bit multiplies are per-lane scalar code on
//! SSE2 and NEON. The formulas stay written over `short::HashLanes`, so
//! a backend with a real 64-bit vector multiply is one trait impl: AVX-512
//! DQ's `vpmullq` is that backend (`avx512`, four keys per register;
//! `hash_batch` on the AVX-512 kernel; the filters' batch pipelines keep
//! the scalar formulas, which overlap the vector line test: `batch::hash_keys`).

// `deny`, not `forbid`: `avx512`'s calls into `target_feature` functions
// are the only `unsafe` here (it allows them itself; `short` and this
// module forbid it).
#![deny(unsafe_code)]

#[cfg(target_arch = "x86_64")]
mod avx512;
pub(crate) mod reference;
pub(crate) mod short;

pub(crate) use short::Secrets;

#[cfg(target_arch = "x86_64")]
use crate::simd::cpu::Avx512;

/// XXH3-128 of the key `key_of` gives for each item, into `out` (the same
/// length), under the seed of `s`: four keys at a time with AVX-512 if
/// `vector` (the caller's kernel is AVX-512) and the CPU has it, one at a
/// time by the scalar formulas otherwise. The same values either way. The
/// one place that chooses: `short` (the formulas) does not know its
/// four-lane backend `avx512` (built on `short`), and the seed's
/// constants ([`Secrets`]) say nothing about how to run.
#[inline(always)]
pub(crate) fn hash_into_by<T, K: Key + ?Sized>(
    items: &[T],
    key_of: impl Fn(&T) -> &K,
    s: &Secrets,
    vector: bool,
    out: &mut [u128],
) {
    #[cfg(target_arch = "x86_64")]
    if let Some(token) = vector.then(Avx512::detect).flatten() {
        return avx512::hash_into_by(token, items, key_of, s, out);
    }
    let _ = vector;
    short::hash_into_by(items, key_of, s, out);
}

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// The seed used when none is set on the builder.
///
/// Fixed forever: persisted filters built with the default seed rely on it.
/// Being public, it lets anyone compute where a key lands: for keys chosen
/// by someone else, use a [`random_seed`] (the threat model in
/// docs/design.md).
pub const DEFAULT_SEED: u64 = 0x6c65_7373_6861_7368; // "lesshash"

/// A secret seed drawn from the operating system's random source, for
/// filters whose keys an adversary may choose: with a seed nobody else
/// knows, nobody can compute where a key lands, so keys cannot be chosen
/// to overfill one block or to be false positives of a filter they have
/// not seen.
///
/// The seed is stored in the filter's file like any other, so whoever
/// can read the file knows it. XXH3 is not a cryptographic keyed hash (not
/// a MAC): a secret seed stops an attacker who only chooses keys, not one
/// who can analyse XXH3 itself; against that, hash keys with a keyed
/// cryptographic hash and use the pre-hashed calls
/// ([`Prehashed`](crate::Prehashed)). Filters combine only with equal
/// seeds, so draw it once and pass it to every filter to be merged.
///
/// ```
/// let seed = lesshash::random_seed()?;
/// let f = lesshash::BloomFilter::builder()
///     .expected_items(1000)
///     .fpr(0.01)
///     .seed(seed)
///     .build()?;
/// assert_eq!(f.seed(), seed);
/// # Ok::<(), lesshash::Error>(())
/// ```
///
/// # Errors
/// [`Error::Io`](crate::Error::Io) if the operating system gives no
/// random bytes.
pub fn random_seed() -> Result<u64, crate::Error> {
    getrandom::u64().map_err(|e| crate::Error::Io {
        context: "drawing a random seed from the operating system",
        source: std::io::Error::other(e.to_string()),
    })
}

/// A value that can be inserted into or queried from a filter.
///
/// Implementations hand their canonical byte representation to `f`. The
/// representation must be the same on every platform for a persisted filter
/// to stay valid; all implementations in this crate guarantee that except
/// [`ByHash`].
pub trait Key {
    /// Calls `f` with the key's canonical bytes and returns its result.
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R;
}

impl Key for [u8] {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl<const N: usize> Key for [u8; N] {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl Key for Vec<u8> {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl Key for str {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl Key for String {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl<T: Key + ?Sized> Key for &T {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        (**self).with_bytes(f)
    }
}

impl<T: Key + ?Sized> Key for Box<T> {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        (**self).with_bytes(f)
    }
}

macro_rules! int_key {
    ($($t:ty),*) => {$(
        impl Key for $t {
            #[inline]
            fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
                f(&self.to_le_bytes())
            }
        }
    )*};
}
int_key!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128);

// Pointer-sized integers are hashed as 64-bit values so that a filter built on
// a 32-bit platform answers the same on a 64-bit one.
impl Key for usize {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(&(*self as u64).to_le_bytes())
    }
}

impl Key for isize {
    #[inline]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(&(*self as i64).to_le_bytes())
    }
}

/// Adapts any `T: std::hash::Hash` into a [`Key`].
///
/// The bytes that `T`'s `Hash` impl writes are collected into a buffer (on
/// the stack up to 128 bytes) and hashed once with XXH3-128, so this costs
/// little more than hashing the bytes directly.
///
/// **Not portable**: `Hash` impls write integers in native byte order and
/// their output may change between Rust versions. Do not persist filters built
/// from `ByHash` keys across platforms or toolchains; use a [`Key`] impl on
/// explicit bytes instead.
///
/// ```
/// use lesshash::{BloomFilter, ByHash};
/// #[derive(Hash)]
/// struct User { id: u32, region: &'static str }
///
/// let mut filter = BloomFilter::builder().expected_items(100).fpr(0.01).build()?;
/// filter.insert(&ByHash(User { id: 7, region: "eu" }));
/// assert!(filter.contains(&ByHash(User { id: 7, region: "eu" })));
/// # Ok::<(), lesshash::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByHash<T>(pub T);

impl<T: std::hash::Hash> Key for ByHash<T> {
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        let mut collector = ByteCollector::default();
        self.0.hash(&mut collector);
        f(collector.bytes())
    }
}

/// A `Hasher` that only records the bytes written to it.
///
/// `finish` is never used for the filter; it exists to satisfy the trait.
struct ByteCollector {
    inline: [u8; 128],
    len: usize,
    spill: Vec<u8>,
}

impl Default for ByteCollector {
    fn default() -> Self {
        Self {
            inline: [0; 128],
            len: 0,
            spill: Vec::new(),
        }
    }
}

impl ByteCollector {
    fn bytes(&self) -> &[u8] {
        if self.spill.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.spill
        }
    }
}

impl std::hash::Hasher for ByteCollector {
    fn write(&mut self, bytes: &[u8]) {
        if self.spill.is_empty() && self.len + bytes.len() <= self.inline.len() {
            self.inline[self.len..self.len + bytes.len()].copy_from_slice(bytes);
            self.len += bytes.len();
        } else {
            if self.spill.is_empty() {
                self.spill.extend_from_slice(&self.inline[..self.len]);
            }
            self.spill.extend_from_slice(bytes);
        }
    }

    fn finish(&self) -> u64 {
        xxh3_64_with_seed(self.bytes(), 0)
    }
}

/// The 128-bit hash family of a filter, recorded in its file (the
/// header's `hash` byte): how a key's bytes become its h1 and h2. Both
/// families hash keys over 16 bytes with XXH3-128; they differ on keys of
/// at most 16 bytes (integers, dates, short ids and strings), where
/// XXH3-128 is a formula of three to six multiplies and about twenty other
/// steps and the folded multiply is two multiplies and five xors
/// (docs/format.md gives both bit for bit; docs/design.md why, and which
/// resists what).
///
/// The `Independent` scheme, which draws k 64-bit hashes per key, uses
/// seeded XXH3-64 in both families.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum HashFamily {
    /// XXH3-128 (format id 1): every filter written before the family
    /// was recorded.
    #[default]
    Xxh3,
    /// Keys of at most 16 bytes: the key's words xored with keys derived
    /// from the seed and multiplied 64 x 64 -> 128 bits; that product
    /// folded (its halves xored) is h2, and its halves multiplied once
    /// more and folded are h1; longer keys: XXH3-128 (format id 2).
    FoldedMultiply,
}

crate::error::named_enum!(HashFamily, "hash family");

impl HashFamily {
    /// Every family, in id order.
    pub const ALL: [HashFamily; 2] = [HashFamily::Xxh3, HashFamily::FoldedMultiply];

    /// The family's name: `xxh3-128` or `folded-multiply` (what `FromStr`
    /// takes, and what the command line and the bindings show).
    pub fn name(self) -> &'static str {
        match self {
            HashFamily::Xxh3 => "xxh3-128",
            HashFamily::FoldedMultiply => "folded-multiply",
        }
    }

    /// The family's id in the format (the header's `hash` byte).
    pub fn id(self) -> u8 {
        match self {
            HashFamily::Xxh3 => 1,
            HashFamily::FoldedMultiply => 2,
        }
    }

    /// The family of a format id, if it is one.
    pub fn from_id(id: u8) -> Option<HashFamily> {
        Self::ALL.into_iter().find(|f| f.id() == id)
    }

    /// The 128-bit hash of `key` under `seed` in this family: the value a
    /// filter of this family and seed hashes `key` to, and the one its
    /// pre-hashed calls ([`Prehashed`](crate::Prehashed)) take.
    #[inline]
    pub fn hash_key<K: Key + ?Sized>(self, key: &K, seed: u64) -> u128 {
        // One arm per family, each with its family a constant: the other
        // family's constants are dead code there.
        let hash = |family| key.with_bytes(|b| short::hash_one(b, &Secrets::new(family, seed)));
        match self {
            HashFamily::Xxh3 => hash(HashFamily::Xxh3),
            HashFamily::FoldedMultiply => hash(HashFamily::FoldedMultiply),
        }
    }
}

/// The 128-bit hash of a key's bytes under `seed`: XXH3-128 (for inputs
/// of at most 16 bytes by its closed formulas, inlined where the length is
/// known: no length dispatch, the seed's constants a few additions; longer
/// inputs by `xxhash-rust`).
#[inline(always)]
pub fn hash128(bytes: &[u8], seed: u64) -> u128 {
    short::hash_one(bytes, &Secrets::new(HashFamily::Xxh3, seed))
}

/// The XXH3-128 hash of a [`Key`] under `seed` ([`HashFamily::Xxh3`]).
///
/// This is the value the pre-hashed calls ([`Prehashed`](crate::Prehashed))
/// of an XXH3 filter take: for two-hash schemes
/// `filter.prehashed_mut()?.insert(hash_key(&k, filter.seed()))` is the
/// same as `filter.insert(&k)`. For a filter of any family,
/// `filter.hash_family().hash_key(&k, filter.seed())` (or the handle's
/// [`Prehashed::hash`](crate::Prehashed::hash)) is.
#[inline]
pub fn hash_key<K: Key + ?Sized>(key: &K, seed: u64) -> u128 {
    key.with_bytes(|b| hash128(b, seed))
}

/// Splits a 128-bit hash into `(h1, h2)`: h1 is the low 64 bits, h2 the high.
#[inline]
pub fn split(hash: u128) -> (u64, u64) {
    (hash as u64, (hash >> 64) as u64)
}

/// The seed of hash function `i` of the `Independent` scheme.
///
/// Seeds are spread by an odd multiplier so that `seed` and `seed + 1` give
/// unrelated families.
#[inline]
pub fn independent_seed(seed: u64, i: u32) -> u64 {
    seed ^ (u64::from(i) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Hash function `i` of the `Independent` scheme: XXH3-64 with its own seed.
#[inline]
pub fn independent_hash(bytes: &[u8], seed: u64, i: u32) -> u64 {
    xxh3_64_with_seed(bytes, independent_seed(seed, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hash i of the `Independent` scheme is XXH3-64 under seed i's own
    /// seed: distinct functions for distinct i, fixed for persisted filters.
    #[test]
    fn independent_hashes_are_xxh3_under_spread_seeds() {
        let h: Vec<u64> = (0..8).map(|i| independent_hash(b"key", 7, i)).collect();
        for (i, &x) in h.iter().enumerate() {
            assert_eq!(x, xxh3_64_with_seed(b"key", independent_seed(7, i as u32)));
            assert!(!h[..i].contains(&x));
        }
        assert_ne!(independent_seed(7, 0), independent_seed(8, 0));
    }

    #[test]
    fn integers_hash_as_little_endian_bytes() {
        let x: u32 = 0x0102_0304;
        assert_eq!(hash_key(&x, 1), hash128(&[4, 3, 2, 1], 1));
        assert_eq!(hash_key(&7usize, 0), hash_key(&7u64, 0));
        assert_eq!(hash_key(&-7isize, 0), hash_key(&-7i64, 0));
    }

    #[test]
    fn strings_and_bytes_agree() {
        let s = "lesshash";
        assert_eq!(hash_key(s, 3), hash_key(s.as_bytes(), 3));
        assert_eq!(
            hash_key(&s.to_string(), 3),
            hash_key(&s.as_bytes().to_vec(), 3)
        );
        assert_eq!(hash_key(&&s, 3), hash_key(s, 3));
    }

    #[test]
    fn split_takes_low_then_high() {
        let (h1, h2) = split((7u128 << 64) | 9);
        assert_eq!((h1, h2), (9, 7));
    }

    #[test]
    fn by_hash_collects_all_bytes_including_spill() {
        // A key longer than the inline buffer must hash all of its bytes.
        let long: Vec<u8> = (0..300u32).map(|i| i as u8).collect();
        let a = ByHash(long.clone()).with_bytes(hash128_seed0);
        let mut other = long.clone();
        *other.last_mut().unwrap() ^= 1;
        let b = ByHash(other).with_bytes(hash128_seed0);
        assert_ne!(a, b);
        // And it is deterministic.
        assert_eq!(a, ByHash(long).with_bytes(hash128_seed0));
    }

    fn hash128_seed0(b: &[u8]) -> u128 {
        hash128(b, 0)
    }

    #[test]
    fn independent_seeds_differ() {
        let seeds: std::collections::HashSet<u64> =
            (0..64).map(|i| independent_seed(DEFAULT_SEED, i)).collect();
        assert_eq!(seeds.len(), 64);
    }
}
