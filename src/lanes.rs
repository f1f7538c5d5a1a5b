//! Lanes: the values of one key, or of several keys side by side in a
//! vector. The index computations (the flat layouts' recurrences in
//! [`Progression::run`](crate::scheme::Progression::run), the blocked
//! layouts' in-block positions in
//! `layout::blocked::addressing::position_in`) and the kernels'
//! chunk loops (`kernel::flat_indices_in`, `kernel::block_positions_in`)
//! are written once over these traits; the scalar types implement them
//! here, the SIMD kernels for their vectors (`kernel::wide`,
//! `kernel::avx2`), each implementation a few one-line operations.

#![forbid(unsafe_code)]

/// The most lanes any implementation has (a chunk's scratch arrays).
pub(crate) const MAX_LANES: usize = 8;

/// u64 lanes: the flat layouts' indices.
pub(crate) trait Lanes64: Copy {
    /// Keys per value (at most [`MAX_LANES`]).
    const N: usize;
    /// Every lane `v`.
    fn splat(v: u64) -> Self;
    /// Lanes from the first [`N`](Self::N) values of `values`.
    fn load(values: &[u64]) -> Self;
    /// The first `out.len()` lanes (at most [`N`](Self::N)) into `out`.
    fn store(self, out: &mut [u64]);
    /// Lane-wise wrapping addition.
    fn add(self, y: Self) -> Self;
    /// Lane-wise `x + y mod r` for `x, y < r`, with `r_minus_1 = r - 1`.
    /// The scalar implementation is exact for every r; the vector ones for
    /// `r <= 2^46` (`MAX_BITS`; a kernel's spec is validated to it).
    fn add_mod(self, y: Self, r: Self, r_minus_1: Self) -> Self;
}

/// u32 lanes: the blocked layouts' in-block positions.
pub(crate) trait Lanes32: Copy {
    /// Keys per value (at most [`MAX_LANES`]).
    const N: usize;
    /// Every lane `v`.
    fn splat(v: u32) -> Self;
    /// Lanes from the first [`N`](Self::N) values of `values`.
    fn load(values: &[u32]) -> Self;
    /// The first `out.len()` lanes (at most [`N`](Self::N)) into `out`.
    fn store(self, out: &mut [u32]);
    /// Lane-wise wrapping addition.
    fn add(self, y: Self) -> Self;
    /// Lane-wise wrapping multiplication (the low 32 bits).
    fn mul(self, y: Self) -> Self;
    /// Lane-wise shift right by 16.
    fn shr16(self) -> Self;
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
    fn store(self, out: &mut [u64]) {
        if let Some(o) = out.first_mut() {
            *o = self;
        }
    }

    #[inline(always)]
    fn add(self, y: Self) -> Self {
        self.wrapping_add(y)
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

impl Lanes32 for u32 {
    const N: usize = 1;

    #[inline(always)]
    fn splat(v: u32) -> Self {
        v
    }

    #[inline(always)]
    fn load(values: &[u32]) -> Self {
        values[0]
    }

    #[inline(always)]
    fn store(self, out: &mut [u32]) {
        if let Some(o) = out.first_mut() {
            *o = self;
        }
    }

    #[inline(always)]
    fn add(self, y: Self) -> Self {
        self.wrapping_add(y)
    }

    #[inline(always)]
    fn mul(self, y: Self) -> Self {
        self.wrapping_mul(y)
    }

    #[inline(always)]
    fn shr16(self) -> Self {
        self >> 16
    }
}
