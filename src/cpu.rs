//! CPU features, proven once by a token value.
//!
//! [`Avx2`] can be made only by [`Avx2::detect`], which asks the CPU once
//! per process (cached). Every call into a `#[target_feature(enable =
//! "avx2")]` function in the crate is made with a token in hand (the
//! blocked layouts' probe stores one when a filter is built; the flat index
//! kernel gets one per call), so "this CPU has AVX2" is a value the types
//! carry, checked once. A leaf: it imports nothing from the crate.

#![forbid(unsafe_code)]

/// Proof that this CPU has AVX2. Holding one is what makes calling the
/// crate's `target_feature(enable = "avx2")` functions sound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// A token if the CPU has AVX2 (x86_64 only; detected once, cached).
    #[inline]
    pub(crate) fn detect() -> Option<Self> {
        avx2_detected().then_some(Avx2(()))
    }
}

/// Whether the CPU has AVX2 (detected once, cached).
#[inline]
pub(crate) fn avx2_detected() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static DETECTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *DETECTED.get_or_init(|| std::arch::is_x86_feature_detected!("avx2"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
