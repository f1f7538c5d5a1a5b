//! The portable SIMD kernel: keys in lanes, with the `wide` crate.
//!
//! The chunk loops and the index computations are the shared ones
//! (`kernel::block_positions_in`, `kernel::flat_indices_in`); this module
//! only says how `wide`'s vectors do each lane operation:
//!
//! * blocked layouts: 8 keys per `u32x8` (one multiply, two shifts, one
//!   multiply and one add per probe for 8 keys);
//! * flat layouts: 4 keys per `u64x4`; the modular addition is `s = x + y;
//!   s - (r if s > r - 1)`, exact because ranges are at most `MAX_BITS =
//!   2^46` (no overflow, and the unsigned compare never wraps).
//!
//! `wide` compiles to SSE2 in a default x86-64 build and to AVX2 with `-C
//! target-cpu=native`; see [`super::avx2`] for run-time AVX2.

#![forbid(unsafe_code)]

use wide::{u32x8, u64x4};

use super::{BlockSpec, FlatSpec};
use crate::lanes::{Lanes32, Lanes64};

pub(crate) fn block_positions(
    spec: &BlockSpec,
    hashes: &[u128],
    blocks_out: &mut [u64],
    positions_out: &mut [u32],
) {
    super::block_positions_in::<u32x8>(spec, hashes, blocks_out, positions_out);
}

pub(crate) fn flat_indices(spec: &FlatSpec, hashes: &[u128], out: &mut [u64]) {
    super::flat_indices_in::<u64x4>(spec, hashes, out);
}

impl Lanes32 for u32x8 {
    const N: usize = 8;

    #[inline(always)]
    fn splat(v: u32) -> Self {
        u32x8::splat(v)
    }

    #[inline(always)]
    fn load(values: &[u32]) -> Self {
        u32x8::from(<[u32; 8]>::try_from(&values[..8]).unwrap_or_default())
    }

    #[inline(always)]
    fn store(self, out: &mut [u32]) {
        super::scalar::store(out, &self.to_array());
    }

    #[inline(always)]
    fn add(self, y: Self) -> Self {
        self + y
    }

    #[inline(always)]
    fn mul(self, y: Self) -> Self {
        self * y
    }

    #[inline(always)]
    fn shr16(self) -> Self {
        self >> 16u32
    }
}

impl Lanes64 for u64x4 {
    const N: usize = 4;

    #[inline(always)]
    fn splat(v: u64) -> Self {
        u64x4::splat(v)
    }

    #[inline(always)]
    fn load(values: &[u64]) -> Self {
        u64x4::from(<[u64; 4]>::try_from(&values[..4]).unwrap_or_default())
    }

    #[inline(always)]
    fn store(self, out: &mut [u64]) {
        super::scalar::store(out, &self.to_array());
    }

    #[inline(always)]
    fn add(self, y: Self) -> Self {
        self + y
    }

    #[inline(always)]
    fn add_mod(self, y: Self, r: Self, r_minus_1: Self) -> Self {
        let s = self + y;
        s - (s.simd_gt(r_minus_1) & r)
    }
}
