//! The portable flat indices: keys in lanes, with the `wide` crate.
//!
//! The chunk loop and the index computation are the shared ones
//! (`flat::flat_indices_in` over `Progression::lanes`); this module only
//! says how `wide`'s vectors do each lane operation: eight keys per
//! `i32x8` where the range is at most 2^30 (`Narrow`: SSE2 has a 32-bit
//! compare, `pcmpgtd`), four per `u64x4` above (the modular addition
//! `s = x + y; s - (r if s > r - 1)`, exact because ranges are at most
//! `MAX_BITS = 2^46`; SSE2 has no 64-bit compare, so `wide` emulates it).
//!
//! `wide` compiles to SSE2 in a default x86-64 build, NEON on aarch64 and
//! AVX2 with `-C target-cpu=native`; see [`super::avx2`] for run-time AVX2.

#![forbid(unsafe_code)]

use wide::{i32x8, u64x4};

use super::FlatSpec;
use crate::simd::lanes::{Lanes64, NARROW_MAX_RANGE};

/// The 32-bit lanes where the range allows ([`NARROW_MAX_RANGE`]), else
/// `u64x4`.
pub(crate) fn flat_indices(spec: &FlatSpec, hashes: &[u128], out: &mut [u64]) {
    if spec.progression.range() <= NARROW_MAX_RANGE {
        super::flat_indices_in::<Narrow>(spec, hashes, out);
    } else {
        super::flat_indices_in::<u64x4>(spec, hashes, out);
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
    fn store_offset(self, offset: u64, out: &mut [u64]) {
        super::scalar::store(out, &(self + u64x4::splat(offset)).to_array());
    }

    #[inline(always)]
    fn add_mod(self, y: Self, r: Self, r_minus_1: Self) -> Self {
        let s = self + y;
        s - (s.simd_gt(r_minus_1) & r)
    }
}

/// Eight 32-bit index lanes (ranges up to [`NARROW_MAX_RANGE`]): twice the
/// keys of `u64x4` per step, and a compare SSE2 has (`pcmpgtd`; it has no
/// 64-bit one, so `u64x4`'s is emulated there).
#[derive(Clone, Copy)]
pub(crate) struct Narrow(i32x8);

impl Lanes64 for Narrow {
    const N: usize = 8;

    #[inline(always)]
    fn splat(v: u64) -> Self {
        Narrow(i32x8::splat(v as i32))
    }

    #[inline(always)]
    fn load(values: &[u64]) -> Self {
        Narrow(i32x8::from(std::array::from_fn::<i32, 8, _>(|j| {
            values.get(j).map_or(0, |&v| v as i32)
        })))
    }

    #[inline(always)]
    fn store_offset(self, offset: u64, out: &mut [u64]) {
        let lanes = self.0.to_array();
        let wide: [u64; 8] = std::array::from_fn(|j| u64::from(lanes[j] as u32) + offset);
        super::scalar::store(out, &wide);
    }

    /// Exact: both values are below `r <= 2^30`, so the sum is below 2^31
    /// and the signed compare is the unsigned one.
    #[inline(always)]
    fn add_mod(self, y: Self, r: Self, r_minus_1: Self) -> Self {
        let s = self.0 + y.0;
        Narrow(s - (s.simd_gt(r_minus_1.0) & r.0))
    }
}
