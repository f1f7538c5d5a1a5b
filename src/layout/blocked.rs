//! The blocked layout: `m / 512` cache-line blocks; each key sets k bits
//! anywhere inside one block (Putze, Sanders and Singler 2009).
//!
//! * Addressing ([`crate::kernel::scalar`]): the block is `h1 * blocks >> 64`
//!   (multiply-high, no 2^32-block limit); probe i inside it is the top 9
//!   bits of `x_i * SALTS[i]`, x_i a 32-bit half of h2. One cache line per
//!   key, whatever k.
//! * FPR: [`crate::params::blocked_fpr`], the binomial mixture over the
//!   query block's load of the exact rate of a 512-bit block. It needs 9.92
//!   bits/key for 1% (classic: 9.59).
//! * Sizing: m a multiple of 512, the smallest meeting p by that formula for
//!   each k near the optimum; the best k is below `c ln 2` at high bits/key.
//! * k: 1 to [`MAX_HASHES`](crate::params::MAX_HASHES) (the SIMD kernels do
//!   8 probes per vector step).
//! * All two-hash schemes address a block the same way (the in-block
//!   positions come from the salts, not from the scheme's progression: a
//!   progression modulo 512 has only 512 x 256 distinct probe sets, so keys
//!   in one block would coincide entirely far too often). `Independent` uses
//!   k hash computations, the baseline.
//! * Current FPR from the fill: the mean over blocks of `(ones/512)^k`.
//!   Cardinality: the sum over blocks of `-(512/k) ln(1 - ones/512)`.

#![forbid(unsafe_code)]

use crate::Error;
use crate::params::{MAX_HASHES, blocked_fpr, estimate_items, smallest_bits, split_block_fpr};

/// Bits per block.
pub(crate) const BLOCK_BITS: u64 = 512;

/// The ideal-hashing rate of a blocked (or split-block) filter.
pub(crate) fn fpr(split: bool, m: u64, n: u64, k: u32) -> f64 {
    if split {
        split_block_fpr(m, n, k)
    } else {
        blocked_fpr(m, n, k)
    }
}

/// Whether k is offered by the layout: 1 to `MAX_HASHES` for both (the
/// split-block layout cuts its block into k segments of `floor(512 / k)`
/// bits; a power of two wastes no bit and k = 8 is one bit per word).
pub(crate) fn valid_k(_split: bool, k: u32) -> bool {
    (1..=MAX_HASHES).contains(&k)
}

/// The k values tried when sizing for p.
fn candidates(split: bool, p: f64) -> Vec<u32> {
    // The classic optimum is log2(1/p); blocked filters want a little less.
    let k0 = (1.0 / p).log2().round().clamp(1.0, f64::from(MAX_HASHES)) as u32;
    (1..=MAX_HASHES)
        .filter(|&k| valid_k(split, k))
        .filter(|&k| 2 * k + 1 >= k0 && k <= k0 + 2)
        .collect()
}

/// `(m, k)` for n keys at rate p; `fpr` is the layout's full rate (with the
/// scheme's term).
pub(crate) fn size_for(
    split: bool,
    n: u64,
    p: f64,
    fixed_k: Option<u32>,
    fpr: impl Fn(u64, u32) -> f64,
) -> Result<(u64, u32), Error> {
    let ks = match fixed_k {
        Some(k) => vec![k],
        None => candidates(split, p),
    };
    if n == 0 {
        return Ok((BLOCK_BITS, ks[0].min(fixed_k.unwrap_or(1))));
    }
    let mut best: Option<(u64, u32)> = None;
    for k in ks {
        if let Some(m) = smallest_bits(p, BLOCK_BITS, |m| fpr(m, k))
            && best.is_none_or(|(bm, _)| m < bm)
        {
            best = Some((m, k));
        }
    }
    best.ok_or_else(|| {
        Error::invalid(
            "fpr",
            format!(
                "a rate of {p} needs more than the maximum of {} bits for this many items",
                crate::params::MAX_BITS
            ),
        )
    })
}

/// The k minimising the rate of m bits holding n keys.
pub(crate) fn optimal_hashes(split: bool, m: u64, n: u64) -> u32 {
    if n == 0 {
        return 1;
    }
    let ideal = m as f64 / n as f64 * std::f64::consts::LN_2;
    // Clamped as f64: at huge m/n the u32 cast saturates and `+ 1` overflowed.
    let hi = (ideal.ceil() + 1.0).clamp(1.0, f64::from(MAX_HASHES)) as u32;
    let lo = (hi / 2).max(1);
    let (mut best_k, mut best_p) = (0, f64::INFINITY);
    for k in lo..=hi {
        let p = fpr(split, m, n, k);
        if p < best_p {
            (best_k, best_p) = (k, p);
        }
    }
    best_k.max(1)
}

/// Set bits in the bit range `[start, end)` of `words`.
fn ones(words: &[u64], start: u64, end: u64) -> u64 {
    super::partitioned::count_ones_range(words, start, end)
}

/// `(segments, segment bits)` of a block.
fn segments(split: bool, k: u32) -> (u64, u64) {
    if split {
        (u64::from(k), BLOCK_BITS / u64::from(k))
    } else {
        (1, BLOCK_BITS)
    }
}

/// The false-positive rate now: the mean over blocks of the block's rate
/// given its fill.
pub(crate) fn current_fpr(split: bool, words: &[u64], blocks: u64, k: u32) -> f64 {
    let (segs, seg) = segments(split, k);
    let total: f64 = (0..blocks)
        .map(|b| {
            if split {
                (0..segs)
                    .map(|s| {
                        let start = b * BLOCK_BITS + s * seg;
                        ones(words, start, start + seg) as f64 / seg as f64
                    })
                    .product::<f64>()
            } else {
                let start = b * BLOCK_BITS;
                (ones(words, start, start + BLOCK_BITS) as f64 / BLOCK_BITS as f64).powi(k as i32)
            }
        })
        .sum();
    total / blocks.max(1) as f64
}

/// The estimated number of distinct keys: per block, the classic estimate
/// (blocked) or the mean over segments of the one-bit estimate (split).
pub(crate) fn estimated_len(split: bool, words: &[u64], blocks: u64, k: u32) -> f64 {
    let (segs, seg) = segments(split, k);
    (0..blocks)
        .map(|b| {
            if split {
                (0..segs)
                    .map(|s| {
                        let start = b * BLOCK_BITS + s * seg;
                        estimate_items(seg, 1, ones(words, start, start + seg))
                    })
                    .sum::<f64>()
                    / segs as f64
            } else {
                let start = b * BLOCK_BITS;
                estimate_items(BLOCK_BITS, k, ones(words, start, start + BLOCK_BITS))
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_hold_the_optimum() {
        for p in [0.1, 0.01, 1e-3, 1e-4, 1e-6] {
            for split in [false, true] {
                let ks = candidates(split, p);
                assert!(!ks.is_empty(), "p={p} split={split}");
                // The best k over every valid k is among the candidates.
                let n = 100_000;
                let best = (1..=MAX_HASHES)
                    .filter(|&k| valid_k(split, k))
                    .filter_map(|k| {
                        smallest_bits(p, BLOCK_BITS, |m| fpr(split, m, n, k)).map(|m| (m, k))
                    })
                    .min()
                    .unwrap();
                assert!(
                    ks.contains(&best.1),
                    "p={p} split={split}: best {best:?} not in {ks:?}"
                );
            }
        }
    }
}
