//! The scalar kernel: the oracle for every in-block computation.
//!
//! A key's hash is split into `(h1, h2)` ([`crate::hash::split`]). The block
//! is `h1 * blocks >> 64` (multiply-high: uniform, exact for any block
//! count). Inside the 512-bit block, probe `i` takes the 32-bit lane input
//! `x_i` (the low half of h2 for even i, the high half for odd i, so every
//! k >= 2 uses all 64 bits of h2), multiplies it by the odd constant
//! [`SALTS`]`[i]` (wrapping, 32 bits) and keeps the top bits of the product
//! as its position:
//!
//! * blocked: position `(x_i * SALTS[i]) >> 23` in `[0, 512)`;
//! * split-block with k segments of `S = floor(512 / k)` bits: position
//!   `i * S + ((x_i * SALTS[i]) >> 16) * S >> 16`, one bit per segment
//!   (for a power-of-two k, the top `log2 S` bits; k = 8 is one bit per
//!   u64 word).
//!
//! The lane arithmetic is one 32-bit multiply and one shift per probe: eight
//! probes are one `vpmulld` and one `vpsrld` on AVX2. The SIMD kernels
//! ([`super::wide`], [`super::avx2`]) must set and test exactly the bits
//! this module's masks name (differential tests in `tests/kernels.rs`).
//!
//! The `Independent` scheme replaces `x_i * SALTS[i]` by the low 32 bits of
//! the i-th independent hash (and takes the block from hash 0): k hash
//! computations per key, the baseline that "hashes saved" is measured
//! against.

#![forbid(unsafe_code)]

/// Words (u64) per 512-bit block.
pub(crate) const WORDS: usize = 8;

pub use crate::salts::SALTS;

pub(crate) use crate::layout::blocked::addressing::{block_index, lane_hash, position};

/// The in-block bits of a two-hash key as a mask over the block's 8 words,
/// by the addressing oracle (`position` of each probe; the layout's probe
/// builds the same mask, tested in `layout::blocked`).
pub fn block_mask(h2: u64, k: u32, split: bool) -> [u64; WORDS] {
    let mut mask = [0; WORDS];
    for i in 0..k {
        let p = position(lane_hash(h2, i), i, k, split);
        mask[(p / 64) as usize] |= 1 << (p % 64);
    }
    mask
}

/// Copies the first `dst.len()` lanes of a vector's array into `dst`: a
/// fixed-size copy (one vector store) for a whole vector, a loop for the
/// partial last one (a variable-length `copy_from_slice` is a `memmove`
/// call, measured at 6% of a batch query).
#[inline(always)]
pub(crate) fn store<T: Copy, const L: usize>(dst: &mut [T], lanes: &[T; L]) {
    if let Ok(whole) = <&mut [T; L]>::try_from(&mut *dst) {
        *whole = *lanes;
    } else {
        for (d, &v) in dst.iter_mut().zip(lanes) {
            *d = v;
        }
    }
}

/// The oracle of [`Kernel::block_positions`](super::Kernel::block_positions):
/// one key at a time by [`block_index`] and [`position`] of [`lane_hash`].
/// Lengths are the caller's (checked by the public entry point).
pub(crate) fn block_positions(
    spec: &super::BlockSpec,
    hashes: &[u128],
    blocks_out: &mut [u64],
    positions_out: &mut [u32],
) {
    let n = hashes.len();
    for (j, (&h, b)) in hashes.iter().zip(blocks_out.iter_mut()).enumerate() {
        let (h1, h2) = crate::hash::split(h);
        *b = block_index(h1, spec.blocks);
        for i in 0..spec.k {
            positions_out[i as usize * n + j] = position(lane_hash(h2, i), i, spec.k, spec.split);
        }
    }
}

/// The oracle of [`Kernel::flat_indices`](super::Kernel::flat_indices):
/// the scheme's incremental path ([`crate::scheme::for_each_index`], itself
/// tested equal to [`crate::scheme::reference_index`]) one key at a time.
pub(crate) fn flat_indices(spec: &super::FlatSpec, hashes: &[u128], out: &mut [u64]) {
    let n = hashes.len();
    for (j, &h) in hashes.iter().enumerate() {
        spec.progression.for_each(h, spec.k, |i, x| {
            out[i as usize * n + j] = u64::from(i) * spec.stride + x;
            true
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_positions_stay_in_their_segment() {
        for k in 1u32..=64 {
            let seg = 512 / k;
            for x in [0u32, 1, u32::MAX, 0x8000_0000, 0x1234_5678] {
                for i in 0..k {
                    let p = position(x, i, k, true);
                    assert!((i * seg..(i + 1) * seg).contains(&p), "k={k} i={i} p={p}");
                }
            }
        }
    }

    #[test]
    fn split_mask_has_one_bit_per_segment() {
        let mut h = 0x0123_4567_89ab_cdefu64;
        for k in 1u32..=64 {
            for _ in 0..100 {
                h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17);
                let mask = block_mask(h, k, true);
                let ones: u32 = mask.iter().map(|w| w.count_ones()).sum();
                assert_eq!(ones, k);
            }
        }
    }

    #[test]
    fn power_of_two_segments_take_the_top_bits() {
        for k in [1u32, 2, 4, 8, 16, 32, 64] {
            let seg_log = 9 - k.trailing_zeros();
            for x in [
                0u32,
                1,
                0xffff,
                0x1_0000,
                u32::MAX,
                0x8000_0000,
                0x1234_5678,
            ] {
                for i in 0..k {
                    assert_eq!(
                        position(x, i, k, true),
                        (i << seg_log) + (x >> (32 - seg_log))
                    );
                }
                assert_eq!(position(x, 0, k, false), x >> 23);
            }
        }
    }

    #[test]
    fn block_index_covers_the_range() {
        assert_eq!(block_index(u64::MAX, 7), 6);
        assert_eq!(block_index(0, 7), 0);
        assert_eq!(block_index(u64::MAX, 1 << 40), (1 << 40) - 1);
    }
}
