//! CPU features, proven once by a token value.
//!
//! [`Avx2`] can be made only by [`Avx2::detect`], and [`Avx512`] only by
//! [`Avx512::detect`], each asking the CPU once per process (cached). Every
//! call into a `#[target_feature(enable = ...)]` function in the crate is
//! made with the matching token in hand (the blocked layouts' probe stores
//! one when a filter is built; the flat index routine and the batched hash
//! get one per call), so "this CPU has AVX2 / AVX-512" is a value the types
//! carry, checked once. A leaf: it imports nothing from the crate.

#![forbid(unsafe_code)]

/// Proof that this CPU has AVX2. Holding one is what makes calling the
/// crate's `target_feature(enable = "avx2")` functions sound.
// Made and used on x86_64 only (the intrinsics modules).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Avx2(());

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
impl Avx2 {
    /// A token if the CPU has AVX2 (x86_64 only; detected once, cached).
    #[inline]
    pub(crate) fn detect() -> Option<Self> {
        avx2_detected().then_some(Avx2(()))
    }
}

/// Proof that this CPU has the AVX-512 subsets the crate's AVX-512 code is
/// compiled for: F (the 512-bit registers, masks, `vpermd` over 16 words),
/// DQ (`vpmullq`, a 64-bit multiply per lane), BW (`vpshufb` on 512 bits,
/// the byte swap) and VL. Every AVX-512 server CPU since Skylake-SP and
/// AMD's Zen 4 has all four; a CPU with only some of them gets no token.
/// Holding one makes calling the crate's `target_feature(enable =
/// "avx512f,avx512dq,avx512bw,avx512vl")` functions sound. Detection
/// also requires AVX2, which the AVX-512 kernel's flat index lanes
/// share.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Avx512(());

#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
impl Avx512 {
    /// A token if the CPU has AVX-512 F, DQ, BW and VL (x86_64 only;
    /// detected once, cached).
    #[inline]
    pub(crate) fn detect() -> Option<Self> {
        avx512_detected().then_some(Avx512(()))
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

/// Whether the CPU has AVX-512 F, DQ, BW and VL, and AVX2 (detected once,
/// cached).
#[inline]
pub(crate) fn avx512_detected() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static DETECTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        *DETECTED.get_or_init(|| {
            std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && avx2_detected()
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}
