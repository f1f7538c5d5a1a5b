//! The partitioned layout: k sub-arrays of `m' = m / k` bits, probe i in
//! sub-array i at offset `g_i mod m'` (the paper's partition scheme, Sec. 5.1).
//!
//! * FPR after n keys, exact under ideal hashing: `(1 - (1 - 1/m')^n)^k`
//!   (Yu et al.); never better than the classic layout with the same m and k
//!   (Kirsch and Mitzenmacher, Sec. 2), noticeably worse at small n and large
//!   bits/key. With a two-hash scheme over a prime m': exact in closed form
//!   ([`two_hash_fpr`]): a member meets all k probes of a query (same
//!   start and stride) or at most one class of them, so the sub-arrays are
//!   not independent as under ideal hashing.
//! * Sizing ([`Layout::size_for`](super::Layout)): as for classic, by that
//!   rate; m = k m', with m' a prime for the two-hash schemes (unless a
//!   power of two), as for classic.
//! * Enhanced double hashing buys nothing here: `f(i)` shifts every key's
//!   probe in sub-array i by the same constant, a bijection of that
//!   sub-array, so members and queries move together and every answer is the
//!   same as plain double hashing's (the quickstart example measures the
//!   identical rate for all three two-hash schemes).
//! * Never below one 512-bit block (see [`super::MIN_SIZED_BITS`]).
//! * Current FPR from the fill: the product over sub-arrays of their fill
//!   ratios.
//! * Cardinality: the mean over sub-arrays of `-m' ln(1 - X_i/m')`.

#![forbid(unsafe_code)]

use crate::rates::{estimate_items, partitioned_fpr, two_hash};
use crate::util::bits::count_ones_in;

/// The exact rate under ideal hashing after n keys.
pub(crate) fn fpr(m: u64, n: u64, k: u32) -> f64 {
    partitioned_fpr(m, n, k)
}

/// The exact rate of any two-hash scheme after n keys, for a prime
/// sub-array size `m / k` ([`two_hash::partitioned_rate`]; `f(i)` cancels
/// within a sub-array, so the scheme does not matter).
pub(crate) fn two_hash_fpr(m: u64, n: u64, k: u32) -> f64 {
    two_hash::partitioned_rate(m / u64::from(k.max(1)), n, k)
}

/// The number of set bits in each sub-array.
pub(crate) fn ones_per_part(words: &[u64], part: u64, k: u32) -> impl Iterator<Item = u64> + '_ {
    (0..u64::from(k)).map(move |i| count_ones_in(|w| words[w], i * part, (i + 1) * part))
}

/// The false-positive rate now: the product of the sub-arrays' fill ratios.
pub(crate) fn current_fpr(words: &[u64], part: u64, k: u32) -> f64 {
    ones_per_part(words, part, k)
        .map(|x| x as f64 / part as f64)
        .product()
}

/// The estimated number of distinct keys inserted.
pub(crate) fn estimated_len(words: &[u64], part: u64, k: u32) -> f64 {
    ones_per_part(words, part, k)
        .map(|x| estimate_items(part, 1, x))
        .sum::<f64>()
        / f64::from(k)
}
