//! The addressing and probe of the flat layouts: classic (every probe
//! anywhere in m bits) and partitioned (probe i in sub-array i of m/k bits).
//!
//! Probe i of a key is bit `i * stride + g_i`, where `g_i` is the scheme's
//! index over `[0, range)` ([`Progression`]: classic `range = m`,
//! `stride = 0`; partitioned `range = stride = m / k`). The per-range
//! constants are reduced once, when the filter is built, so a query costs
//! one hash, two multiply-highs and k rounds of additions: no division.
//! Each round is one modular addition on the chain `x_i = a + i*b` and,
//! for the enhanced schemes, one more for `f(i)` from a constant table
//! ([`Progression::for_each`]); classic (stride 0) skips the `i * stride`
//! offset.
//!
//! A query stops at the first clear bit: in a large filter each probe is a
//! cache miss, and a key not in the set is rejected after about two probes
//! (at 1%, half the bits are set) instead of k. The batch path computes
//! the k indices of 32 keys at a time with a SIMD kernel and prefetches
//! them first; it tests through [`Flat::test_index`], this file's one bit
//! test.

#![forbid(unsafe_code)]

pub(crate) mod classic;
pub(crate) mod partitioned;

use crate::hash::independent_hash;
use crate::scheme::{Progression, Scheme, reduce};
use crate::simd::flat::FlatSpec;
use crate::util::bits::{Words, WordsMut};

/// The addressing of a flat layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Flat {
    progression: Progression,
    stride: u64,
    k: u32,
}

impl Flat {
    /// `scheme` over `[0, range)` with probe i offset by `i * stride`.
    pub(crate) fn new(scheme: Scheme, range: u64, stride: u64, k: u32) -> Self {
        Self {
            progression: Progression::new(scheme, range),
            stride,
            k,
        }
    }

    /// What the batch index routine needs of this layout.
    pub(crate) fn kernel_spec(&self) -> FlatSpec {
        FlatSpec::from_parts(self.progression, self.stride, self.k)
    }

    /// Whether bit `index` is set: the flat layouts' one bit test.
    #[inline(always)]
    pub(crate) fn test_index<W: Words + ?Sized>(words: &W, index: u64) -> bool {
        words.bit(index)
    }

    /// Whether a two-hash key is possibly in `words` (stops at the first
    /// clear bit).
    ///
    /// Classic (stride 0) has its own loop without the partition offset
    /// `i * stride`: one branch per key instead of a multiply and an add
    /// per probe.
    #[inline(always)]
    pub(crate) fn test<W: Words + ?Sized>(&self, words: &W, hash: u128) -> bool {
        let stride = self.stride;
        if stride == 0 {
            self.progression
                .for_each(hash, self.k, |_, x| Self::test_index(words, x))
        } else {
            self.progression.for_each(hash, self.k, |i, x| {
                Self::test_index(words, u64::from(i) * stride + x)
            })
        }
    }

    /// Sets a two-hash key's bits in `words` (classic without the offset,
    /// as in [`test`](Self::test)).
    #[inline(always)]
    pub(crate) fn set<W: WordsMut + ?Sized>(&self, words: &mut W, hash: u128) {
        let stride = self.stride;
        if stride == 0 {
            self.progression.for_each(hash, self.k, |_, x| {
                words.set_bit(x);
                true
            });
        } else {
            self.progression.for_each(hash, self.k, |i, x| {
                words.set_bit(u64::from(i) * stride + x);
                true
            });
        }
    }

    /// Calls `f(bit)` for each probe of a key under the `Independent`
    /// scheme (k hash computations), stopping when `f` returns `false`.
    #[inline]
    fn for_each_independent(
        &self,
        bytes: &[u8],
        seed: u64,
        mut f: impl FnMut(u64) -> bool,
    ) -> bool {
        let range = self.progression.range();
        (0..self.k).all(|i| {
            f(u64::from(i) * self.stride + reduce(independent_hash(bytes, seed, i), range))
        })
    }

    /// [`test`](Self::test) for the `Independent` scheme.
    pub(crate) fn test_independent<W: Words + ?Sized>(
        &self,
        words: &W,
        bytes: &[u8],
        seed: u64,
    ) -> bool {
        self.for_each_independent(bytes, seed, |p| Self::test_index(words, p))
    }

    /// [`set`](Self::set) for the `Independent` scheme.
    pub(crate) fn set_independent<W: WordsMut + ?Sized>(
        &self,
        words: &mut W,
        bytes: &[u8],
        seed: u64,
    ) {
        self.for_each_independent(bytes, seed, |p| {
            words.set_bit(p);
            true
        });
    }

    /// The oracle: a key's bit positions in probe order, by the scheme's
    /// direct formula ([`crate::scheme::reference_indices`]; allocates).
    pub(crate) fn positions(&self, bytes: &[u8], family: crate::HashFamily, seed: u64) -> Vec<u64> {
        let p = &self.progression;
        crate::scheme::reference_indices_in(family, p.scheme(), bytes, seed, p.range(), self.k)
            .into_iter()
            .zip(0..)
            .map(|(x, i)| i * self.stride + x)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::hash128;
    use crate::scheme::Enhancement;

    /// `set` sets exactly the oracle's positions and `test` finds them, for
    /// classic (stride 0) and partitioned strides, on ranges where the
    /// enhanced schemes take the table path and where they fall back to
    /// the recurrence (`f(k - 1) >= range`).
    #[test]
    fn set_and_test_follow_the_oracle() {
        let schemes = [
            Scheme::DoubleHashing,
            Scheme::EnhancedDoubleHashing(Enhancement::Square),
            Scheme::EnhancedDoubleHashing(Enhancement::Cube),
        ];
        for scheme in schemes {
            for (range, k) in [
                (1, 1),
                (2, 3),
                (7, 5),
                (61, 8),
                (343, 8),
                (344, 8),
                (1021, 16),
                (4099, 64),
            ] {
                for partitioned in [false, true] {
                    let stride = if partitioned { range } else { 0 };
                    let flat = Flat::new(scheme, range, stride, k);
                    let bits = if partitioned {
                        range * u64::from(k)
                    } else {
                        range
                    };
                    for key in 0u64..50 {
                        let bytes = key.to_le_bytes();
                        let mut words = vec![0u64; bits.div_ceil(64) as usize];
                        flat.set(&mut words[..], hash128(&bytes, 9));
                        let mut want = vec![0u64; words.len()];
                        for p in flat.positions(&bytes, crate::HashFamily::Xxh3, 9) {
                            want[(p / 64) as usize] |= 1 << (p % 64);
                        }
                        assert_eq!(words, want, "{scheme:?} r={range} k={k} {partitioned}");
                        assert!(flat.test(&words[..], hash128(&bytes, 9)));
                    }
                }
            }
        }
    }
}
