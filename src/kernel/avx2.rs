//! The run-time-dispatched AVX2 kernel (x86_64).
//!
//! The lane algorithm of [`super::wide`], written with `core::arch`
//! intrinsics inside `#[target_feature(enable = "avx2")]` functions, so that
//! a library built for the baseline x86-64 target (what `cargo build
//! --release` gives users) still runs 8 x 32-bit multiplies (`vpmulld`) and
//! 4 x 64-bit compares (`vpcmpgtq`) where the CPU has AVX2. (`wide` alone
//! cannot: it picks its instructions at compile time.)
//!
//! Vectors are built from and read back into arrays by value with
//! `bytemuck::cast` (`__m256i` is `Pod`): no pointer loads, no transmute of
//! slices. The only `unsafe` is the call into the `target_feature`
//! functions, made after `is_x86_feature_detected!("avx2")` (cached in
//! [`super`]) said yes; without AVX2 the scalar oracle runs instead.

#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256i, _mm256_add_epi32, _mm256_add_epi64, _mm256_and_si256, _mm256_cmpgt_epi64,
    _mm256_mullo_epi32, _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_srli_epi32, _mm256_sub_epi64,
};

use super::scalar::store;
use super::scalar::{self, SALTS};
use super::{BlockSpec, FlatSpec, Kernel};
use crate::hash::split;
use crate::scheme::{Enhancement, Scheme};

const LANES32: usize = 8;
const LANES64: usize = 4;

pub(crate) fn block_positions(
    spec: &BlockSpec,
    hashes: &[u128],
    blocks_out: &mut [u64],
    positions_out: &mut [u32],
) {
    if !Kernel::Avx2.is_available() {
        return scalar::block_positions(spec, hashes, blocks_out, positions_out);
    }
    // SAFETY: the CPU supports AVX2 (checked just above by the cached
    // `is_x86_feature_detected!`), which is the only precondition of
    // calling a `#[target_feature(enable = "avx2")]` function; the function
    // itself uses no pointers.
    unsafe { block_positions_avx2(spec, hashes, blocks_out, positions_out) }
}

pub(crate) fn flat_indices(spec: &FlatSpec, hashes: &[u128], out: &mut [u64]) {
    if !Kernel::Avx2.is_available() {
        return scalar::flat_indices(spec, hashes, out);
    }
    // SAFETY: as in `block_positions`: AVX2 is present (checked above).
    unsafe { flat_indices_avx2(spec, hashes, out) }
}

#[target_feature(enable = "avx2")]
fn block_positions_avx2(
    spec: &BlockSpec,
    hashes: &[u128],
    blocks_out: &mut [u64],
    positions_out: &mut [u32],
) {
    let n = hashes.len();
    let seg = scalar::segment_bits(spec.k, spec.split);
    let segv = _mm256_set1_epi32(seg as i32);
    for (c, (hs, bs)) in hashes
        .chunks(LANES32)
        .zip(blocks_out.chunks_mut(LANES32))
        .enumerate()
    {
        let mut lo = [0u32; LANES32];
        let mut hi = [0u32; LANES32];
        for (j, &h) in hs.iter().enumerate() {
            let (h1, h2) = split(h);
            bs[j] = scalar::block_index(h1, spec.blocks);
            lo[j] = h2 as u32;
            hi[j] = (h2 >> 32) as u32;
        }
        let lo: __m256i = bytemuck::cast(lo);
        let hi: __m256i = bytemuck::cast(hi);
        let len = hs.len();
        for i in 0..spec.k {
            let x = if i % 2 == 0 { lo } else { hi };
            let y = _mm256_mullo_epi32(x, _mm256_set1_epi32(SALTS[i as usize] as i32));
            let t = _mm256_srli_epi32::<16>(_mm256_mullo_epi32(_mm256_srli_epi32::<16>(y), segv));
            let base = if spec.split { i * seg } else { 0 };
            let p: [u32; LANES32] =
                bytemuck::cast(_mm256_add_epi32(t, _mm256_set1_epi32(base as i32)));
            let at = i as usize * n + c * LANES32;
            store(&mut positions_out[at..at + len], &p);
        }
    }
}

/// `x + y mod r` in lanes for `x, y < r <= 2^46`: the signed 64-bit compare
/// is exact since every value is below 2^47.
#[inline]
#[target_feature(enable = "avx2")]
fn add_mod(x: __m256i, y: __m256i, r: __m256i, r_minus_1: __m256i) -> __m256i {
    let s = _mm256_add_epi64(x, y);
    _mm256_sub_epi64(s, _mm256_and_si256(_mm256_cmpgt_epi64(s, r_minus_1), r))
}

#[target_feature(enable = "avx2")]
fn flat_indices_avx2(spec: &FlatSpec, hashes: &[u128], out: &mut [u64]) {
    let (k, n) = (spec.k as usize, hashes.len());
    let prog = &spec.progression;
    let range = prog.range();
    let (one, two, six) = prog.constants();
    let splat = |v: u64| _mm256_set1_epi64x(v as i64);
    let (r, r1) = (splat(range), splat(range - 1));
    for (c, hs) in hashes.chunks(LANES64).enumerate() {
        let mut a = [0u64; LANES64];
        let mut b = [0u64; LANES64];
        for (j, &h) in hs.iter().enumerate() {
            (a[j], b[j]) = prog.start_and_stride(h);
        }
        let mut x: __m256i = bytemuck::cast(a);
        let b: __m256i = bytemuck::cast(b);
        let len = hs.len();
        let mut emit = |i: usize, x: __m256i| {
            let v: [u64; LANES64] =
                bytemuck::cast(_mm256_add_epi64(x, splat(i as u64 * spec.stride)));
            let at = i * n + c * LANES64;
            store(&mut out[at..at + len], &v);
        };
        match prog.scheme() {
            Scheme::EnhancedDoubleHashing(Enhancement::Square) => {
                let two = splat(two);
                let mut y = add_mod(b, splat(one), r, r1);
                for i in 0..k {
                    emit(i, x);
                    x = add_mod(x, y, r, r1);
                    y = add_mod(y, two, r, r1);
                }
            }
            Scheme::EnhancedDoubleHashing(Enhancement::Cube) => {
                let six = splat(six);
                let mut y = add_mod(b, splat(one), r, r1);
                let mut z = six;
                for i in 0..k {
                    emit(i, x);
                    x = add_mod(x, y, r, r1);
                    y = add_mod(y, z, r, r1);
                    z = add_mod(z, six, r, r1);
                }
            }
            _ => {
                for i in 0..k {
                    emit(i, x);
                    x = add_mod(x, b, r, r1);
                }
            }
        }
    }
}
