//! The classic layout: one array of m bits, every probe anywhere in it.
//!
//! * FPR after n keys: the exact formula [`crate::params::classic_fpr_exact`]
//!   (Bloom's formula is a lower bound and would undersize small filters).
//! * Sizing: for each k near the optimum, the smallest m whose exact FPR is at
//!   most the target; the smallest such m wins. At p = 1% this gives 9.59
//!   bits/key (k = 7), against the lower bound's 6.64.
//! * Current FPR from the fill: `(X/m)^k` with X bits set — the probability
//!   that k uniform probes all land on set bits.
//! * Cardinality: `-(m/k) ln(1 - X/m)` (Swamidoss and Bhattacharya).

#![forbid(unsafe_code)]

use crate::Error;
use crate::params::{classic_fpr_exact, estimate_items, smallest_bits};

/// The smallest (m, k) reaching rate `p` for `n` keys.
pub(crate) fn size_for(n: u64, p: f64, k: Option<u32>) -> Result<(u64, u32), Error> {
    if n == 0 {
        return Ok((64, k.unwrap_or(1)));
    }
    super::best_over_k(p, k, |k| {
        smallest_bits(p, 1, |m| classic_fpr_exact(m, n, k))
    })
}

/// The false-positive rate now, from the number of set bits.
pub(crate) fn current_fpr(m: u64, k: u32, ones: u64) -> f64 {
    (ones as f64 / m as f64).powi(k as i32)
}

/// The estimated number of distinct keys inserted.
pub(crate) fn estimated_len(m: u64, k: u32, ones: u64) -> f64 {
    estimate_items(m, k, ones)
}
