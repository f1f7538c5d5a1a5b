//! [`Geometry`]: a filter's parameters and its scalar probe path.
//!
//! Everything that answers or records membership over some storage of u64
//! words (the owned [`BloomFilter`](crate::BloomFilter), a zero-copy view of
//! a serialized filter, an atomic filter shared between threads) goes
//! through [`Geometry::for_each_probe`]: it turns a key into `(word, mask)`
//! pairs, and the storage decides whether to test, set or `fetch_or` them.
//! One scalar path means one place to get right; batch and SIMD paths are
//! tested against it.

#![forbid(unsafe_code)]

use crate::hash::{hash128, independent_hash};
use crate::layout::Layout;
use crate::scheme::{Scheme, for_each_index, reduce};

/// The parameters that determine where a key's bits are (everything but the
/// bits themselves).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    pub(crate) layout: Layout,
    pub(crate) scheme: Scheme,
    pub(crate) seed: u64,
    pub(crate) num_bits: u64,
    pub(crate) num_hashes: u32,
    /// The probes' range: m for classic, m/k for partitioned.
    pub(crate) range: u64,
    /// The offset between consecutive probes' ranges: 0 for classic, m/k for
    /// partitioned (probe i lands in `[i*stride, i*stride + range)`).
    pub(crate) stride: u64,
}

impl Geometry {
    /// The geometry of validated parameters (m >= k for partitioned, k >= 1).
    pub(crate) fn new(
        layout: Layout,
        scheme: Scheme,
        seed: u64,
        num_bits: u64,
        num_hashes: u32,
    ) -> Self {
        let (range, stride) = match layout {
            Layout::Classic => (num_bits, 0),
            Layout::Partitioned => {
                let part = num_bits / u64::from(num_hashes);
                (part, part)
            }
        };
        Self {
            layout,
            scheme,
            seed,
            num_bits,
            num_hashes,
            range,
            stride,
        }
    }

    /// Calls `f(word, mask)` for each probe of the key with these bytes,
    /// stopping early (returning `false`) when `f` does.
    #[inline(always)]
    pub(crate) fn for_each_probe(&self, bytes: &[u8], f: impl FnMut(usize, u64) -> bool) -> bool {
        if self.scheme.is_two_hash() {
            self.for_each_probe_hashed(hash128(bytes, self.seed), f)
        } else {
            let mut f = f;
            (0..self.num_hashes).all(|i| {
                let x = u64::from(i) * self.stride
                    + reduce(independent_hash(bytes, self.seed, i), self.range);
                f((x / 64) as usize, 1 << (x % 64))
            })
        }
    }

    /// As [`for_each_probe`](Self::for_each_probe) for a key given by its
    /// 128-bit hash; the scheme must be a two-hash scheme.
    #[inline(always)]
    pub(crate) fn for_each_probe_hashed(
        &self,
        hash: u128,
        mut f: impl FnMut(usize, u64) -> bool,
    ) -> bool {
        let stride = self.stride;
        for_each_index(self.scheme, hash, self.range, self.num_hashes, |i, x| {
            let x = u64::from(i) * stride + x;
            f((x / 64) as usize, 1 << (x % 64))
        })
    }

    /// Sets the key's bits in `words`.
    #[inline]
    pub(crate) fn insert_into(&self, words: &mut [u64], bytes: &[u8]) {
        self.for_each_probe(bytes, |w, mask| {
            words[w] |= mask;
            true
        });
    }

    /// Whether all of the key's bits are set in `words`.
    #[inline]
    pub(crate) fn contained_in(&self, words: &[u64], bytes: &[u8]) -> bool {
        self.for_each_probe(bytes, |w, mask| words[w] & mask != 0)
    }

    /// Sets the bits of a pre-hashed key in `words`.
    #[inline]
    pub(crate) fn insert_hashed_into(&self, words: &mut [u64], hash: u128) {
        self.for_each_probe_hashed(hash, |w, mask| {
            words[w] |= mask;
            true
        });
    }

    /// Whether all bits of a pre-hashed key are set in `words`.
    #[inline]
    pub(crate) fn hashed_contained_in(&self, words: &[u64], hash: u128) -> bool {
        self.for_each_probe_hashed(hash, |w, mask| words[w] & mask != 0)
    }

    /// The bit positions of a key by the scheme's oracle, in probe order.
    pub(crate) fn reference_positions(&self, bytes: &[u8]) -> Vec<u64> {
        crate::scheme::reference_indices(self.scheme, bytes, self.seed, self.range, self.num_hashes)
            .into_iter()
            .enumerate()
            .map(|(i, x)| i as u64 * self.stride + x)
            .collect()
    }
}
