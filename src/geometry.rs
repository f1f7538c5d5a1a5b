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

use crate::hash::{hash128, independent_hash, split};
use crate::kernel::scalar;
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
    /// The probes' range: m for classic, m/k for partitioned, the number of
    /// 512-bit blocks for the blocked layouts.
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
            Layout::Blocked | Layout::SplitBlock => (num_bits / 512, 0),
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
        if self.layout.is_blocked() && !self.scheme.is_two_hash() {
            let (block, mask) = self.independent_block_mask(bytes);
            return block_probes(block, &mask, f);
        }
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
        if self.layout.is_blocked() {
            let (block, mask) = self.block_mask(hash);
            return block_probes(block, &mask, f);
        }
        let stride = self.stride;
        for_each_index(self.scheme, hash, self.range, self.num_hashes, |i, x| {
            let x = u64::from(i) * stride + x;
            f((x / 64) as usize, 1 << (x % 64))
        })
    }

    /// Whether the layout splits blocks into segments.
    #[inline(always)]
    pub(crate) fn split(&self) -> bool {
        self.layout == Layout::SplitBlock
    }

    /// The block and in-block mask of a two-hash key (blocked layouts), by
    /// the scalar oracle.
    #[inline(always)]
    pub(crate) fn block_mask(&self, hash: u128) -> (u64, [u64; 8]) {
        let (h1, h2) = split(hash);
        (
            scalar::block_index(h1, self.range),
            scalar::block_mask(h2, self.num_hashes, self.split()),
        )
    }

    /// The block and in-block mask of a key under the `Independent` scheme
    /// (blocked layouts): block from hash 0, probe i from the low 32 bits of
    /// hash i.
    fn independent_block_mask(&self, bytes: &[u8]) -> (u64, [u64; 8]) {
        let mut mask = [0u64; 8];
        let mut block = 0;
        for i in 0..self.num_hashes {
            let h = independent_hash(bytes, self.seed, i);
            if i == 0 {
                block = scalar::block_index(h, self.range);
            }
            let p = scalar::position(h as u32, i, self.num_hashes, self.split());
            mask[(p / 64) as usize] |= 1 << (p % 64);
        }
        (block, mask)
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
        self.for_each_probe(bytes, |w, mask| words[w] & mask == mask)
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
        self.for_each_probe_hashed(hash, |w, mask| words[w] & mask == mask)
    }

    /// The bit positions of a key by the scheme's oracle, in probe order.
    pub(crate) fn reference_positions(&self, bytes: &[u8]) -> Vec<u64> {
        if self.layout.is_blocked() {
            let k = self.num_hashes;
            let (block, xs): (u64, Vec<u32>) = if self.scheme.is_two_hash() {
                let (h1, h2) = split(hash128(bytes, self.seed));
                let xs = (0..k).map(|i| scalar::lane_hash(h2, i)).collect();
                (scalar::block_index(h1, self.range), xs)
            } else {
                let hs: Vec<u64> = (0..k)
                    .map(|i| independent_hash(bytes, self.seed, i))
                    .collect();
                let xs = hs.iter().map(|&h| h as u32).collect();
                (scalar::block_index(hs[0], self.range), xs)
            };
            return (0..k)
                .map(|i| {
                    block * 512 + u64::from(scalar::position(xs[i as usize], i, k, self.split()))
                })
                .collect();
        }
        crate::scheme::reference_indices(self.scheme, bytes, self.seed, self.range, self.num_hashes)
            .into_iter()
            .enumerate()
            .map(|(i, x)| i as u64 * self.stride + x)
            .collect()
    }
}

/// Calls `f(word, mask)` for the nonzero words of a block's mask.
#[inline(always)]
fn block_probes(block: u64, mask: &[u64; 8], mut f: impl FnMut(usize, u64) -> bool) -> bool {
    let base = (block * 8) as usize;
    mask.iter()
        .enumerate()
        .all(|(w, &m)| m == 0 || f(base + w, m))
}
