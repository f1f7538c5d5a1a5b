//! The run-time-dispatched AVX2 flat index kernel (x86_64).
//!
//! The chunk loop and the index computation are the shared ones
//! (`kernel::flat_indices_in` over `Progression::lanes`), instantiated
//! inside a `#[target_feature(enable = "avx2")]` function with this
//! module's lane types over `__m256i`: eight 32-bit indices per register
//! where the range is at most 2^30 (`Narrow`), four 64-bit ones (`U64x4`,
//! `vpcmpgtq`) above. A library built for the baseline x86-64 target
//! (what `cargo build --release` gives users) still runs them where the
//! CPU has AVX2; `wide` alone cannot (it picks its instructions at compile
//! time). Vectors are built from and read back into arrays by value with
//! `bytemuck::cast` (`__m256i` is `Pod`): no pointer loads, no transmute of
//! slices. The `unsafe` is the call into the `target_feature` function,
//! made with an `Avx2` token, and the intrinsics of the lane types, which
//! exist only inside it.

#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_add_epi64, _mm256_and_si256, _mm256_castsi256_si128,
    _mm256_cmpgt_epi32, _mm256_cmpgt_epi64, _mm256_cvtepu32_epi64, _mm256_extracti128_si256,
    _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_sub_epi32, _mm256_sub_epi64,
};

use super::FlatSpec;
use super::scalar::{self, store};
use crate::cpu::Avx2;
use crate::lanes::{Lanes64, NARROW_MAX_RANGE};

const LANES32: usize = 8;
const LANES64: usize = 4;

/// The flat indices with AVX2 where the CPU has it, else the scalar oracle.
pub(crate) fn flat_indices(spec: &FlatSpec, hashes: &[u128], out: &mut [u64]) {
    let Some(_token) = Avx2::detect() else {
        return scalar::flat_indices(spec, hashes, out);
    };
    // SAFETY: the token proves the CPU has AVX2, the one precondition of
    // calling a `target_feature(enable = "avx2")` function; it uses
    // references only, indexing checked.
    unsafe { flat_indices_avx2(spec, hashes, out) }
}

/// The 32-bit lanes where the range allows, else 64-bit ones.
#[target_feature(enable = "avx2")]
fn flat_indices_avx2(spec: &FlatSpec, hashes: &[u128], out: &mut [u64]) {
    if spec.progression.range() <= NARROW_MAX_RANGE {
        super::flat_indices_in::<Narrow>(spec, hashes, out);
    } else {
        super::flat_indices_in::<U64x4>(spec, hashes, out);
    }
}

// ------------------------------------------------------------ the lanes --
//
// SAFETY (every `unsafe` block below): the intrinsics need AVX2. Values of
// `U64x4` and `Narrow` are made only inside `flat_indices_avx2` (these
// types are private to this module and nothing else here creates one),
// which runs only with an `Avx2` token in hand; the methods are `inline(always)`, so their
// intrinsics are compiled into those `target_feature` functions. Every
// intrinsic works on registers only; loads and stores go through
// `bytemuck::cast` of arrays by value.

/// Four u64 lanes in an AVX2 register.
#[derive(Clone, Copy)]
struct U64x4(__m256i);

impl Lanes64 for U64x4 {
    const N: usize = LANES64;

    #[inline(always)]
    fn splat(v: u64) -> Self {
        // SAFETY: AVX2 is present; see "the lanes" above.
        Self(unsafe { _mm256_set1_epi64x(v as i64) })
    }

    #[inline(always)]
    fn load(values: &[u64]) -> Self {
        let a = <[u64; LANES64]>::try_from(&values[..LANES64]).unwrap_or_default();
        Self(bytemuck::cast(a))
    }

    #[inline(always)]
    fn store_offset(self, offset: u64, out: &mut [u64]) {
        // SAFETY: AVX2 is present; see "the lanes" above.
        let a: [u64; LANES64] =
            bytemuck::cast(unsafe { _mm256_add_epi64(self.0, _mm256_set1_epi64x(offset as i64)) });
        store(out, &a);
    }

    /// `s = x + y; s - (r if s > r - 1)`: the signed 64-bit compare is
    /// exact since every value is below 2^47.
    #[inline(always)]
    fn add_mod(self, y: Self, r: Self, r_minus_1: Self) -> Self {
        // SAFETY: AVX2 is present; see "the lanes" above.
        Self(unsafe {
            let s = _mm256_add_epi64(self.0, y.0);
            _mm256_sub_epi64(s, _mm256_and_si256(_mm256_cmpgt_epi64(s, r_minus_1.0), r.0))
        })
    }
}

/// Eight 32-bit index lanes in an AVX2 register (ranges up to
/// [`NARROW_MAX_RANGE`]): twice the keys of [`U64x4`] per instruction.
#[derive(Clone, Copy)]
struct Narrow(__m256i);

impl Lanes64 for Narrow {
    const N: usize = LANES32;

    #[inline(always)]
    fn splat(v: u64) -> Self {
        // SAFETY: AVX2 is present; see "the lanes" above.
        Self(unsafe { _mm256_set1_epi32(v as i32) })
    }

    #[inline(always)]
    fn load(values: &[u64]) -> Self {
        let a: [u32; LANES32] = std::array::from_fn(|j| values.get(j).map_or(0, |&v| v as u32));
        Self(bytemuck::cast(a))
    }

    /// Zero-extended to u64 (`vpmovzxdq` per half), plus the offset.
    #[inline(always)]
    fn store_offset(self, offset: u64, out: &mut [u64]) {
        // SAFETY: AVX2 is present; see "the lanes" above.
        let a: [u64; LANES32] = bytemuck::cast(unsafe {
            let off = _mm256_set1_epi64x(offset as i64);
            [
                _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm256_castsi256_si128(self.0)), off),
                _mm256_add_epi64(
                    _mm256_cvtepu32_epi64(_mm256_extracti128_si256::<1>(self.0)),
                    off,
                ),
            ]
        });
        store(out, &a);
    }

    /// Exact: both values are below `r <= 2^30`, so the sum is below 2^31
    /// and the signed compare is the unsigned one.
    #[inline(always)]
    fn add_mod(self, y: Self, r: Self, r_minus_1: Self) -> Self {
        // SAFETY: AVX2 is present; see "the lanes" above.
        Self(unsafe {
            let s = _mm256_add_epi32(self.0, y.0);
            _mm256_sub_epi32(s, _mm256_and_si256(_mm256_cmpgt_epi32(s, r_minus_1.0), r.0))
        })
    }
}
