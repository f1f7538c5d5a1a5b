//! The classic layout: one array of m bits, every probe anywhere in it.
//!
//! * FPR after n keys: under ideal hashing the exact formula
//!   [`crate::rates::classic_fpr_exact`] (Bloom's formula is a lower bound
//!   and would undersize small filters). With a two-hash scheme over a
//!   prime m: the exact rate by enumeration where that costs at most about
//!   1.5 ms ([`two_hash_fpr`]), else the ideal rate plus the
//!   coincidence model raised by its margins (see [`crate::rates`], "The
//!   two-hash rates").
//! * Sizing ([`Layout::size_for`](super::Layout)): for each k near the
//!   optimum, the smallest m whose rate (the ideal rate plus the model)
//!   is at most the target; the smallest such m wins. With a two-hash
//!   scheme that m is then grown to a prime and checked by the rate above
//!   (the enumeration, where it applies, runs once there), grown further
//!   while that rate is above the target. At p = 1% this gives 9.59
//!   bits/key (k = 7), against the lower bound's 6.64.
//! * The two-hash floor: two keys whose `(h1 mod m, h2 mod m)` pairs coincide
//!   have identical probe sets, so a two-hash filter's rate is at least about
//!   `n / m^2` (s/(r(r-1)) per member, see
//!   [`pair_collision_rate`](crate::rates::pair_collision_rate)). It is
//!   negligible at ordinary rates but sets the size at tiny ones: for
//!   n = 10^6 the builder gives 28.8 bits/key at p = 10^-6 with either
//!   scheme, 47.6 (double hashing) against 43.1 (independent) at 10^-9, and
//!   1414 against 57.5 at 10^-12, where `m >= sqrt(2n/p)`. Where p is below
//!   about `1 / (n c^2)` (c bits per key; 4e-10 at n = 10^6), prefer
//!   [`Scheme::Independent`](crate::Scheme). (Figures: `Builder::geometry`
//!   outputs for the classic layout.)
//! * Two-hash schemes: m rounded up to a prime (a power of two is kept: its
//!   strides are odd), so every stride is coprime to the range as the
//!   paper's analysis assumes; over a composite m, strides sharing a factor
//!   with it revisit bits (see `prime_range` in `layout/mod.rs` for the
//!   measurements). Explicit `.bits(m)` is kept as given.
//! * Never below one 512-bit block (see [`super::MIN_SIZED_BITS`]).
//! * Current FPR from the fill: `(X/m)^k` with X bits set — the probability
//!   that k uniform probes all land on set bits.
//! * Cardinality: `-(m/k) ln(1 - X/m)` (Swamidoss and Bhattacharya).

#![forbid(unsafe_code)]

use crate::rates::{Overlaps, classic_fpr_exact, estimate_items, two_hash};
use crate::scheme::{Enhancement, Scheme, reference_index};

/// The exact rate under ideal hashing after n keys.
pub(crate) fn fpr(m: u64, n: u64, k: u32) -> f64 {
    classic_fpr_exact(m, n, k)
}

/// The exact rate of a two-hash `scheme` after n keys over a prime m, by
/// enumeration ([`two_hash::classic_rate`]): `None` where m is not prime
/// or the enumeration is too costly, and the model is used instead.
pub(crate) fn two_hash_fpr(scheme: Scheme, m: u64, n: u64, k: u32) -> Option<f64> {
    let every_stride = overlaps(scheme) != Overlaps::Lines;
    if two_hash::classic_cost(k, m, every_stride) > two_hash::CLASSIC_BUDGET
        || !crate::util::primes::is_prime(m)
    {
        return None;
    }
    // f(i) mod m: the probes of the key (0, 0).
    let f: Vec<u64> = (0..k)
        .map(|i| reference_index(scheme, 0, 0, i, m))
        .collect();
    two_hash::classic_rate(&f, m, n, two_hash::CLASSIC_BUDGET)
}

/// Which members' sequences cover several of a query's probes beyond
/// ideal hashing (see `src/rates/coincidence.rs`): every stride ratio for
/// plain double hashing, shifted and reversed sequences for `f(i) = i^2`,
/// none for `f(i) = i^3` or independent hashes.
pub(crate) fn overlaps(scheme: Scheme) -> Overlaps {
    match scheme {
        Scheme::DoubleHashing => Overlaps::Lines,
        Scheme::EnhancedDoubleHashing(Enhancement::Square) => Overlaps::ShiftsAndReversals,
        Scheme::EnhancedDoubleHashing(Enhancement::Cube) | Scheme::Independent => Overlaps::None,
    }
}

/// The false-positive rate now, from the number of set bits.
pub(crate) fn current_fpr(m: u64, k: u32, ones: u64) -> f64 {
    (ones as f64 / m as f64).powi(k as i32)
}

/// The estimated number of distinct keys inserted.
pub(crate) fn estimated_len(m: u64, k: u32, ones: u64) -> f64 {
    estimate_items(m, k, ones)
}
