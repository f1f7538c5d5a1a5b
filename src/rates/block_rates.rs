//! False-positive rates of the cache-line-blocked layouts (re-exported by
//! [`crate::rates`]).
//!
//! A blocked filter first picks one of `b = m / 512` blocks for a key, then
//! sets k bits inside that block. Under ideal hashing the number `i` of
//! members sharing the query's block is Binomial(n, 1/b) (Putze, Sanders and
//! Singler 2009 use its Poisson limit with mean `512 n / m`), and given `i`
//! the block is a tiny filter of its own. So
//!
//! ```text
//! FPR = sum_i Pr[i members in the block] * f(i)
//! ```
//!
//! with `f` the exact rate of one 512-bit block holding i keys:
//!
//! * blocked ([`blocked_load_fpr`]): `E[(X / 512)^k]`, X the number of bits
//!   set by the i k probes, whose distribution is the occupancy law, computed
//!   by dynamic programming (exact, not Bloom's lower bound: at 512 bits the
//!   difference is a few percent of the rate);
//! * split-block ([`split_block_load_fpr`]): k segments of `S = floor(512 / k)`
//!   bits with one bit per key each, independent: `(1 - (1 - 1/S)^i)^k`.
//!
//! The uneven load of the blocks is what makes a blocked filter need more
//! bits than a classic one for the same rate (9.92 instead of 9.59 bits/key
//! at 1%), and why the best k is below `c ln 2` at high bits/key: an
//! overloaded block is hurt more by a large k.

use std::sync::OnceLock;

use crate::rates::{classic_fpr_exact, pow_k};
use crate::util::limits::MAX_HASHES;

/// Bits per block of the blocked layouts.
const BLOCK: u64 = 512;

/// Above this the rate counts as 1 (an over-estimate of at most 1e-15).
const SATURATED: f64 = 1.0 - 1e-15;

/// The most terms [`block_mixture`] sums before it falls back to an upper
/// bound.
const MAX_TERMS: u64 = 1 << 20;

/// `sum_i Pr[Binomial(n, 1/blocks) = i] * inner(i)`: the rate of a layout
/// that puts each key in one of `blocks` equally likely blocks, given the
/// rate `inner(i)` of a block holding i keys (nondecreasing in i, in
/// `[0, 1]`).
///
/// Work is bounded for any n: only the window `mode ± (12 sd + 32)` of the
/// binomial is summed (sd its standard deviation), and within it terms
/// below `1e-30` of the mode's weight are dropped. By Bernstein's
/// inequality the mass outside the window is below `e^-48 ≈ 1.4e-21`, and
/// the dropped terms add less than `1e-24` relative; so the result is
/// within `1e-20` of the exact sum. The window has `O(sqrt(n / blocks))`
/// terms; if `inner` is already above `1 - 1e-15` at its low end the answer
/// is 1 (one evaluation), and if the window would exceed 2^20 terms the
/// upper bound `inner(window end)` is returned. Values of `inner` outside
/// `[0, 1]` are clamped and NaN counts as 1, so the result is always in
/// `[0, 1]`. With the blocked layouts'
/// inner rates, which saturate by about 20,000 keys per block, neither
/// shortcut changes a rate below `1 - 1e-15`, and the sum never has more
/// than a few thousand terms, for n up to 2^64.
pub fn block_mixture(n: u64, blocks: u64, inner: impl Fn(u64) -> f64) -> f64 {
    // `clamp` keeps NaN; a rate that cannot be computed must not read as 0.
    let inner = |i| {
        let r = inner(i);
        if r.is_nan() { 1.0 } else { r.clamp(0.0, 1.0) }
    };
    if blocks <= 1 || n == 0 {
        return inner(n);
    }
    let nf = n as f64;
    let q = 1.0 / blocks as f64;
    let sd = (nf * q * (1.0 - q)).sqrt();
    let mode = (((nf + 1.0) * q).floor() as u64).min(n);
    let half = (12.0 * sd + 32.0).ceil() as u64;
    let lo = mode.saturating_sub(half);
    let hi = mode.saturating_add(half).min(n);
    if inner(lo) >= SATURATED {
        return 1.0;
    }
    if hi - lo > MAX_TERMS {
        return inner(hi);
    }
    let odds = q / (1.0 - q);
    let (mut sum_w, mut sum_wf) = (1.0, inner(mode));
    // Upwards from the mode: pmf(i + 1) = pmf(i) (n - i) / (i + 1) q / (1 - q).
    let (mut w, mut i) = (1.0f64, mode);
    while i < hi {
        w *= (nf - i as f64) / (i as f64 + 1.0) * odds;
        i += 1;
        if w < 1e-30 {
            break;
        }
        sum_w += w;
        sum_wf += w * inner(i);
    }
    // Downwards: pmf(i - 1) = pmf(i) i / (n - i + 1) (1 - q) / q.
    let (mut w, mut i) = (1.0f64, mode);
    while i > lo {
        w *= i as f64 / (nf - i as f64 + 1.0) / odds;
        i -= 1;
        if w < 1e-30 {
            break;
        }
        sum_w += w;
        sum_wf += w * inner(i);
    }
    (sum_wf / sum_w).clamp(0.0, 1.0)
}

/// The exact false-positive rate of one 512-bit block holding `keys` keys
/// with k probes each, anywhere in the block (ideal hashing): `E[(X/512)^k]`
/// over the occupancy law of X, the bits set by `keys * k` probes.
///
/// Computed once per k into a table (dynamic programming over the probes,
/// about 10^7 operations for k = 1, cached for the process) up to the load
/// where the rate exceeds `1 - 1e-15`; beyond it, 1. States below `1e-30`
/// are pruned (an error below `1e-27`). k = 0 gives 1 (a filter that tests
/// nothing answers "yes"); k above [`BloomFilter::MAX_HASHES`](crate::BloomFilter::MAX_HASHES) uses the slower
/// [`classic_fpr_exact`] on 512 bits.
pub fn blocked_load_fpr(keys: u64, k: u32) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if k > MAX_HASHES {
        return classic_fpr_exact(BLOCK, keys, k);
    }
    static TABLES: [OnceLock<Box<[f64]>>; MAX_HASHES as usize] =
        [const { OnceLock::new() }; MAX_HASHES as usize];
    let table = TABLES[k as usize - 1].get_or_init(|| blocked_table(k));
    usize::try_from(keys)
        .ok()
        .and_then(|i| table.get(i))
        .copied()
        .unwrap_or(1.0)
}

/// `table[i]` = rate of a 512-bit block after i keys of k probes.
fn blocked_table(k: u32) -> Box<[f64]> {
    const B: usize = BLOCK as usize;
    const PRUNE: f64 = 1e-30;
    let bf = B as f64;
    let pow_k: Vec<f64> = (0..=B).map(|x| (x as f64 / bf).powi(k as i32)).collect();
    // dist[x] = Pr[x bits set]; nonzero only on [lo, hi].
    let mut dist = vec![0.0f64; B + 1];
    dist[0] = 1.0;
    let (mut lo, mut hi) = (0usize, 0usize);
    let mut table = vec![0.0];
    while table.len() < 1 << 16 {
        for _ in 0..k {
            // One more probe: it lands on a set bit with probability x/B.
            hi = (hi + 1).min(B);
            for x in (lo.max(1)..=hi).rev() {
                dist[x] = dist[x] * (x as f64 / bf) + dist[x - 1] * ((B - x + 1) as f64 / bf);
            }
            if lo == 0 {
                dist[0] = 0.0;
            }
            while lo < hi && dist[lo] < PRUNE {
                dist[lo] = 0.0;
                lo += 1;
            }
        }
        let rate: f64 = (lo..=hi).map(|x| dist[x] * pow_k[x]).sum();
        table.push(rate.min(1.0));
        if rate >= SATURATED {
            break;
        }
    }
    table.into_boxed_slice()
}

/// The exact false-positive rate of one split block holding `keys` keys:
/// k segments of `S = floor(512 / k)` bits, one bit per key in each:
/// `(1 - (1 - 1/S)^keys)^k`. k = 0 gives 1; `keys = 0` (k >= 1) gives 0.
/// Beyond k = 256, where `S` would be below 2 bits, `S = 1`: every key
/// sets every segment, so one key makes the rate 1.
pub fn split_block_load_fpr(keys: u64, k: u32) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if keys == 0 {
        // Not by the formula: with S = 1 it is 0 * ln(0) = NaN, and the rate
        // must be total.
        return 0.0;
    }
    let segment = (BLOCK / u64::from(k)).max(1) as f64;
    let fill = -(keys as f64 * (-1.0 / segment).ln_1p()).exp_m1();
    pow_k(fill, k)
}

/// The false-positive rate of a blocked filter of m bits (`m / 512` blocks
/// of 512 bits) after n keys with k probes each, exact under ideal hashing:
/// [`block_mixture`] of [`blocked_load_fpr`].
///
/// ```
/// use lesshash::rates::blocked_fpr;
/// // 10 bits/key: 0.967% at k = 6, above the classic filter's 0.819%.
/// let p = blocked_fpr(10_000_000, 1_000_000, 6);
/// assert!((p - 0.00967).abs() < 0.0001, "{p}");
/// ```
pub fn blocked_fpr(m: u64, n: u64, k: u32) -> f64 {
    let blocks = (m / BLOCK).max(1);
    block_mixture(n, blocks, |i| blocked_load_fpr(i, k))
}

/// The false-positive rate of a split-block filter of m bits after n keys,
/// k segments of `floor(512 / k)` bits per block, exact under ideal hashing:
/// [`block_mixture`] of [`split_block_load_fpr`].
///
/// ```
/// use lesshash::rates::split_block_fpr;
/// // 10 bits/key, 8 x u64 segments: 1.049%.
/// let p = split_block_fpr(10_000_000, 1_000_000, 8);
/// assert!((p - 0.01049).abs() < 0.0001, "{p}");
/// ```
pub fn split_block_fpr(m: u64, n: u64, k: u32) -> f64 {
    let blocks = (m / BLOCK).max(1);
    block_mixture(n, blocks, |i| split_block_load_fpr(i, k))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table agrees with the exact classic formula on 512 bits.
    #[test]
    fn load_table_equals_classic_exact_on_one_block() {
        for k in [1u32, 2, 6, 8, 16] {
            for keys in [0u64, 1, 2, 10, 50, 100, 400] {
                let table = blocked_load_fpr(keys, k);
                let exact = classic_fpr_exact(BLOCK, keys, k);
                assert!(
                    (table - exact).abs() <= 1e-9 * exact.max(1e-12),
                    "k={k} keys={keys}: {table} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn mixture_of_one_block_is_the_block() {
        assert_eq!(blocked_fpr(512, 50, 6), blocked_load_fpr(50, 6));
        assert_eq!(blocked_fpr(100, 50, 6), blocked_load_fpr(50, 6));
    }

    #[test]
    fn mixture_matches_a_direct_binomial_sum() {
        // Small n: sum every binomial term directly.
        let (n, blocks, k) = (300u64, 7u64, 5u32);
        let q = 1.0 / blocks as f64;
        let mut direct = 0.0;
        let mut ln_c = 0.0f64; // ln C(n, i)
        for i in 0..=n {
            if i > 0 {
                ln_c += ((n - i + 1) as f64 / i as f64).ln();
            }
            let w = (ln_c + i as f64 * q.ln() + (n - i) as f64 * (1.0 - q).ln()).exp();
            direct += w * blocked_load_fpr(i, k);
        }
        let mixture = blocked_fpr(blocks * 512, n, k);
        assert!((mixture - direct).abs() < 1e-12, "{mixture} vs {direct}");
    }

    #[test]
    fn research_table_values() {
        // Reference values at 10 bits/key from an independent computation
        // of the same mixture (not this code): 0.967% (blocked, k = 6) and
        // 1.049% (split 8 x u64).
        let n = 1_000_000;
        assert!((blocked_fpr(10 * n, n, 6) - 0.00967).abs() < 5e-5);
        assert!((split_block_fpr(10 * n, n, 8) - 0.01049).abs() < 5e-5);
    }

    #[test]
    fn huge_n_is_fast_and_sane() {
        let start = std::time::Instant::now();
        for n in [1u64 << 40, 1 << 62, u64::MAX] {
            for m in [512u64, 1 << 20, 1 << 46] {
                for k in [1u32, 8, 16] {
                    let p = blocked_fpr(m, n, k);
                    assert!((0.0..=1.0).contains(&p));
                    let p = split_block_fpr(m, n, k);
                    assert!((0.0..=1.0).contains(&p));
                }
            }
        }
        // Not a timing assertion on the machine: a guard against the
        // O(n) behaviour the fuzzer found (18 s), generous by 100x.
        assert!(start.elapsed().as_secs() < 60);
    }

    #[test]
    fn monotone_in_bits_and_keys() {
        let mut last = 1.0;
        for blocks in [1u64, 2, 10, 100, 1000, 10_000] {
            let p = blocked_fpr(blocks * 512, 20_000, 7);
            assert!(p <= last, "{blocks}: {p} > {last}");
            last = p;
        }
        let mut last = 0.0;
        for n in [0u64, 10, 100, 1000, 10_000] {
            let p = split_block_fpr(100 * 512, n, 8);
            assert!(p >= last);
            last = p;
        }
    }

    #[test]
    fn split_block_beyond_256_hashes_is_a_rate() {
        // k >= 257 makes a segment one bit, and `0 * ln(0)` once made the
        // rate NaN even for an empty filter.
        for k in [257u32, 512, 513, 1 << 20, 1 << 31, u32::MAX] {
            assert_eq!(split_block_load_fpr(0, k), 0.0, "k = {k}");
            assert_eq!(split_block_load_fpr(1, k), 1.0, "k = {k}");
            assert_eq!(split_block_fpr(1 << 20, 0, k), 0.0, "k = {k}");
            for (m, n) in [(512u64, 1u64), (1 << 20, 1000), (1 << 46, u64::MAX)] {
                let p = split_block_fpr(m, n, k);
                assert!((0.0..=1.0).contains(&p), "({m}, {n}, {k}) = {p}");
                let p = blocked_fpr(m, n, k);
                assert!((0.0..=1.0).contains(&p), "({m}, {n}, {k}) = {p}");
            }
        }
        assert_eq!(block_mixture(10, 4, |_| f64::NAN), 1.0);
        assert_eq!(block_mixture(0, 4, |_| -3.0), 0.0);
    }

    #[test]
    fn zero_hashes_answer_yes() {
        assert_eq!(blocked_load_fpr(3, 0), 1.0);
        assert_eq!(split_block_load_fpr(3, 0), 1.0);
    }
}
