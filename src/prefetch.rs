//! Software prefetch of one cache line of a word slice.
//!
//! The one `unsafe` of the batch paths: `_mm_prefetch` takes a raw pointer.
//! A prefetch is a hint: it never faults, never reads into a Rust value and
//! has no effect on program semantics; the pointer is nevertheless kept
//! inside the slice. Other architectures compile it to nothing.

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
