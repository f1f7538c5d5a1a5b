//! XXH3-128 of four short keys at once with AVX-512 DQ and VL (x86_64),
//! chosen at run time: `hash_batch` on the AVX-512 kernel (the filters'
//! batch pipelines keep the scalar formulas, which run beside the vector
//! probe on other ports: `batch::hash_keys`).
//!
//! The short-input formulas are `short`'s, written once over
//! [`HashLanes`]; this module is their four-lane implementation, where
//! AVX2 alone had none: `vpmullq` (AVX-512 DQ, on 256-bit registers with
//! VL) is the 64-bit multiply per lane, and the 64 x 64 -> 128 multiply of
//! the 4-16-byte formulas is four `vpmuludq` (32 x 32 -> 64) and their
//! carries. Keys go four at a time; a group whose keys are all in one
//! length class (every group, for a fixed-width key type: `u64` keys are
//! all 8 bytes) runs the class's formula on the four lanes, any other
//! group (mixed lengths, keys over 16 bytes) `short::hash_one` per key.
//! Bit for bit the same values (tested against `xxhash-rust` for every
//! length 0 to 256 and random seeds, and by the `hash_batch` fuzz target).
//!
//! # Why 256-bit registers
//!
//! Eight keys per 512-bit register measured faster alone (`hash/u64`) but
//! made the whole batch slower on a Cascade Lake Xeon: 512-bit multiplies
//! lower that core's clock for every instruction around them (the blocked
//! `contains_batch` measured slower with the hash alone changed). On
//! 256-bit registers the multiplies run at the clock AVX2 code runs at,
//! and the hash is still faster than the scalar formulas there
//! (docs/bench-notes/2026-11-27.md, "AVX-512").
//!
//! # Where the `unsafe` rests
//!
//! As in `kernel::avx2`: the lane type takes a parameter `S:
//! Avx512Scope`, an `unsafe trait` whose contract is that the CPU has the
//! AVX-512 subsets wherever a lane value over `S` exists. Its one
//! implementation is a type declared inside the body of
//! `hash_into_avx512`, a `target_feature` function called only with an
//! [`Avx512`] token. Vectors are built from and read back into arrays by
//! value with `bytemuck::cast`, never by transmuting slices.

#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256i, _mm_cvtsi32_si128, _mm256_add_epi64, _mm256_and_si256, _mm256_mul_epu32,
    _mm256_mullo_epi64, _mm256_or_si256, _mm256_permutex2var_epi64, _mm256_set1_epi64x,
    _mm256_setr_epi64x, _mm256_shuffle_epi8, _mm256_sll_epi64, _mm256_srl_epi64, _mm256_srli_epi64,
    _mm256_xor_si256,
};
use core::marker::PhantomData;

use super::Key;
use super::short::{Class, HashLanes, Secrets, hash_lanes, hash_one, short_input};
use crate::simd::cpu::Avx512;

/// Keys per group: 64-bit lanes of a 256-bit register.
const LANES: usize = 4;

/// XXH3-128 of the key `key_of` gives for each item, into `out` (the same
/// length), four keys at a time with AVX-512 VL; `token` proves the CPU
/// has it.
#[inline]
pub(crate) fn hash_into_by<T, K: Key + ?Sized>(
    token: Avx512,
    items: &[T],
    key_of: impl Fn(&T) -> &K,
    s: &Secrets,
    out: &mut [u128],
) {
    let _ = token;
    // SAFETY: the token proves the CPU has AVX-512 F, DQ, BW and VL, the
    // one precondition of calling this `target_feature` function; it uses
    // references only, indexing checked.
    unsafe { hash_into_avx512(items, key_of, s, out) }
}

#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
fn hash_into_avx512<T, K: Key + ?Sized>(
    items: &[T],
    key_of: impl Fn(&T) -> &K,
    s: &Secrets,
    out: &mut [u128],
) {
    /// The scope of this call: the lanes below exist only in it.
    #[derive(Clone, Copy)]
    enum ThisCall {}
    // SAFETY: `ThisCall` is declared in this body and named nowhere else,
    // and no lane value over it outlives this call (the lanes are locals
    // of the loop below; only arrays are stored), so they exist only
    // while this `target_feature` function runs, and `hash_into_by` calls
    // it only with an `Avx512` token: the CPU has the features wherever
    // they are used.
    unsafe impl Avx512Scope for ThisCall {}

    let (groups, rest) = items.as_chunks::<LANES>();
    let (outs, out_rest) = out.as_chunks_mut::<LANES>();
    for (group, o) in groups.iter().zip(outs) {
        let mut class = [Class::Empty; LANES];
        let mut words = [[0u64; LANES]; 3];
        for (j, item) in group.iter().enumerate() {
            let (c, w) = key_of(item).with_bytes(short_input);
            class[j] = c;
            for (lane, v) in words.iter_mut().zip(w) {
                lane[j] = v;
            }
        }
        let first = class[0];
        if first != Class::Long && class.iter().all(|&c| c == first) {
            let w = words.map(U64x4::<ThisCall>::from_array);
            let (lo, hi) = hash_lanes(first, w, s);
            *o = interleave(lo, hi);
        } else {
            for (item, h) in group.iter().zip(o.iter_mut()) {
                *h = key_of(item).with_bytes(|bytes| hash_one(bytes, s));
            }
        }
    }
    for (item, h) in rest.iter().zip(out_rest) {
        *h = key_of(item).with_bytes(|bytes| hash_one(bytes, s));
    }
}

/// The type-level proof that this CPU has AVX-512 F, DQ, BW and VL,
/// carried by [`U64x4`]: its safe methods run those instructions for any
/// `S: Avx512Scope`. Uninhabited implementations are enough (it is used
/// only as a `PhantomData` parameter).
///
/// # Safety
///
/// Implement it only where the CPU has the features wherever a lane value
/// over the implementing type is made or used: for a type declared inside
/// the body of a `#[target_feature(enable =
/// "avx512f,avx512dq,avx512bw,avx512vl")]` function and named nowhere
/// else, whose callers hold an [`Avx512`] token, when no lane value over
/// it outlives a call of that function.
unsafe trait Avx512Scope: Copy {}

// The proof costs nothing: the lane type is its one register.
const _: () = assert!(size_of::<U64x4<()>>() == size_of::<__m256i>());

/// Four u64 lanes in a 256-bit register, run with AVX-512 DQ and VL; `S`
/// proves the CPU has them.
/// Every method is `inline(always)`, so its intrinsics compile into the
/// `target_feature` function that uses the lanes (not a call per
/// operation).
#[derive(Clone, Copy)]
struct U64x4<S>(__m256i, PhantomData<S>);

impl<S: Avx512Scope> U64x4<S> {
    #[inline(always)]
    fn from_array(a: [u64; LANES]) -> Self {
        Self(bytemuck::cast(a), PhantomData)
    }
}

/// The four 128-bit hashes whose low halves are `lo` and high halves `hi`,
/// in key order (`vpermt2q` twice: lane j of each to u128 j).
#[inline(always)]
fn interleave<S: Avx512Scope>(lo: U64x4<S>, hi: U64x4<S>) -> [u128; LANES] {
    // SAFETY: `S: Avx512Scope`: the CPU has AVX-512 F (its contract).
    let pairs = unsafe {
        [
            _mm256_permutex2var_epi64(lo.0, _mm256_setr_epi64x(0, 4, 1, 5), hi.0),
            _mm256_permutex2var_epi64(lo.0, _mm256_setr_epi64x(2, 6, 3, 7), hi.0),
        ]
    };
    // A u128 is its low word then its high word in memory (little-endian
    // x86_64), which is the order the permutes made.
    bytemuck::cast(pairs)
}

impl<S: Avx512Scope> HashLanes for U64x4<S> {
    #[inline(always)]
    fn splat(v: u64) -> Self {
        // SAFETY: `S: Avx512Scope`: the CPU has AVX-512 F (its contract).
        Self(unsafe { _mm256_set1_epi64x(v as i64) }, PhantomData)
    }

    #[inline(always)]
    fn xor(self, y: Self) -> Self {
        // SAFETY: as in `splat`.
        Self(unsafe { _mm256_xor_si256(self.0, y.0) }, PhantomData)
    }

    #[inline(always)]
    fn add(self, y: Self) -> Self {
        // SAFETY: as in `splat`.
        Self(unsafe { _mm256_add_epi64(self.0, y.0) }, PhantomData)
    }

    /// A shift by a count in a register, which the compiler turns into
    /// the immediate form: every caller passes a constant.
    #[inline(always)]
    fn shr(self, s: u32) -> Self {
        // SAFETY: as in `splat`.
        Self(
            unsafe { _mm256_srl_epi64(self.0, _mm_cvtsi32_si128(s as i32)) },
            PhantomData,
        )
    }

    #[inline(always)]
    fn shl(self, s: u32) -> Self {
        // SAFETY: as in `splat`.
        Self(
            unsafe { _mm256_sll_epi64(self.0, _mm_cvtsi32_si128(s as i32)) },
            PhantomData,
        )
    }

    /// `vpmullq` (AVX-512 DQ).
    #[inline(always)]
    fn mul_lo(self, y: Self) -> Self {
        // SAFETY: `S: Avx512Scope`: the CPU has AVX-512 DQ (its contract).
        Self(unsafe { _mm256_mullo_epi64(self.0, y.0) }, PhantomData)
    }

    /// Schoolbook on 32-bit halves: four `vpmuludq`, the middle column's
    /// carry into the high word. (A `vpmullq` for the low word would cost
    /// three more micro-ops than the two adds it saves.)
    #[inline(always)]
    fn mul_wide(self, y: Self) -> (Self, Self) {
        // SAFETY: `S: Avx512Scope`: the CPU has AVX-512 F (its contract).
        let (lo, hi) = unsafe {
            let low32 = _mm256_set1_epi64x(0xffff_ffff);
            let (a_hi, b_hi) = (
                _mm256_srli_epi64::<32>(self.0),
                _mm256_srli_epi64::<32>(y.0),
            );
            let ll = _mm256_mul_epu32(self.0, y.0);
            let lh = _mm256_mul_epu32(self.0, b_hi);
            let hl = _mm256_mul_epu32(a_hi, y.0);
            let hh = _mm256_mul_epu32(a_hi, b_hi);
            // Bits 32..96 of the product: at most 3 (2^32 - 1), no carry
            // out of 64 bits.
            let mid = _mm256_add_epi64(
                _mm256_srli_epi64::<32>(ll),
                _mm256_add_epi64(_mm256_and_si256(lh, low32), _mm256_and_si256(hl, low32)),
            );
            let lo = _mm256_or_si256(
                _mm256_and_si256(ll, low32),
                _mm256_sll_epi64(mid, _mm_cvtsi32_si128(32)),
            );
            let hi = _mm256_add_epi64(
                _mm256_add_epi64(hh, _mm256_srli_epi64::<32>(mid)),
                _mm256_add_epi64(_mm256_srli_epi64::<32>(lh), _mm256_srli_epi64::<32>(hl)),
            );
            (lo, hi)
        };
        (Self(lo, PhantomData), Self(hi, PhantomData))
    }

    /// `vpmuludq`: the low 32 bits of each lane, 32 x 32 -> 64.
    #[inline(always)]
    fn mul32(self, y: Self) -> Self {
        // SAFETY: as in `splat`.
        Self(unsafe { _mm256_mul_epu32(self.0, y.0) }, PhantomData)
    }

    /// `vpshufb` (AVX-512 BW) reversing the bytes of each 64-bit lane.
    #[inline(always)]
    fn swap_bytes(self) -> Self {
        let rev: [u8; 32] = std::array::from_fn(|i| (i & !7) as u8 % 16 + 7 - (i % 8) as u8);
        // SAFETY: `S: Avx512Scope`: the CPU has AVX-512 BW (its contract).
        Self(
            unsafe { _mm256_shuffle_epi8(self.0, bytemuck::cast(rev)) },
            PhantomData,
        )
    }
}
