//! The flat layouts' batch indices (classic, partitioned): the geometry
//! the computation needs ([`FlatSpec`]), the chunk loop written once over
//! lanes ([`flat_indices_in`]) and its backends, one per [`Kernel`]
//! (`scalar.rs`, the oracle; `wide.rs`; `avx2.rs`, also AVX-512's).
//!
//! The output is the bit index of probe i of key j, partition offset
//! included, at `out[i * n + j]` for a batch of n 128-bit key hashes
//! (`h1` = low 64 bits, `h2` = high): **probe-major**, because the vector
//! backends keep keys in lanes, so probe i of 8 (or 4) consecutive keys is
//! one vector store. Every backend produces exactly what the scalar one
//! does, for every geometry and any batch length (0, and lengths that are
//! not a multiple of the lane count): `tests/kernels.rs` and the
//! `kernel_diff` fuzz target. Indices only: the caller tests or sets the
//! bits (`src/filter/batch.rs`), so one computation serves the owned filter,
//! views and the parallel path alike. Nothing here imports a layout.

// `forbid` would extend to `avx2`, whose calls into `target_feature`
// functions are the only `unsafe` here; this module and `scalar`/`wide`
// forbid it themselves.
#![deny(unsafe_code)]

#[cfg(target_arch = "x86_64")]
mod avx2;
mod scalar;
mod wide;

use crate::Error;
use crate::scheme::{Progression, Scheme};
use crate::simd::kernel::Kernel;
use crate::simd::lanes::{Lanes64, MAX_LANES};
use crate::util::limits::{MAX_BITS, MAX_HASHES};

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
    flat_indices_unchecked(kernel, spec, hashes, out);
    Ok(())
}

/// [`flat_indices`] for callers that checked the lengths and the kernel's
/// availability (panics otherwise, never UB).
#[inline]
pub(crate) fn flat_indices_unchecked(
    kernel: Kernel,
    spec: &FlatSpec,
    hashes: &[u128],
    out: &mut [u64],
) {
    match kernel {
        Kernel::Scalar => scalar::flat_indices(spec, hashes, out),
        Kernel::Wide => wide::flat_indices(spec, hashes, out),
        // AVX-512 runs AVX2's flat indices (every AVX-512 CPU the token
        // accepts has AVX2).
        #[cfg(target_arch = "x86_64")]
        Kernel::Avx2 | Kernel::Avx512 => avx2::flat_indices(spec, hashes, out),
        #[cfg(not(target_arch = "x86_64"))]
        Kernel::Avx2 | Kernel::Avx512 => scalar::flat_indices(spec, hashes, out),
    }
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
    // the 32-bit AVX2 lanes, and they measured far slower;
    // docs/bench-notes/2026-11-25.md, "Hash engine, index lanes and kernel
    // layer"), so no vector instruction goes in it. The stores run here.
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

#[cfg(test)]
mod tests {
    use super::*;

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
