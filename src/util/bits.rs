//! The storage behind every filter, and how probes read and write it.
//!
//! [`AlignedWords`]: zeroed, 64-byte-aligned blocks of 8 x u64. All layouts
//! store their bits here (and the Count-Min sketch its 64-bit counters,
//! for the same alignment and fallible zeroed allocation). The traits
//! [`Words`], [`WordsMut`] and [`Line`] are the bit access every layout's
//! probe goes through, over owned, borrowed (view) or atomic words.
//!
//! Classic and partitioned filters see the words as a flat `[u64]` (bit
//! `i` is bit `i % 64` of word `i / 64`); blocked layouts see them as
//! `[Block]`, one cache line each. The words beyond the
//! layout's last bit are padding and stay zero, so counting ones over all
//! words counts the filter's bits.
//!
//! # Allocation
//!
//! An impossible size must be an `Err`, not an abort, and a filter of
//! hundreds of MiB should be zeroed by the allocator, not filled after.
//! Vec has no fallible zeroed constructor; bytemuck's
//! `try_zeroed_slice_box` is one (the global allocator's `alloc_zeroed`),
//! with no `unsafe` here (see [`AlignedWords::zeroed`] for when its pages
//! are zeroed lazily).

#![forbid(unsafe_code)]

use bytemuck::{Pod, Zeroable};

use crate::Error;

/// One cache line of bits.
#[derive(Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C, align(64))]
pub struct Block(pub [u64; 8]);

impl Block {
    /// Bits per block.
    pub const BITS: u64 = 512;
}

/// 64-byte-aligned, zero-initialised u64 storage (a filter's bits, a
/// sketch's counters).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct AlignedWords {
    blocks: Vec<Block>,
}

/// Shows the size only: a filter's bits are never dumped.
impl std::fmt::Debug for AlignedWords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedWords({} blocks)", self.blocks.len())
    }
}

impl AlignedWords {
    /// A zeroed array of at least `num_bits` bits (rounded up to whole
    /// blocks). `name` is the parameter reported if allocation fails.
    pub(crate) fn zeroed(num_bits: u64, name: &'static str) -> Result<Self, Error> {
        let blocks = num_bits.div_ceil(Block::BITS);
        let too_big = || Error::Allocation {
            name,
            bytes: u128::from(blocks) * 64,
        };
        let len = usize::try_from(blocks).map_err(|_| too_big())?;
        // bytemuck 1.25's `try_zeroed_slice_box` is the global allocator's
        // `alloc_zeroed` with `Layout::array::<Block>(len)` (a dangling box
        // for len 0), `Err` if the layout overflows or the allocator returns
        // null; no memset of its own, so the pages are zeroed lazily exactly
        // when the global allocator's `alloc_zeroed` does that. (std's
        // `System` on Unix does only for alignments up to 16, through
        // `calloc`; for `Block`'s 64 it allocates and then memsets, so a
        // large filter is resident from the start, as it was when this
        // called `alloc_zeroed` itself.) The box becomes the Vec without
        // copying.
        let blocks = bytemuck::allocation::try_zeroed_slice_box::<Block>(len)
            .map_err(|()| too_big())?
            .into_vec();
        Ok(Self { blocks })
    }

    /// The storage as little-endian-numbered words.
    #[inline]
    pub(crate) fn words(&self) -> &[u64] {
        bytemuck::cast_slice(&self.blocks)
    }

    /// The storage as mutable words.
    #[inline]
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        bytemuck::cast_slice_mut(&mut self.blocks)
    }

    /// Wraps blocks read or converted elsewhere (the format and the atomic
    /// filter); the caller keeps the padding zero.
    pub(crate) fn from_blocks(blocks: Vec<Block>) -> Self {
        Self { blocks }
    }

    /// The blocks, without copying them.
    pub(crate) fn into_blocks(self) -> Vec<Block> {
        self.blocks
    }

    /// Clears every bit.
    pub(crate) fn clear(&mut self) {
        self.blocks.fill(Block::zeroed());
    }
}

/// Read access to a filter's bits, whatever holds them: owned words, the
/// little-endian payload of a [`FilterView`](crate::FilterView), or the
/// atomic words of an [`AtomicBloomFilter`](crate::AtomicBloomFilter).
/// Each layout's probe tests bits through this, so one bit test serves
/// every storage. Bit `i` is bit `i % 64` of word `i / 64`.
pub(crate) trait Words {
    /// One 512-bit block of this storage, borrowed.
    type Line<'a>: Line
    where
        Self: 'a;

    /// Word `i` (panics when out of range, never UB).
    fn word(&self, i: usize) -> u64;

    /// Block `b` (one bounds check for the block; none per word after).
    fn line(&self, b: usize) -> Self::Line<'_>;

    /// The storage as plain native words, when it is (the fused vector
    /// single-key probe reads those directly); `None` otherwise.
    #[inline(always)]
    fn as_plain(&self) -> Option<&[u64]> {
        None
    }

    /// Whether bit `p` is set.
    #[inline(always)]
    fn bit(&self, p: u64) -> bool {
        self.word((p / 64) as usize) >> (p % 64) & 1 == 1
    }
}

/// The 8 words of one block, as a probe reads them.
pub(crate) trait Line {
    /// Whether [`with_words`](Self::with_words) lends the block's own
    /// memory; `false` where it assembles a copy (atomic words, little-endian
    /// words on a big-endian target), which a vector test would wait on.
    const IN_PLACE: bool;

    /// Word `w & 7` of the block.
    fn get(&self, w: usize) -> u64;

    /// Calls `f` with all 8 words (for the vector line test). Owned words
    /// pass a reference to the filter's own memory: the vector line test loads
    /// straight from it (a copy through the stack, written as four 16-byte
    /// stores and read as two 32-byte loads, defeats store forwarding and
    /// cost as much as the whole probe).
    fn with_words<R>(&self, f: impl FnOnce(&[u64; 8]) -> R) -> R;
}

impl Line for &[u64; 8] {
    const IN_PLACE: bool = true;

    #[inline(always)]
    fn get(&self, w: usize) -> u64 {
        self[w & 7]
    }

    #[inline(always)]
    fn with_words<R>(&self, f: impl FnOnce(&[u64; 8]) -> R) -> R {
        f(self)
    }
}

/// Write access: bits are only ever set (an OR), never cleared, so plain
/// and atomic storage implement it alike.
pub(crate) trait WordsMut {
    /// The storage as plain words, when it is plain words (the vector
    /// probes write those directly); `None` for atomic words.
    #[inline(always)]
    fn plain(&mut self) -> Option<&mut [u64]> {
        None
    }

    /// ORs `mask` into word `i`.
    fn or(&mut self, i: usize, mask: u64);

    /// ORs `mask` into the 8 words of block `b`.
    fn or_line(&mut self, b: usize, mask: [u64; 8]);

    /// Sets bit `p`.
    #[inline(always)]
    fn set_bit(&mut self, p: u64) {
        self.or((p / 64) as usize, 1 << (p % 64));
    }
}

impl Words for [u64] {
    type Line<'a> = &'a [u64; 8];

    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        self[i]
    }

    #[inline(always)]
    fn line(&self, b: usize) -> &[u64; 8] {
        &self.as_chunks::<8>().0[b]
    }

    #[inline(always)]
    fn as_plain(&self) -> Option<&[u64]> {
        Some(self)
    }
}

impl WordsMut for [u64] {
    #[inline(always)]
    fn plain(&mut self) -> Option<&mut [u64]> {
        Some(self)
    }

    #[inline(always)]
    fn or(&mut self, i: usize, mask: u64) {
        self[i] |= mask;
    }

    #[inline(always)]
    fn or_line(&mut self, b: usize, mask: [u64; 8]) {
        // Eight unconditional ORs (two vector ORs on AVX2): no branch on
        // which words the key touches.
        for (w, m) in self.as_chunks_mut::<8>().0[b].iter_mut().zip(mask) {
            *w |= m;
        }
    }
}

/// Words stored little-endian (a serialized payload), read on any target.
#[derive(Clone, Copy)]
pub(crate) struct LeWords<'a>(pub(crate) &'a [u64]);

impl Words for LeWords<'_> {
    type Line<'a>
        = LeLine<'a>
    where
        Self: 'a;

    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        u64::from_le(self.0[i])
    }

    #[inline(always)]
    fn line(&self, b: usize) -> LeLine<'_> {
        LeLine(&self.0.as_chunks::<8>().0[b])
    }

    /// Little-endian words are the native words on a little-endian target.
    #[inline(always)]
    fn as_plain(&self) -> Option<&[u64]> {
        cfg!(target_endian = "little").then_some(self.0)
    }
}

/// A block of little-endian words.
#[derive(Clone, Copy)]
pub(crate) struct LeLine<'a>(&'a [u64; 8]);

impl Line for LeLine<'_> {
    const IN_PLACE: bool = cfg!(target_endian = "little");

    #[inline(always)]
    fn get(&self, w: usize) -> u64 {
        u64::from_le(self.0[w & 7])
    }

    #[inline(always)]
    fn with_words<R>(&self, f: impl FnOnce(&[u64; 8]) -> R) -> R {
        if cfg!(target_endian = "little") {
            f(self.0)
        } else {
            f(&self.0.map(u64::from_le))
        }
    }
}

/// The set bits in the bit range `[start, end)` of the words `word(i)`
/// (plain words, or the OR of two filters' words without building it).
pub(crate) fn count_ones_in(word: impl Fn(usize) -> u64, start: u64, end: u64) -> u64 {
    if start >= end {
        return 0;
    }
    let (first, last) = ((start / 64) as usize, ((end - 1) / 64) as usize);
    let low = u64::MAX << (start % 64);
    let high = u64::MAX >> (63 - (end - 1) % 64);
    if first == last {
        return u64::from((word(first) & low & high).count_ones());
    }
    let middle: u64 = (first + 1..last)
        .map(|i| u64::from(word(i).count_ones()))
        .sum();
    u64::from((word(first) & low).count_ones())
        + middle
        + u64::from((word(last) & high).count_ones())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_ones_in_matches_naive() {
        let words = [
            0xdead_beef_0123_4567u64,
            u64::MAX,
            0x8000_0000_0000_0001,
            0xf0f0,
        ];
        let bit = |i: u64| words[(i / 64) as usize] >> (i % 64) & 1;
        for start in 0..256u64 {
            for end in start..=256u64 {
                let naive: u64 = (start..end).map(bit).sum();
                assert_eq!(
                    count_ones_in(|i| words[i], start, end),
                    naive,
                    "[{start}, {end})"
                );
            }
        }
    }

    #[test]
    fn zeroed_is_aligned_and_sized() {
        for bits in [1u64, 64, 511, 512, 513, 100_000] {
            let a = AlignedWords::zeroed(bits, "bits").unwrap();
            assert_eq!(a.words().len() as u64, bits.div_ceil(512) * 8);
            assert_eq!(a.words().as_ptr() as usize % 64, 0);
            assert!(a.words().iter().all(|&w| w == 0));
        }
        assert!(AlignedWords::zeroed(0, "bits").unwrap().words().is_empty());
    }

    #[test]
    fn impossible_size_is_an_error() {
        let err = AlignedWords::zeroed(u64::MAX, "bits").unwrap_err();
        assert!(err.to_string().contains("`bits`"), "{err}");
    }

    #[test]
    fn count_and_clear() {
        let mut a = AlignedWords::zeroed(1000, "bits").unwrap();
        for i in [0usize, 63, 64, 511, 512, 999] {
            a.words_mut()[i / 64] |= 1 << (i % 64);
        }
        let ones = |a: &AlignedWords| a.words().iter().map(|w| w.count_ones()).sum::<u32>();
        assert_eq!(ones(&a), 6);
        a.clear();
        assert_eq!(ones(&a), 0);
    }
}
