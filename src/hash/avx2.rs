//! The short-input XXH3-128 formulas ([`super::short`]) on four keys per
//! AVX2 register, chosen at run time.
//!
//! AVX2 has no 64-bit multiply: `mul_lo` is three `vpmuludq` (32 x 32 ->
//! 64) and `mul_wide` four, with the carries of the middle products added
//! by hand. The byte swap is one `vpshufb`. Vectors are built from arrays
//! by value with `bytemuck::cast` (`__m256i` is `Pod`): no pointer loads,
//! no transmute of slices.

#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256i, _mm_cvtsi32_si128, _mm256_add_epi64, _mm256_and_si256, _mm256_mul_epu32,
    _mm256_permute2x128_si256, _mm256_set1_epi64x, _mm256_setr_epi8, _mm256_setr_epi64x,
    _mm256_shuffle_epi8, _mm256_sll_epi64, _mm256_srl_epi64, _mm256_unpackhi_epi64,
    _mm256_unpacklo_epi64, _mm256_xor_si256,
};

use super::Key;
use super::short::{HashLanes, MAX_LANES, Secrets, hash_into};
use crate::cpu::Avx2;

/// XXH3-128 of `keys` into `out` (same length) under the seed of `s`,
/// four keys per register where they share a length class up to 16 bytes.
#[inline]
pub(crate) fn hash_keys<K: Key>(_: Avx2, keys: &[K], s: &Secrets, out: &mut [u128]) {
    // SAFETY: the `Avx2` token exists only if the CPU has AVX2 (see
    // `crate::cpu`), the one precondition of calling a
    // `target_feature(enable = "avx2")` function; it uses references only.
    unsafe { hash_keys_avx2(keys, s, out) }
}

#[target_feature(enable = "avx2")]
fn hash_keys_avx2<K: Key>(keys: &[K], s: &Secrets, out: &mut [u128]) {
    hash_into::<U64x4, K>(keys, s, out);
}

// SAFETY (every `unsafe` block below): the intrinsics need AVX2. A `U64x4`
// is made only inside `hash_keys_avx2` (the type is private to this module
// and nothing else creates one), which runs only with an `Avx2` token in
// hand; the methods are `inline(always)`, so their intrinsics compile into
// that `target_feature` function. Every intrinsic works on registers only.

/// Four u64 lanes in an AVX2 register.
#[derive(Clone, Copy)]
struct U64x4(__m256i);

impl U64x4 {
    /// The low 32 bits of every lane, times the low 32 bits of `y`'s.
    #[inline(always)]
    fn mul_epu32(self, y: Self) -> Self {
        // SAFETY: AVX2 is present; see above.
        Self(unsafe { _mm256_mul_epu32(self.0, y.0) })
    }

    #[inline(always)]
    fn and(self, y: Self) -> Self {
        // SAFETY: AVX2 is present; see above.
        Self(unsafe { _mm256_and_si256(self.0, y.0) })
    }
}

impl HashLanes for U64x4 {
    const N: usize = 4;

    #[inline(always)]
    fn splat(v: u64) -> Self {
        // SAFETY: AVX2 is present; see above.
        Self(unsafe { _mm256_set1_epi64x(v as i64) })
    }

    /// Built in registers (`vmovq`/`vpinsrq`/`vinserti128`): a vector
    /// load of four values just stored one by one would wait for the
    /// stores (no store forwarding from several stores to one load).
    #[inline(always)]
    fn load(values: &[u64; MAX_LANES]) -> Self {
        let [a, b, c, d] = values.map(|v| v as i64);
        // SAFETY: AVX2 is present; see above.
        Self(unsafe { _mm256_setr_epi64x(a, b, c, d) })
    }

    /// Interleaved in registers into the u128s' little-endian layout
    /// (low, high, low, high, ...) and stored as two vectors.
    #[inline(always)]
    fn store_hashes(lo: Self, hi: Self, out: &mut [u128]) {
        // SAFETY: AVX2 is present; see above.
        let pairs: [u128; 4] = unsafe {
            let even = _mm256_unpacklo_epi64(lo.0, hi.0); // hash 0, hash 2
            let odd = _mm256_unpackhi_epi64(lo.0, hi.0); // hash 1, hash 3
            bytemuck::cast([
                _mm256_permute2x128_si256::<0x20>(even, odd),
                _mm256_permute2x128_si256::<0x31>(even, odd),
            ])
        };
        out.copy_from_slice(&pairs);
    }

    #[inline(always)]
    fn xor(self, y: Self) -> Self {
        // SAFETY: AVX2 is present; see above.
        Self(unsafe { _mm256_xor_si256(self.0, y.0) })
    }

    #[inline(always)]
    fn add(self, y: Self) -> Self {
        // SAFETY: AVX2 is present; see above.
        Self(unsafe { _mm256_add_epi64(self.0, y.0) })
    }

    #[inline(always)]
    fn shr(self, s: u32) -> Self {
        // SAFETY: AVX2 is present; see above. (A constant count compiles
        // to the immediate form.)
        Self(unsafe { _mm256_srl_epi64(self.0, _mm_cvtsi32_si128(s as i32)) })
    }

    #[inline(always)]
    fn shl(self, s: u32) -> Self {
        // SAFETY: AVX2 is present; see above.
        Self(unsafe { _mm256_sll_epi64(self.0, _mm_cvtsi32_si128(s as i32)) })
    }

    /// `a * b mod 2^64 = al*bl + ((ah*bl + al*bh) << 32)`.
    #[inline(always)]
    fn mul_lo(self, y: Self) -> Self {
        let cross = self.shr(32).mul_epu32(y).add(self.mul_epu32(y.shr(32)));
        self.mul_epu32(y).add(cross.shl(32))
    }

    /// The four 32 x 32 products, the middle ones' carries added into the
    /// high word by hand (each sum below fits in 64 bits).
    #[inline(always)]
    fn mul_wide(self, y: Self) -> (Self, Self) {
        let low32 = Self::splat(0xffff_ffff);
        let (ah, bh) = (self.shr(32), y.shr(32));
        let ll = self.mul_epu32(y);
        let lh = self.mul_epu32(bh);
        let hl = ah.mul_epu32(y);
        let hh = ah.mul_epu32(bh);
        let mid = ll.shr(32).add(lh.and(low32)).add(hl.and(low32));
        let lo = ll.and(low32).add(mid.shl(32));
        let hi = hh.add(lh.shr(32)).add(hl.shr(32)).add(mid.shr(32));
        (lo, hi)
    }

    #[inline(always)]
    fn mul32(self, y: Self) -> Self {
        self.mul_epu32(y)
    }

    #[inline(always)]
    fn swap_bytes(self) -> Self {
        // SAFETY: AVX2 is present; see above.
        Self(unsafe {
            let reverse = _mm256_setr_epi8(
                7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15,
                14, 13, 12, 11, 10, 9, 8,
            );
            _mm256_shuffle_epi8(self.0, reverse)
        })
    }
}
