//! The kernels: which vector code a filter runs ([`Kernel`], chosen per
//! filter), and the flat layouts' index kernel.
//!
//! # What a kernel selects
//!
//! * The blocked layouts' vector probe (`layout::blocked::VectorProbe`,
//!   next to the layout: AVX2, `wide`'s, or the scalar one), chosen once
//!   when a filter is built or loaded or its kernel is set.
//! * The flat layouts' batch index kernel, here ([`flat_indices`],
//!   [`FlatSpec`]; classic, partitioned): the bit index of probe i of key j,
//!   partition offset included, `out[i * n + j]` for a batch of 128-bit key
//!   hashes (`h1` = low 64 bits, `h2` = high).
//!
//! Outputs are **probe-major** (n = the batch length): the SIMD kernels keep
//! keys in lanes, so probe i of 8 (or 4) consecutive keys is one vector
//! store. Every kernel produces exactly what the scalar oracle ([`scalar`])
//! does, for every geometry and any batch length (including 0 and lengths
//! that are not a multiple of the lane count): tested bit for bit in
//! `tests/kernels.rs` and by the `kernel_diff` fuzz target. The kernel
//! computes indices only; the caller tests or sets the bits
//! (`src/batch.rs`), so one kernel serves the owned filter, views and the
//! parallel path alike. This module imports nothing from the layouts.
//!
//! # Kernels and dispatch
//!
//! * [`Kernel::Scalar`]: one key at a time, the oracle; always available.
//! * [`Kernel::Wide`]: keys in lanes with the portable `wide` crate (eight
//!   32-bit or four 64-bit indices per vector). `wide` picks its
//!   instructions at compile time: SSE2 in a default x86-64 build, NEON on
//!   aarch64, AVX2 with `-C target-cpu=native`.
//! * [`Kernel::Avx2`] (x86_64 only): the same lane algorithm written with
//!   `core::arch` intrinsics in a `#[target_feature(enable = "avx2")]`
//!   function, so that a default build still runs AVX2 where the CPU has
//!   it; called with the `cpu::Avx2` token (detected once, cached).
//!
//! Which kernel runs is a filter's option, not process state: the
//! builder's [`kernel`](crate::Builder::kernel) or
//! [`BloomFilter::set_kernel`](crate::BloomFilter::set_kernel), by default
//! [`Kernel::auto`]: the environment variable `LESSHASH_KERNEL` (`scalar`,
//! `wide` or `avx2`) if set to an available kernel (CI forces each kernel
//! this way), otherwise the fastest available (AVX2, else wide). Every
//! kernel gives identical filters and answers, so the choice never changes
//! results, only speed.

// `forbid` would extend to `avx2`, whose calls into `target_feature`
// functions are the only `unsafe` here; this module and `scalar`/`wide`
// have none (they forbid it themselves).
#![deny(unsafe_code)]

#[cfg(target_arch = "x86_64")]
mod avx2;
mod scalar;
mod wide;

use crate::Error;
use crate::lanes::{Lanes64, MAX_LANES};
use crate::limits::{MAX_BITS, MAX_HASHES};
use crate::scheme::{Progression, Scheme};

/// Which vector code a filter runs: the blocked layouts' block probe and the
/// flat layouts' batch index kernel. Every kernel gives identical filters
/// and answers (each is tested bit for bit against the scalar one), so the
/// choice changes speed, never results.
///
/// It is a filter's option, not process state: the builder's
/// [`kernel`](crate::Builder::kernel) or
/// [`BloomFilter::set_kernel`](crate::BloomFilter::set_kernel), by default
/// [`Kernel::auto`]: the environment variable `LESSHASH_KERNEL` (`scalar`,
/// `wide` or `avx2`) if set to an available kernel, otherwise the fastest
/// available (AVX2, else wide).
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
}

impl Kernel {
    /// Every kernel, available here or not.
    pub const ALL: [Kernel; 3] = [Kernel::Scalar, Kernel::Wide, Kernel::Avx2];

    /// The kernel's name: `scalar`, `wide` or `avx2`.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Wide => "wide",
            Kernel::Avx2 => "avx2",
        }
    }

    /// Parses a [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == name)
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
            Kernel::Avx2 => crate::cpu::avx2_detected(),
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

    /// [`flat_indices`] for callers that checked the
    /// lengths and the kernel's availability (panics otherwise, never UB).
    #[inline]
    pub(crate) fn flat_indices_unchecked(self, spec: &FlatSpec, hashes: &[u128], out: &mut [u64]) {
        match self {
            Kernel::Scalar => scalar::flat_indices(spec, hashes, out),
            Kernel::Wide => wide::flat_indices(spec, hashes, out),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => avx2::flat_indices(spec, hashes, out),
            #[cfg(not(target_arch = "x86_64"))]
            Kernel::Avx2 => scalar::flat_indices(spec, hashes, out),
        }
    }
}

/// The geometry of a flat layout (classic, partitioned), as a kernel needs
/// it: probe i of a key is `i * stride + g_i`, `g_i` the two-hash scheme's
/// index over `[0, range)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlatSpec {
    pub(crate) progression: Progression,
    pub(crate) stride: u64,
    pub(crate) k: u32,
}

impl FlatSpec {
    /// A two-hash `scheme` over `[0, range)` (1 to `MAX_BITS`), probe i
    /// offset by `i * stride` (0 for classic, `range` for partitioned; `k *
    /// stride` at most `MAX_BITS`), k from 1 to [`MAX_HASHES`].
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming `scheme`, `range`, `stride` or
    /// `k`.
    pub fn new(scheme: Scheme, range: u64, stride: u64, k: u32) -> Result<Self, Error> {
        if !scheme.is_two_hash() {
            return Err(Error::invalid(
                "scheme",
                "the kernels derive probes from one 128-bit hash: a two-hash scheme",
            ));
        }
        if range == 0 || range > MAX_BITS {
            return Err(Error::invalid(
                "range",
                format!("must be between 1 and {MAX_BITS}, got {range}"),
            ));
        }
        check_k(k)?;
        if stride
            .checked_mul(u64::from(k))
            .is_none_or(|s| s > MAX_BITS)
        {
            return Err(Error::invalid(
                "stride",
                format!("k * stride must be at most {MAX_BITS}, got {k} * {stride}"),
            ));
        }
        Ok(Self {
            progression: Progression::new(scheme, range),
            stride,
            k,
        })
    }

    /// The spec of a validated flat layout's probe: its progression,
    /// stride and k as the layout holds them (`layout::flat` makes it).
    pub(crate) fn from_parts(progression: Progression, stride: u64, k: u32) -> Self {
        Self {
            progression,
            stride,
            k,
        }
    }
}

// ------------------------------------------------ the chunk loops, once --

/// The k bit indices of each of `hashes` by `kernel`, probe-major (see the
/// module docs).
///
/// # Errors
/// [`Error::LengthMismatch`] naming `out` unless it holds exactly
/// `k * hashes.len()` indices; [`Error::InvalidParameter`] naming
/// `kernel` if this kernel is not available on this CPU.
pub fn flat_indices(
    kernel: Kernel,
    spec: &FlatSpec,
    hashes: &[u128],
    out: &mut [u64],
) -> Result<(), Error> {
    kernel.check_available()?;
    let expected = hashes.len().checked_mul(spec.k as usize);
    Error::check_len("out", expected.unwrap_or(usize::MAX), out.len())?;
    kernel.flat_indices_unchecked(spec, hashes, out);
    Ok(())
}

/// [`flat_indices`] over lanes `V`: the starts and strides by two
/// multiply-highs per key, then the scheme's indices
/// ([`Progression::lanes`]: the chain and the `f(i)` table, or the
/// recurrence) on `V::N` keys at once, stored probe-major.
#[inline(always)]
pub(crate) fn flat_indices_in<V: Lanes64>(spec: &FlatSpec, hashes: &[u128], out: &mut [u64]) {
    let n = hashes.len();
    let prog = &spec.progression;
    // The progression hands each probe's lanes to a closure that only
    // keeps them: a closure is compiled without the caller's
    // `target_feature` when the optimiser keeps it out of line (it did, for
    // the 32-bit AVX2 lanes: 7x slower), so no vector instruction goes in
    // it. The stores run here.
    let mut probes = [V::splat(0); MAX_HASHES as usize];
    for (c, hs) in hashes.chunks(V::N).enumerate() {
        let (mut a, mut b) = ([0u64; MAX_LANES], [0u64; MAX_LANES]);
        for (j, &h) in hs.iter().enumerate() {
            (a[j], b[j]) = prog.start_and_stride(h);
        }
        prog.lanes(V::load(&a), V::load(&b), spec.k, |i, x| {
            probes[i as usize] = x;
            true
        });
        for (i, x) in (0..spec.k).zip(&probes) {
            let at = i as usize * n + c * V::N;
            x.store_offset(u64::from(i) * spec.stride, &mut out[at..at + hs.len()]);
        }
    }
}

fn check_k(k: u32) -> Result<(), Error> {
    if (1..=MAX_HASHES).contains(&k) {
        Ok(())
    } else {
        Err(Error::invalid(
            "k",
            format!("must be between 1 and {MAX_HASHES}, got {k}"),
        ))
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
    match Kernel::from_name(value.trim()) {
        Some(k) if k.is_available() => Ok(Some(k)),
        Some(k) => Err(Error::invalid(
            "LESSHASH_KERNEL",
            format!("the {} kernel is not available on this CPU", k.name()),
        )),
        None => Err(Error::invalid(
            "LESSHASH_KERNEL",
            format!("must be scalar, wide or avx2, got {value:?}"),
        )),
    }
}

/// The fastest kernel available here: AVX2, else wide.
pub fn best_available() -> Kernel {
    if Kernel::Avx2.is_available() {
        Kernel::Avx2
    } else {
        Kernel::Wide
    }
}

/// The name of [`Kernel::auto`]: `scalar`, `wide` or `avx2`.
pub fn kernel_name() -> &'static str {
    Kernel::auto().name()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for k in Kernel::ALL {
            assert_eq!(Kernel::from_name(k.name()), Some(k));
        }
        assert_eq!(Kernel::from_name("avx512"), None);
        assert!(Kernel::available().contains(&Kernel::Scalar));
    }

    #[test]
    fn specs_validate_and_name_the_parameter() {
        let e = FlatSpec::new(Scheme::Independent, 10, 0, 3).unwrap_err();
        assert!(e.to_string().contains("`scheme`"));
        let e = FlatSpec::new(Scheme::default(), 0, 0, 3).unwrap_err();
        assert!(e.to_string().contains("`range`"));
        let e = FlatSpec::new(Scheme::default(), 10, MAX_BITS, 3).unwrap_err();
        assert!(e.to_string().contains("`stride`"));
    }
}
