//! Lanes: the index values of one key, or of several keys side by side in
//! a vector. The flat layouts' index computation
//! ([`Progression::lanes`](crate::scheme::Progression::lanes): the chain
//! and the `f(i)` table, or the recurrences) and the kernels' chunk loop
//! (`flat::flat_indices_in`) are written once over [`Lanes64`]; `u64`
//! implements it here (the single-key path and the scalar kernel), the
//! SIMD kernels for their vectors (`kernel::wide`, `kernel::avx2`), each
//! implementation a few one-line operations.

#![forbid(unsafe_code)]

/// The most lanes any implementation has (a chunk's scratch arrays).
pub(crate) const MAX_LANES: usize = 8;

/// The largest range the 32-bit index lanes serve: `x + y` of two values
/// below it stays below 2^31, so a signed 32-bit compare (SSE2's
/// `pcmpgtd`, AVX2's `vpcmpgtd`) reduces it. 2^30 bits is a 128 MiB
/// filter.
pub(crate) const NARROW_MAX_RANGE: u64 = 1 << 30;

/// Index lanes of the flat layouts: u64, or u32 where the range is at
/// most [`NARROW_MAX_RANGE`] (twice the keys per vector; the kernels pick
/// by the range). Values in and out are u64 either way.
pub(crate) trait Lanes64: Copy {
    /// Keys per value (at most [`MAX_LANES`]).
    const N: usize;
    /// Every lane `v`.
    fn splat(v: u64) -> Self;
    /// Lanes from the first [`N`](Self::N) values of `values` (each below
    /// the range).
    fn load(values: &[u64]) -> Self;
    /// The lanes plus `offset` (a partition's first bit, up to `MAX_BITS`),
    /// widened to u64 where the lanes are narrower, into the first
    /// `out.len()` (at most [`N`](Self::N)) values of `out`.
    fn store_offset(self, offset: u64, out: &mut [u64]);
    /// Lane-wise `x + y mod r` for `x, y < r`, with `r_minus_1 = r - 1`.
    /// The scalar implementation is exact for every r; the vector ones for
    /// `r <= 2^46` (`MAX_BITS`; a kernel's spec is validated to it).
    fn add_mod(self, y: Self, r: Self, r_minus_1: Self) -> Self;
    /// [`add_mod`](Self::add_mod) for `r <= 2^63` (no carry out of 64
    /// bits to track); the vector implementations are the same operation.
    #[inline(always)]
    fn add_mod_small(self, y: Self, r: Self, r_minus_1: Self) -> Self {
        self.add_mod(y, r, r_minus_1)
    }
}

impl Lanes64 for u64 {
    const N: usize = 1;

    #[inline(always)]
    fn splat(v: u64) -> Self {
        v
    }

    #[inline(always)]
    fn load(values: &[u64]) -> Self {
        values[0]
    }

    #[inline(always)]
    fn store_offset(self, offset: u64, out: &mut [u64]) {
        if let Some(o) = out.first_mut() {
            *o = self + offset;
        }
    }

    /// One add and a conditional subtract: `x + y < 2^64` for `x, y < r
    /// <= 2^63`.
    #[inline(always)]
    fn add_mod_small(self, y: Self, r: Self, _: Self) -> Self {
        let s = self + y;
        if s >= r { s - r } else { s }
    }

    #[inline(always)]
    fn add_mod(self, y: Self, r: Self, _: Self) -> Self {
        // Exact for any r: the carry out of 64 bits counts as >= r.
        let (s, carry) = self.overflowing_add(y);
        if carry || s >= r {
            s.wrapping_sub(r)
        } else {
            s
        }
    }
}
