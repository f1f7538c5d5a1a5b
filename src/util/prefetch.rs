//! Software prefetch of one cache line of a word slice.
//!
//! The one `unsafe` of the batch paths: `_mm_prefetch` takes a raw pointer.
//! A prefetch is a hint: it never faults, never reads into a Rust value and
//! has no effect on program semantics; the pointer is nevertheless kept
//! inside the slice. Other architectures compile it to nothing.

#![allow(unsafe_code)]

/// Whether the batch paths prefetch the cache lines of the next chunk (a
/// filter's option: [`Builder::prefetch`](crate::Builder::prefetch),
/// [`BloomFilter::set_prefetch`](crate::BloomFilter::set_prefetch)).
/// Results never depend on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Prefetch {
    /// Prefetch when the filter is larger than [`Prefetch::AUTO_MIN_BYTES`].
    #[default]
    Auto,
    /// Always prefetch.
    Always,
    /// Never prefetch (the baseline of the no-prefetch benchmark figure).
    Never,
}

impl Prefetch {
    /// Filters above this size (bytes) are prefetched under
    /// [`Prefetch::Auto`]: 1 MiB, above a core's L2 cache on common x86
    /// cores.
    pub const AUTO_MIN_BYTES: usize = 1 << 20;

    /// How many chunks of keys (32 keys each) ahead of the probe the batch
    /// paths prefetch, unless a filter sets another distance
    /// ([`Builder::prefetch_distance`](crate::Builder::prefetch_distance)):
    /// one chunk, 32 to 63 keys ahead (chosen by measurement,
    /// docs/bench-notes/2026-11-23.md, "Prefetch distance").
    pub const DEFAULT_DISTANCE: u32 = 1;

    /// The largest prefetch distance a filter accepts, in chunks (256 keys:
    /// far more lines than a core can have in flight).
    pub const MAX_DISTANCE: u32 = 8;

    /// Checks a prefetch distance (chunks ahead): 1 to [`Prefetch::MAX_DISTANCE`],
    /// else an error naming `prefetch_distance`.
    pub(crate) fn check_distance(chunks: u32) -> Result<u32, crate::Error> {
        if (1..=Prefetch::MAX_DISTANCE).contains(&chunks) {
            Ok(chunks)
        } else {
            Err(crate::Error::invalid(
                "prefetch_distance",
                format!(
                    "must be between 1 and {} chunks, got {chunks}",
                    Prefetch::MAX_DISTANCE
                ),
            ))
        }
    }

    /// Whether to prefetch a filter of `bytes` bytes.
    #[inline]
    pub(crate) fn applies_to(self, bytes: usize) -> bool {
        match self {
            Prefetch::Auto => bytes > Prefetch::AUTO_MIN_BYTES,
            Prefetch::Always => true,
            Prefetch::Never => false,
        }
    }
}

/// Hints the CPU to fetch the cache line of `words[index]` into all cache
/// levels. An out-of-range index is ignored.
#[inline(always)]
pub(crate) fn prefetch(words: &[u64], index: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(word) = words.get(index) {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: SSE (which provides `prefetcht0`) is part of the x86_64
        // baseline, so the intrinsic's target feature is always present;
        // the pointer comes from a live reference, and a prefetch neither
        // faults nor reads or writes memory observably.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(word).cast::<i8>()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (words, index);
}
