//! CPU features, proven once by a token value.
//!
//! [`Avx2`] can only be made by [`Avx2::detect`], which asks the CPU (once
//! per process, cached). Every `#[target_feature(enable = "avx2")]`
//! function in the crate is called with a token in hand, so "this CPU has
//! AVX2" is checked by the type system rather than re-checked per call.
//! A leaf: it imports nothing from the crate.

#![forbid(unsafe_code)]

/// Proof that this CPU has AVX2 (x86_64 only; there is no way to make one
/// elsewhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// A token if the CPU has AVX2 (detected once per process).
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
