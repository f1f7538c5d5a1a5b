//! Which vector code a filter runs: [`Kernel`], chosen per filter, and
//! the process default ([`Kernel::auto`], [`env_kernel`],
//! [`best_available`]). "Kernel" means this choice and nothing else; the
//! code it selects lives with its computation: the flat layouts' batch
//! indices in `simd::flat`, the blocked layouts' line tests in
//! `simd::block`, the four-lane hash in `hash::avx512`.
//!
//! # What a kernel selects
//!
//! * The blocked layouts' vector line test (`simd::block::VectorBackend`:
//!   AVX-512, AVX2, `wide`'s, or none and the layout's scalar one), chosen
//!   once when a filter is built or loaded or its kernel is set.
//! * The flat layouts' batch indices (`simd::flat`: scalar, `wide`, AVX2).
//! * `hash_batch`'s backend: four keys per AVX-512 register, or the scalar
//!   formulas.
//!
//! Every kernel produces exactly what the scalar one does: tested bit for
//! bit in `tests/kernels.rs` and by the `kernel_diff` fuzz target.
//!
//! # The kernels
//!
//! * [`Kernel::Scalar`]: one key at a time, the oracle; always available.
//! * [`Kernel::Wide`]: keys in lanes with the portable `wide` crate (eight
//!   32-bit or four 64-bit indices per vector). `wide` picks its
//!   instructions at compile time: SSE2 in a default x86-64 build, NEON on
//!   aarch64, AVX2 with `-C target-cpu=native`.
//! * [`Kernel::Avx2`] (x86_64 only): the same lane algorithms written with
//!   `core::arch` intrinsics in `#[target_feature(enable = "avx2")]`
//!   functions, so that a default build still runs AVX2 where the CPU has
//!   it; called with the `cpu::Avx2` token (detected once, cached).
//! * [`Kernel::Avx512`] (x86_64 with AVX-512 F, DQ, BW and VL): `hash_batch`
//!   four keys per register (`hash::avx512`) and the blocked layouts'
//!   line test one block per register (`simd::block::avx512`), with the
//!   `cpu::Avx512` token; the flat indices are AVX2's (which the token
//!   implies).
//!
//! Which kernel runs is a filter's option, not process state: the
//! builder's [`kernel`](crate::Builder::kernel) or
//! [`BloomFilter::set_kernel`](crate::BloomFilter::set_kernel), by default
//! [`Kernel::auto`]: the environment variable `LESSHASH_KERNEL` (`scalar`,
//! `wide`, `avx2` or `avx512`) if set to an available kernel (CI forces
//! each kernel this way), otherwise the fastest available as measured
//! ([`best_available`]: AVX2, else wide; AVX-512 only when asked for). Every
//! kernel gives identical filters and answers, so the choice never changes
//! results, only speed.

#![forbid(unsafe_code)]

use crate::Error;

/// Which vector code a filter runs: the blocked layouts' line test, the
/// flat layouts' batch indices and the batch hash. Every kernel gives identical filters
/// and answers (each is tested bit for bit against the scalar one), so the
/// choice changes speed, never results.
///
/// It is a filter's option, not process state: the builder's
/// [`kernel`](crate::Builder::kernel) or
/// [`BloomFilter::set_kernel`](crate::BloomFilter::set_kernel), by default
/// [`Kernel::auto`]: the environment variable `LESSHASH_KERNEL` (`scalar`,
/// `wide`, `avx2` or `avx512`) if set to an available kernel, otherwise
/// the fastest available as measured ([`best_available`]: AVX2, else
/// wide; AVX-512 only when asked for).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kernel {
    /// One key at a time; the oracle.
    Scalar,
    /// Portable SIMD with the `wide` crate (instructions chosen at compile
    /// time).
    Wide,
    /// AVX2 intrinsics, chosen at run time (x86_64 with AVX2 only).
    Avx2,
    /// AVX-512 intrinsics (x86_64 with AVX-512 F, DQ, BW and VL only):
    /// four keys hashed per register, a blocked filter's block in one
    /// register; AVX2's flat indices. Used when asked for, never
    /// chosen automatically ([`best_available`] says why).
    Avx512,
}

crate::error::named_enum!(Kernel, "kernel");

impl Kernel {
    /// Every kernel, available here or not.
    pub const ALL: [Kernel; 4] = [Kernel::Scalar, Kernel::Wide, Kernel::Avx2, Kernel::Avx512];

    /// The kernel's name: `scalar`, `wide`, `avx2` or `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Wide => "wide",
            Kernel::Avx2 => "avx2",
            Kernel::Avx512 => "avx512",
        }
    }

    /// The kernel a filter uses unless told otherwise
    /// ([`Builder::kernel`](crate::Builder::kernel),
    /// [`BloomFilter::set_kernel`](crate::BloomFilter::set_kernel)): the
    /// one `LESSHASH_KERNEL` names if it is available here, otherwise the
    /// fastest available ([`best_available`]). Decided once per process.
    pub fn auto() -> Kernel {
        static AUTO: std::sync::OnceLock<Kernel> = std::sync::OnceLock::new();
        *AUTO.get_or_init(|| env_kernel().ok().flatten().unwrap_or_else(best_available))
    }

    /// Whether this kernel can run on this CPU.
    pub fn is_available(self) -> bool {
        match self {
            Kernel::Scalar | Kernel::Wide => true,
            Kernel::Avx2 => crate::simd::cpu::avx2_detected(),
            Kernel::Avx512 => crate::simd::cpu::avx512_detected(),
        }
    }

    /// The kernels that can run here, slowest first.
    pub fn available() -> Vec<Kernel> {
        Kernel::ALL
            .into_iter()
            .filter(|k| k.is_available())
            .collect()
    }

    pub(crate) fn check_available(self) -> Result<(), Error> {
        if self.is_available() {
            Ok(())
        } else {
            Err(Error::invalid(
                "kernel",
                format!("the {} kernel is not available on this CPU", self.name()),
            ))
        }
    }
}

// ------------------------------------------------------------- dispatch --

/// The kernel named by `LESSHASH_KERNEL`, if the variable is set.
///
/// # Errors
/// [`Error::InvalidParameter`] naming `LESSHASH_KERNEL` if it names no
/// kernel or one not available on this CPU (the automatic choice then
/// ignores it).
pub fn env_kernel() -> Result<Option<Kernel>, Error> {
    let Some(value) = std::env::var_os("LESSHASH_KERNEL") else {
        return Ok(None);
    };
    let value = value.to_string_lossy();
    match value.trim().parse::<Kernel>() {
        Ok(k) if k.is_available() => Ok(Some(k)),
        Ok(k) => Err(Error::invalid(
            "LESSHASH_KERNEL",
            format!("the {k} kernel is not available on this CPU"),
        )),
        Err(e) => Err(Error::invalid("LESSHASH_KERNEL", e.to_string())),
    }
}

/// The fastest kernel available here, as measured: AVX2, else wide.
///
/// AVX-512 is never chosen by itself: on the AVX-512 CPU it was measured
/// on (a Cascade Lake Xeon) it was no faster than AVX2, since the 512-bit
/// multiplies lower that core's clock (docs/bench-notes/2026-11-27.md,
/// "AVX-512"). On CPUs without that penalty (Ice Lake, Zen 4 and later)
/// ask for it
/// (`LESSHASH_KERNEL=avx512`, [`Builder::kernel`](crate::Builder::kernel))
/// after comparing the `kernel-avx512` benchmark rows there.
pub fn best_available() -> Kernel {
    if Kernel::Avx2.is_available() {
        Kernel::Avx2
    } else {
        Kernel::Wide
    }
}

/// The name of [`Kernel::auto`]: `scalar`, `wide`, `avx2` or `avx512`.
pub fn kernel_name() -> &'static str {
    Kernel::auto().name()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in Kernel::ALL {
            assert_eq!(k.name().parse::<Kernel>(), Ok(k));
            assert_eq!(k.to_string(), k.name());
        }
        assert_eq!("avx512".parse::<Kernel>(), Ok(Kernel::Avx512));
        assert_eq!(
            "neon".parse::<Kernel>().unwrap_err().choices(),
            ["scalar", "wide", "avx2", "avx512"]
        );
        assert!(Kernel::available().contains(&Kernel::Scalar));
    }
}
