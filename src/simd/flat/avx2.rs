//! The flat indices with AVX2 intrinsics, dispatched at run time (x86_64).
//!
//! The chunk loop and the index computation are the shared ones
//! (`flat::flat_indices_in` over `Progression::lanes`), instantiated
//! inside a `#[target_feature(enable = "avx2")]` function with this
//! module's lane types over `__m256i`: eight 32-bit indices per register
//! where the range is at most 2^30 (`Narrow`), four 64-bit ones (`U64x4`,
//! `vpcmpgtq`) above. A library built for the baseline x86-64 target
//! (what `cargo build --release` gives users) still runs them where the
//! CPU has AVX2; `wide` alone cannot (it picks its instructions at compile
//! time). Vectors are built from and read back into arrays by value with
//! `bytemuck::cast` (`__m256i` is `Pod`): no pointer loads, no transmute of
//! slices.
//!
//! # Where the `unsafe` rests
//!
//! The lane methods are the shared trait's safe methods (`Lanes64`, whose
//! callers are safe code), yet run AVX2 instructions. What makes that
//! sound is in their types, not in this module's privacy: the lane types
//! take a parameter `S: Avx2Scope`, an `unsafe trait` whose contract is
//! that the CPU has AVX2 wherever a lane value over `S` exists, so each
//! method's `unsafe` cites only its own bound. The one implementation is
//! the type `ThisCall`, declared inside the body of `flat_indices_avx2`
//! (nameable nowhere else), a `target_feature(enable = "avx2")` function
//! called only with an [`Avx2`] token: so the two `unsafe` facts a reader
//! checks are that call (with the token) and that impl (in that body).
//! The parameter is a `PhantomData`: the lanes are the bare `__m256i`.

#![allow(unsafe_code)]

use core::marker::PhantomData;

use core::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_add_epi64, _mm256_and_si256, _mm256_castsi256_si128,
    _mm256_cmpgt_epi32, _mm256_cmpgt_epi64, _mm256_cvtepu32_epi64, _mm256_extracti128_si256,
    _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_sub_epi32, _mm256_sub_epi64,
};

use super::FlatSpec;
use super::scalar::{self, store};
use crate::simd::cpu::Avx2;
use crate::simd::lanes::{Lanes64, NARROW_MAX_RANGE};

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
    /// The scope of this call: the lanes below exist only in it.
    #[derive(Clone, Copy)]
    enum ThisCall {}
    // SAFETY: `ThisCall` is declared in this body and named nowhere else,
    // and no lane value over it leaves this call (the lanes live in
    // `flat_indices_in`'s locals; nothing is returned or kept), so they
    // exist only while this `target_feature(enable = "avx2")` function
    // runs, and `flat_indices` calls it only with an `Avx2` token in hand:
    // the CPU has AVX2 wherever they are used.
    unsafe impl Avx2Scope for ThisCall {}
    if spec.progression.range() <= NARROW_MAX_RANGE {
        super::flat_indices_in::<Narrow<ThisCall>>(spec, hashes, out);
    } else {
        super::flat_indices_in::<U64x4<ThisCall>>(spec, hashes, out);
    }
}

// ------------------------------------------------------------ the lanes --

/// The type-level proof that this CPU has AVX2 carried by the lane types
/// below ([`U64x4`], [`Narrow`]): their safe methods run AVX2 instructions
/// for any `S: Avx2Scope`. Uninhabited implementations are enough (it is
/// used only as a `PhantomData` parameter).
///
/// # Safety
///
/// Implement it only where the CPU has AVX2 wherever a lane value over the
/// implementing type is made or used: for a type declared inside the body
/// of a `#[target_feature(enable = "avx2")]` function and named nowhere
/// else, whose callers hold an [`Avx2`] token, when no lane value over it
/// outlives a call of that function.
unsafe trait Avx2Scope: Copy {}

// The proof costs nothing: each lane type is its one register.
const _: () = assert!(
    size_of::<U64x4<()>>() == size_of::<__m256i>()
        && size_of::<Narrow<()>>() == size_of::<__m256i>()
);

// Every intrinsic below works on registers only; loads and stores go
// through `bytemuck::cast` of arrays by value. The methods are
// `inline(always)`, so their intrinsics compile into the `target_feature`
// function that instantiates the lanes (not a call per operation).

/// Four u64 lanes in an AVX2 register; `S` proves AVX2.
#[derive(Clone, Copy)]
struct U64x4<S>(__m256i, PhantomData<S>);

impl<S: Avx2Scope> Lanes64 for U64x4<S> {
    const N: usize = LANES64;

    #[inline(always)]
    fn splat(v: u64) -> Self {
        // SAFETY: `S: Avx2Scope`: the CPU has AVX2 (its contract).
        Self(unsafe { _mm256_set1_epi64x(v as i64) }, PhantomData)
    }

    #[inline(always)]
    fn load(values: &[u64]) -> Self {
        let a = <[u64; LANES64]>::try_from(&values[..LANES64]).unwrap_or_default();
        Self(bytemuck::cast(a), PhantomData)
    }

    #[inline(always)]
    fn store_offset(self, offset: u64, out: &mut [u64]) {
        // SAFETY: `S: Avx2Scope`: the CPU has AVX2 (its contract).
        let a: [u64; LANES64] =
            bytemuck::cast(unsafe { _mm256_add_epi64(self.0, _mm256_set1_epi64x(offset as i64)) });
        store(out, &a);
    }

    /// `s = x + y; s - (r if s > r - 1)`: the signed 64-bit compare is
    /// exact since every value is below 2^47.
    #[inline(always)]
    fn add_mod(self, y: Self, r: Self, r_minus_1: Self) -> Self {
        // SAFETY: `S: Avx2Scope`: the CPU has AVX2 (its contract).
        let sum = unsafe {
            let s = _mm256_add_epi64(self.0, y.0);
            _mm256_sub_epi64(s, _mm256_and_si256(_mm256_cmpgt_epi64(s, r_minus_1.0), r.0))
        };
        Self(sum, PhantomData)
    }
}

/// Eight 32-bit index lanes in an AVX2 register (ranges up to
/// [`NARROW_MAX_RANGE`]): twice the keys of [`U64x4`] per instruction;
/// `S` proves AVX2.
#[derive(Clone, Copy)]
struct Narrow<S>(__m256i, PhantomData<S>);

impl<S: Avx2Scope> Lanes64 for Narrow<S> {
    const N: usize = LANES32;

    #[inline(always)]
    fn splat(v: u64) -> Self {
        // SAFETY: `S: Avx2Scope`: the CPU has AVX2 (its contract).
        Self(unsafe { _mm256_set1_epi32(v as i32) }, PhantomData)
    }

    #[inline(always)]
    fn load(values: &[u64]) -> Self {
        let a: [u32; LANES32] = std::array::from_fn(|j| values.get(j).map_or(0, |&v| v as u32));
        Self(bytemuck::cast(a), PhantomData)
    }

    /// Zero-extended to u64 (`vpmovzxdq` per half), plus the offset.
    #[inline(always)]
    fn store_offset(self, offset: u64, out: &mut [u64]) {
        // SAFETY: `S: Avx2Scope`: the CPU has AVX2 (its contract).
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
        // SAFETY: `S: Avx2Scope`: the CPU has AVX2 (its contract).
        let sum = unsafe {
            let s = _mm256_add_epi32(self.0, y.0);
            _mm256_sub_epi32(s, _mm256_and_si256(_mm256_cmpgt_epi32(s, r_minus_1.0), r.0))
        };
        Self(sum, PhantomData)
    }
}
