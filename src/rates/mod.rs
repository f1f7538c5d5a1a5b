//! False-positive mathematics and sizing.
//!
//! Notation: `m` bits, `n` inserted keys, `k` probes per key, `c = m / n`
//! bits per key, `p` the false-positive rate.
//!
//! | function | formula | what it is |
//! |---|---|---|
//! | [`classic_fpr`] | `(1 - e^{-kn/m})^k` | the textbook asymptotic rate |
//! | [`bloom_fpr`] | `(1 - (1 - 1/m)^{kn})^k` | Bloom's formula; only a **lower bound** (Bose et al. 2008) |
//! | [`classic_fpr_exact`] | see below | the exact rate of a classic filter under ideal hashing |
//! | [`partitioned_fpr`] | `(1 - (1 - k/m)^n)^k` | exact for k disjoint sub-arrays of `m/k` bits |
//! | [`blocked_fpr`], [`split_block_fpr`] | the mixture of a block's rate over its binomial load | exact for the cache-line-blocked layouts |
//! | [`Layout::fpr`](crate::Layout::fpr) | one of the above under ideal hashing; for the two-hash schemes see below | a layout's rate under a scheme |
//! | [`space_lower_bound`] | `n log2(1/p)` | bits any filter with rate p needs (Carter et al.) |
//!
//! # The two-hash rates
//!
//! A two-hash scheme's probes `a + i b + f(i) mod r` are not independent,
//! and on the flat layouts, over the prime ranges the builder gives them,
//! its rate differs from ideal hashing's at small n and r.
//! [`Layout::fpr`](crate::Layout::fpr) gives, for the two-hash schemes:
//!
//! | layout | rate | where exact |
//! |---|---|---|
//! | partitioned | `1 - (1 - q0)^n + (1 - q0)^n Pr[n draws cover min(k, r) cells of probability q1 / (1 - q0)]`, `q0 = 1/(r(r-1))`, `q1 = (r-2)/(r(r-1))` (`src/rates/two_hash.rs`) | every prime sub-array size r |
//! | classic | inclusion-exclusion over the query's distinct probes, every query stride enumerated (`src/rates/two_hash.rs`), rounded up by its rounding bound | prime m within about 1.5 ms of work: every k up to about 12 for plain double hashing, small k and m for the enhanced schemes |
//! | classic, past that | ideal hashing's exact rate plus the first-order coincidence model (`src/rates/coincidence.rs`), raised by margins measured to bound the enumeration | an upper bound where checked (k = 4 to 12, m = 521 to 8209) |
//! | blocked | the block mixture plus the chance of sharing the block and all of h2 | |
//!
//! A filter's `expected_fpr()` adds the same excess over ideal hashing to
//! its rate from the fill.
//!
//! # The exact classic rate
//!
//! Bloom's formula treats the k probed bits of a query as independent; they
//! are not. Conditioning on the number j of *distinct* bits among the k
//! probes (probability `S(k, j) (m)_j / m^k`, with S the Stirling numbers of
//! the second kind and `(m)_j` the falling factorial) and on all j being set
//! by the `t = kn` insertion probes gives (Christensen, Roginsky, Jimeno 2010,
//! in an O(k^2) form):
//!
//! ```text
//! P = sum_{j=1..k} S(k,j) (m)_j / m^k * A_j,
//! A_j = Pr[j given bits all set after t probes] = sum_{l=0..j} (-1)^l C(j,l) (1 - l/m)^t.
//! ```
//!
//! For m = 2, k = 2, n = 1 this gives 10/16 where Bloom's formula gives 9/16
//! (Yu et al., Table 1). The alternating sum for `A_j` cancels badly when the
//! filter is lightly loaded and j is large (its terms reach `C(j, j/2)` while
//! the sum is about `(1 - e^{-t/m})^j`); there [`classic_fpr_exact`] switches
//! to an all-positive evaluation: the number s of the t probes that land in
//! the j bits is binomial, and the probability that s probes cover j bins is
//! an occupancy recurrence. Both are exact; the code picks the one whose
//! rounding error is smaller.
//!
//! # Degenerate arguments
//!
//! Every rate function is total: it returns a number in `[0, 1]` for any
//! input (never NaN or infinite), never panics. `k = 0` means no probe can
//! reject a key, so the rate is 1; otherwise `n = 0` means an empty filter,
//! rate 0; `m = 0` is treated as a full filter, rate 1. A k far beyond
//! [`BloomFilter::MAX_HASHES`](crate::BloomFilter::MAX_HASHES) (up to `u32::MAX`) is evaluated as written, not wrapped:
//! the rate only falls towards 0 as k grows past the optimum's fill.

#![forbid(unsafe_code)]

use std::f64::consts::LN_2;

use crate::util::limits::{MAX_BITS, MAX_HASHES};

// The blocked layouts' rates live in their own file,
// `src/rates/block_rates.rs`.
pub(crate) mod block_rates;
pub use block_rates::{blocked_fpr, split_block_fpr};
// The two-hash schemes' coincidence terms on the flat layouts.
pub(crate) mod coincidence;
pub(crate) use coincidence::{Overlaps, model_margin, pair_collision_rate, partial_overlap_rate};
// The two-hash schemes' exact rates on the flat layouts, where computable.
pub(crate) mod two_hash;

/// The asymptotic false-positive rate `(1 - e^{-kn/m})^k`.
pub fn classic_fpr(m: u64, n: u64, k: u32) -> f64 {
    if let Some(rate) = degenerate_rate(m, n, k) {
        return rate;
    }
    let fill = -(-(f64::from(k) * n as f64) / m as f64).exp_m1();
    pow_k(fill, k)
}

/// Bloom's formula `(1 - (1 - 1/m)^{kn})^k`: the rate if the k probed bits
/// of a query were independent. A lower bound on the exact rate.
pub fn bloom_fpr(m: u64, n: u64, k: u32) -> f64 {
    if let Some(rate) = degenerate_rate(m, n, k) {
        return rate;
    }
    let t = f64::from(k) * n as f64;
    let fill = -(t * (-1.0 / m as f64).ln_1p()).exp_m1();
    pow_k(fill, k)
}

/// The exact false-positive rate of a classic filter of m bits with k
/// probes per key after n insertions, under ideal (uniform, independent)
/// hashing. See the module docs; numerically sound for k up to
/// [`BloomFilter::MAX_HASHES`](crate::BloomFilter::MAX_HASHES), m up to [`BloomFilter::MAX_BITS`](crate::BloomFilter::MAX_BITS) and n up to 10^12.
///
/// For k above [`BloomFilter::MAX_HASHES`](crate::BloomFilter::MAX_HASHES), which no filter has, the Stirling weights
/// overflow; the function then returns [`bloom_fpr`], a lower bound on the
/// exact rate, rather than a wrong "exact" value.
pub fn classic_fpr_exact(m: u64, n: u64, k: u32) -> f64 {
    if let Some(rate) = degenerate_rate(m, n, k) {
        return rate;
    }
    if k > MAX_HASHES {
        return bloom_fpr(m, n, k);
    }
    let mf = m as f64;
    let t = f64::from(k) * n as f64;
    let stirling = stirling2_row(k);
    let top = k.min(m.min(u64::from(MAX_HASHES)) as u32);
    // weights[j] = S(k, j) (m)_j / m^k = S(k, j) * (m)_j / m^j * m^(j - k),
    // in logs; (m)_j / m^j accumulated as j grows.
    let mut weights = vec![0.0f64; top as usize + 1];
    let mut ln_falling = 0.0;
    for j in 1..=top {
        if j > 1 {
            ln_falling += (-(f64::from(j - 1)) / mf).ln_1p();
        }
        let ln_weight =
            stirling[j as usize].ln() + ln_falling + f64::from(j as i32 - k as i32) * mf.ln();
        weights[j as usize] = ln_weight.exp();
    }
    // The probabilities are the costly part and at most 1: evaluate the
    // heaviest weight's first, then only the terms that can move the sum by
    // more than a hundredth of its last bit (for m >> k^2 the weights fall
    // by about k^2 / m per j below k, so a few of the k terms remain).
    let heaviest = (1..=top as usize)
        .max_by(|&a, &b| weights[a].total_cmp(&weights[b]))
        .unwrap_or(0);
    let lead = weights[heaviest] * all_set_probability(mf, t, heaviest as u32);
    let mut total = 0.0;
    for (j, &weight) in weights.iter().enumerate().skip(1) {
        if j == heaviest {
            total += lead;
        } else if weight > lead * (f64::EPSILON / 256.0) {
            total += weight * all_set_probability(mf, t, j as u32);
        }
    }
    total.min(1.0)
}

/// `Pr[j given bits of m are all set after t uniform probes]`: each probe
/// lands on a given bit with probability `1/m` (m need not be a whole
/// number: the partitioned two-hash rate's classes are such cells).
pub(crate) fn all_set_probability(m: f64, t: f64, j: u32) -> f64 {
    let mf = m;
    // Inclusion-exclusion, with a bound on its rounding error.
    let mut sum = 0.0;
    let mut magnitude = 0.0;
    let mut binom = 1.0;
    for l in 0..=j {
        if l > 0 {
            binom = binom * f64::from(j - l + 1) / f64::from(l);
        }
        let term = if f64::from(l) >= m {
            0.0
        } else {
            binom * (t * (-f64::from(l) / mf).ln_1p()).exp()
        };
        magnitude += term;
        sum += if l % 2 == 0 { term } else { -term };
    }
    // Each term carries a few ulps of error from exp/ln_1p; 64 ulps is a
    // generous bound for the sum.
    let error = magnitude * 64.0 * f64::EPSILON;
    if sum > 0.0 && error <= sum * 1e-9 {
        return sum.clamp(0.0, 1.0);
    }
    occupancy_all_set_probability(mf, t, j)
}

/// The same probability by an all-positive evaluation: the number s of the
/// t probes landing in the j bits is Binomial(t, j/m); given s, the chance
/// they cover all j bits follows the occupancy recurrence. Used where
/// inclusion-exclusion cancels, i.e. when `t j / m` is moderate, so the
/// binomial mass sits at small s.
fn occupancy_all_set_probability(m: f64, t: f64, j: u32) -> f64 {
    let q = f64::from(j) / m;
    if q >= 1.0 {
        // Every probe lands in the j bits: plain occupancy with s = t.
        return occupancy_cover(t, j);
    }
    let mean = t * q;
    // The mass that matters is at s >= j (fewer probes cannot cover j
    // bits), so the window must reach past j even when the mean is tiny.
    let s_max = (mean + 40.0 * mean.sqrt() + 60.0 + f64::from(j)).min(t);
    let ln_ratio = (q / (1.0 - q)).ln();
    // pmf(0) may underflow when the mean is large; work in logs until it is
    // representable.
    let mut ln_pmf = t * (-q).ln_1p();
    let ju = j as usize;
    // cover[i] = Pr[exactly i of the j bins occupied after s probes].
    let mut cover = vec![0.0f64; ju + 1];
    cover[0] = 1.0;
    let mut total = 0.0;
    let mut s = 0.0;
    while s <= s_max {
        if s >= f64::from(j) {
            total += ln_pmf.exp() * cover[ju];
        }
        // Add one probe to the occupancy distribution.
        for i in (1..=ju).rev() {
            cover[i] = cover[i] * (i as f64 / f64::from(j))
                + cover[i - 1] * ((j as usize - i + 1) as f64 / f64::from(j));
        }
        cover[0] = 0.0;
        // pmf(s + 1) = pmf(s) * (t - s) / (s + 1) * q / (1 - q).
        ln_pmf += ((t - s) / (s + 1.0)).ln() + ln_ratio;
        s += 1.0;
    }
    total.clamp(0.0, 1.0)
}

/// Pr[s probes into j bins cover all j] (used when every probe lands there).
fn occupancy_cover(s: f64, j: u32) -> f64 {
    if s < f64::from(j) {
        return 0.0;
    }
    let ju = j as usize;
    let mut cover = vec![0.0f64; ju + 1];
    cover[0] = 1.0;
    let steps = s.min(1e6) as u64;
    for _ in 0..steps {
        for i in (1..=ju).rev() {
            cover[i] = cover[i] * (i as f64 / f64::from(j))
                + cover[i - 1] * ((ju - i + 1) as f64 / f64::from(j));
        }
        cover[0] = 0.0;
    }
    cover[ju]
}

/// Row k of the Stirling numbers of the second kind, `S(k, 0..=k)`, as f64
/// (exact up to k = 25, within rounding beyond; S(64, 32) is about 1e70).
fn stirling2_row(k: u32) -> Vec<f64> {
    let k = k as usize;
    let mut row = vec![0.0f64; k + 1];
    row[0] = 1.0;
    for nn in 1..=k {
        for j in (1..=nn).rev() {
            row[j] = j as f64 * row[j] + row[j - 1];
        }
        row[0] = 0.0;
    }
    row
}

/// The exact false-positive rate of a partitioned filter: k sub-arrays of
/// `m / k` bits, one probe in each: `(1 - (1 - k/m)^n)^k`.
pub fn partitioned_fpr(m: u64, n: u64, k: u32) -> f64 {
    if let Some(rate) = degenerate_rate(m, n, k) {
        return rate;
    }
    let part = (m / u64::from(k)).max(1) as f64;
    let fill = -(n as f64 * (-1.0 / part).ln_1p()).exp_m1();
    pow_k(fill, k)
}

/// `fill^k` for a fill ratio in `[0, 1]`, clamped to `[0, 1]`. `powi` takes
/// an `i32`: `k as i32` wraps k >= 2^31 to a negative power (k = 2^31 gave
/// inf, `u32::MAX` gave `1 / fill`), so those k go through `powf`.
pub(crate) fn pow_k(fill: f64, k: u32) -> f64 {
    let p = match i32::try_from(k) {
        Ok(k) => fill.powi(k),
        Err(_) => fill.powf(f64::from(k)),
    };
    // NaN (from a NaN fill) counts as 1: an unknown rate must not read as 0.
    if p >= 0.0 {
        p.min(1.0)
    } else if p.is_nan() {
        1.0
    } else {
        0.0
    }
}

/// The rate for the degenerate arguments of the module docs, if these are.
fn degenerate_rate(m: u64, n: u64, k: u32) -> Option<f64> {
    if k == 0 || (m == 0 && n > 0) {
        Some(1.0)
    } else if n == 0 {
        Some(0.0)
    } else {
        None
    }
}

/// The k in `{floor(c ln 2), ceil(c ln 2)}` (at least 1) that minimises the
/// asymptotic rate `(1 - e^{-k/c})^k` for `c = m / n` — the paper's rule.
pub fn optimal_hashes(m: u64, n: u64) -> u32 {
    if n == 0 {
        return 1;
    }
    let ideal = m as f64 / n as f64 * LN_2;
    let lo = (ideal.floor() as u32).clamp(1, MAX_HASHES);
    let hi = (ideal.ceil() as u32).clamp(1, MAX_HASHES);
    if classic_fpr(m, n, hi) < classic_fpr(m, n, lo) {
        hi
    } else {
        lo
    }
}

/// The information-theoretic minimum size of any approximate-membership
/// structure for n keys at rate p: `n log2(1/p)` bits.
pub fn space_lower_bound(n: u64, p: f64) -> f64 {
    n as f64 * (1.0 / p).log2()
}

/// `m / (n log2(1/p))`: how many times the lower bound a filter of m bits
/// spends. A classic filter at its optimum spends `log2(e) ~ 1.44`.
pub fn ratio_to_lower_bound(m: u64, n: u64, p: f64) -> f64 {
    m as f64 / space_lower_bound(n, p)
}

/// The estimated number of distinct keys in a filter of m bits with k
/// probes per key and x bits set (Swamidoss and Bhattacharya):
/// `-(m/k) ln(1 - x/m)`. Infinite when every bit is set.
pub fn estimate_items(m: u64, k: u32, x: u64) -> f64 {
    let m = m as f64;
    -(m / f64::from(k)) * (-(x as f64) / m).ln_1p()
}

/// The smallest m for which `fpr(m) <= p`, given that `fpr` decreases in m,
/// searching m over `[step, MAX_BITS]` in multiples of `step` by plain
/// exponential search and bisection from 1: the oracle of
/// [`smallest_bits_search`] (the sizing search before it), for tests.
/// `None` when even `MAX_BITS` is not enough.
#[cfg(test)]
pub(crate) fn smallest_bits(p: f64, step: u64, fpr: impl Fn(u64) -> f64) -> Option<u64> {
    let max_units = MAX_BITS / step;
    if fpr(max_units * step) > p {
        return None;
    }
    let mut hi = 1u64;
    while hi < max_units && fpr(hi * step) > p {
        hi = (hi * 2).min(max_units);
    }
    let lo = hi / 2;
    Some(bisect(lo, hi, |u: u64| fpr(u * step) <= p) * step)
}

/// [`smallest_bits`] started from `guess` (any value; one near the answer
/// saves evaluations) and, with `below: Some(b)`, restricted to m < b:
/// `None` then when no multiple of `step` below b meets p, after one
/// evaluation. Sizing compares several k and keeps the smallest m, so a k
/// that cannot beat the best so far costs one evaluation of its rate
/// instead of a whole search; an exact rate is costly to evaluate at
/// small p (docs/bench-notes/2026-11-23.md, "Construction cost").
///
/// The search gallops from its start (steps of 1, 2, 4, ... units of
/// `step`) until the answer is bracketed, then bisects: about
/// `2 log2(distance)` evaluations. With `fpr` decreasing, the answer is the
/// same as any exhaustive search's (tested against the plain bisection).
pub(crate) fn smallest_bits_search(
    p: f64,
    step: u64,
    guess: u64,
    below: Option<u64>,
    fpr: impl Fn(u64) -> f64,
) -> Option<u64> {
    let max_units = MAX_BITS / step;
    let meets = |units: u64| fpr(units * step) <= p;
    // Invariant once bracketed: lo = 0 or !meets(lo); meets(hi).
    let mut hi = match below {
        Some(b) => {
            let u = (b.saturating_sub(1) / step).min(max_units);
            if u == 0 || !meets(u) {
                return None;
            }
            u
        }
        None => {
            if !meets(max_units) {
                return None;
            }
            let start = (guess / step).clamp(1, max_units);
            if !meets(start) {
                // Gallop up; meets(max_units) holds, so this ends.
                let (mut lo, mut d) = (start, 1u64);
                loop {
                    let c = lo.saturating_add(d).min(max_units);
                    if meets(c) {
                        return Some(bisect(lo, c, meets) * step);
                    }
                    lo = c;
                    d = d.saturating_mul(2);
                }
            }
            start
        }
    };
    // Gallop down from hi until a unit that misses p (or 0).
    let mut d = 1u64;
    loop {
        let c = hi.saturating_sub(d);
        if c == 0 {
            return Some(bisect(0, hi, meets) * step);
        }
        if !meets(c) {
            return Some(bisect(c, hi, meets) * step);
        }
        hi = c;
        d = d.saturating_mul(2);
    }
}

/// The smallest unit in `(lo, hi]` that meets p, given `lo == 0` or
/// `!meets(lo)`, and `meets(hi)`.
fn bisect(mut lo: u64, mut hi: u64, meets: impl Fn(u64) -> bool) -> u64 {
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if meets(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// The m at which the asymptotic classic rate `(1 - e^{-kn/m})^k` equals
/// p: a starting point for [`smallest_bits_search`] (every layout's exact
/// rate is within a few percent of it near the optimum k).
pub(crate) fn classic_bits_guess(n: u64, p: f64, k: u32) -> u64 {
    let fill = p.powf(1.0 / f64::from(k));
    let m = -(f64::from(k) * n as f64) / (-fill).ln_1p();
    if m.is_finite() && m >= 1.0 {
        m.min(MAX_BITS as f64) as u64
    } else {
        1
    }
}

#[cfg(test)]
mod tests;
