//! The blocked layouts' addressing as pure functions: which block a key's
//! h1 selects and which bit of it each probe's 32-bit value lands on. A
//! leaf (it imports only the salts and the lane trait), so the index
//! kernels compute the same positions without importing the layout that
//! uses them (`layout::blocked` imports the kernels for its vector probe).

#![forbid(unsafe_code)]

use crate::lanes::Lanes32;
use crate::salts::SALTS;

/// Bits per block.
pub(crate) const BLOCK_BITS: u64 = 512;

/// The block of a key among `blocks`, by multiply-high.
#[inline(always)]
pub(crate) fn block_index(h1: u64, blocks: u64) -> u64 {
    ((u128::from(h1) * u128::from(blocks)) >> 64) as u64
}

/// The 32-bit input of probe `i`: the low half of h2 for even i, the high
/// half for odd i (so every k >= 2 uses all 64 bits of h2).
#[inline(always)]
pub(crate) fn lane_input(h2: u64, i: u32) -> u32 {
    (h2 >> ((i & 1) * 32)) as u32
}

/// The mixed 32-bit value of probe `i`: `x_i * SALTS[i]`.
#[inline(always)]
pub(crate) fn lane_hash(h2: u64, i: u32) -> u32 {
    lane_input(h2, i).wrapping_mul(SALTS[i as usize])
}

/// The bits of one probe's segment: 512 for the blocked layout (the whole
/// block), `floor(512 / k)` for the split-block layout (k segments).
#[inline(always)]
pub(crate) const fn segment_bits(k: u32, split: bool) -> u32 {
    if split { 512 / k } else { 512 }
}

/// The in-block bit (0..512) of probe `i` whose mixed 32-bit value is `x`:
/// `i * S + ((x >> 16) * S >> 16)` with `S` the [segment](segment_bits)
/// bits and no base for the blocked layout. The top 16 bits of `x` scaled to
/// `[0, S)`; for a power-of-two `S` this is the top `log2 S` bits of `x`
/// (blocked: `x >> 23`).
#[inline(always)]
pub(crate) fn position(x: u32, i: u32, k: u32, split: bool) -> u32 {
    let seg = segment_bits(k, split);
    position_in(x, seg, if split { i * seg } else { 0 })
}

/// The in-block addressing constants of a blocked or split-block filter,
/// derived once from (k, split) so that no probe recomputes them per key:
/// probe i of a key lands on bit `i * step + ((x_i >> 16) * seg >> 16)` of
/// its block ([`position`]), which is `i * step + (x_i >> shift)` when
/// `seg` is a power of two (every blocked filter: `x_i >> 23`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InBlock {
    /// Probes per key, 1 to 64.
    pub(crate) k: u32,
    /// Bits per segment (512 when not split).
    pub(crate) seg: u32,
    /// The offset between consecutive probes' segments: `seg` when split,
    /// 0 otherwise (so the base is a multiply, not a branch).
    pub(crate) step: u32,
    /// `32 - log2(seg)` when `seg` is a power of two, 0 otherwise.
    pub(crate) shift: u32,
    /// For the vector probes, which go 8 probes at a time: lane j of the
    /// last group of 8 is a probe (all ones) or past k (zero).
    pub(crate) last_lanes: [i32; 8],
}

impl InBlock {
    /// The constants for k probes (1 to 64) in a plain or split block.
    pub(crate) const fn new(k: u32, split: bool) -> Self {
        let seg = segment_bits(k, split);
        Self {
            k,
            seg,
            step: if split { seg } else { 0 },
            shift: if seg.is_power_of_two() {
                32 - seg.trailing_zeros()
            } else {
                0
            },
            last_lanes: {
                let mut lanes = [0; 8];
                let mut j = 0;
                while j < 8 {
                    lanes[j] = if (j as u32) < (k - 1) % 8 + 1 { -1 } else { 0 };
                    j += 1;
                }
                lanes
            },
        }
    }

    /// The in-block bit of probe `i` with mixed value `x`: [`position`],
    /// with the shift where `seg` allows it (tested equal).
    #[inline(always)]
    pub(crate) fn bit(&self, x: u32, i: u32) -> u32 {
        let offset = if self.shift != 0 {
            x >> self.shift
        } else {
            ((x >> 16) * self.seg) >> 16
        };
        i * self.step + offset
    }
}

/// [`position`] for one key or a vector of keys ([`Lanes32`]): `base +
/// ((x >> 16) * seg >> 16)`, the one place the scaling is written (the
/// SIMD kernels run it on 8 keys).
#[inline(always)]
pub(crate) fn position_in<V: Lanes32>(x: V, seg: u32, base: u32) -> V {
    x.shr16().mul(V::splat(seg)).shr16().add(V::splat(base))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The per-filter constants give [`position`]'s bits (the shift where
    /// the segment is a power of two, the scaling otherwise), and the last
    /// group's lane mask has one lane per remaining probe.
    #[test]
    fn in_block_constants_match_position() {
        for split in [false, true] {
            for k in 1..=64 {
                let at = InBlock::new(k, split);
                let lanes = at.last_lanes.iter().filter(|&&l| l == -1).count() as u32;
                assert_eq!(lanes, k - 8 * (k.div_ceil(8) - 1), "k={k}");
                assert!(at.last_lanes.iter().all(|&l| l == 0 || l == -1));
                assert_eq!(split, at.step != 0);
                let mut x = 0x2545_f491u32;
                for i in 0..k {
                    for _ in 0..64 {
                        x = x.wrapping_mul(0x9e37_79b9).wrapping_add(0x7f4a_7c15);
                        for v in [x, 0, u32::MAX] {
                            assert_eq!(at.bit(v, i), position(v, i, k, split), "k={k} i={i}");
                        }
                    }
                }
            }
        }
    }
}
