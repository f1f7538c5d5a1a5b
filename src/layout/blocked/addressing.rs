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

/// [`position`] for one key or a vector of keys ([`Lanes32`]): `base +
/// ((x >> 16) * seg >> 16)`, the one place the scaling is written (the
/// SIMD kernels run it on 8 keys).
#[inline(always)]
pub(crate) fn position_in<V: Lanes32>(x: V, seg: u32, base: u32) -> V {
    x.shr16().mul(V::splat(seg)).shr16().add(V::splat(base))
}
