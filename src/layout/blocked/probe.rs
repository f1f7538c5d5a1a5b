//! Which vector code probes a blocked filter: [`VectorProbe`], the one
//! dispatcher of the blocked layouts' probes, chosen once per filter from
//! its [`Kernel`] and stored in its geometry (`Blocks`).

// The dispatch itself has no `unsafe`; the AVX2 probe's lives in `avx2`.
#![forbid(unsafe_code)]

use super::addressing::InBlockConstants;
#[cfg(target_arch = "x86_64")]
use super::avx2;
#[cfg(target_arch = "x86_64")]
use super::avx512;
use super::wide;
use crate::Kernel;

/// The in-register probe of a filter, chosen once when the filter is built
/// or loaded: AVX-512 when the kernel in use is AVX-512 and AVX2 when it
/// is AVX2 (each implies the CPU has it: the token proves it), the portable `wide` test when it is
/// [`Kernel::Wide`] (inserts stay scalar), otherwise none and the layout's
/// scalar probe runs. The one dispatcher of the blocked layouts' vector
/// probes: each method tests the token, then the flag, once per call (per
/// chunk for the chunk forms). Which probe runs
/// never changes an answer, so it is not part of a filter's identity: any
/// two compare equal.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct VectorProbe {
    /// The AVX-512 probe, with the token that proves the CPU has it.
    /// Tested after AVX2's: the default kernel pays no extra branch.
    #[cfg(target_arch = "x86_64")]
    avx512: Option<avx512::Avx512Probe>,
    /// The AVX2 probe, with the token that proves the CPU has it.
    #[cfg(target_arch = "x86_64")]
    avx2: Option<avx2::Avx2Probe>,
    /// `wide`'s `u32x8` test ([`wide::block_test`]), instructions chosen
    /// at compile time; inserts by the scalar probe. (A field beside the
    /// token, not an enum with it: as an enum, the AVX2 batch calls
    /// measured slower with the same instructions per key;
    /// docs/bench-notes/2026-11-26.md.)
    wide: bool,
}

impl PartialEq for VectorProbe {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for VectorProbe {}

impl VectorProbe {
    /// The probe for `kernel`: AVX-512 for [`Kernel::Avx512`] and AVX2 for
    /// [`Kernel::Avx2`] on a CPU with it,
    /// `wide`'s for [`Kernel::Wide`] where it is built with the lane
    /// operations it needs ([`wide::BLOCK_PROBE`]), none otherwise.
    pub(crate) fn for_kernel(kernel: Kernel) -> Self {
        Self {
            #[cfg(target_arch = "x86_64")]
            avx512: (kernel == Kernel::Avx512)
                .then(avx512::Avx512Probe::detect)
                .flatten(),
            #[cfg(target_arch = "x86_64")]
            avx2: (kernel == Kernel::Avx2)
                .then(avx2::Avx2Probe::detect)
                .flatten(),
            wide: kernel == Kernel::Wide && wide::BLOCK_PROBE,
        }
    }

    /// `wide`'s test, whatever the kernel and build (tests).
    #[cfg(test)]
    pub(crate) fn wide() -> Self {
        Self {
            wide: true,
            ..Self::default()
        }
    }

    /// The blocked-layout test of a key's h2 in `line` by the vector
    /// probe, or `None` when there is none (the caller runs the scalar
    /// one).
    #[inline(always)]
    pub(crate) fn block_test(
        &self,
        line: &impl crate::bits::Line,
        h2: u64,
        consts: InBlockConstants,
    ) -> Option<bool> {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            return Some(line.with_words(|words| avx2.block_test(words, h2, consts)));
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(avx512) = self.avx512 {
            return Some(line.with_words(|words| avx512.block_test(words, h2, consts)));
        }
        self.wide
            .then(|| line.with_words(|words| wide::block_test(words, h2, &consts)))
    }

    /// Whether the key with this hash is possibly in a blocked-layout
    /// filter of `blocks` blocks in plain `words`, addressed and tested in
    /// one vector function; `None` when there is none (the caller runs the
    /// scalar probe).
    #[inline(always)]
    pub(crate) fn block_contains(
        &self,
        words: &[u64],
        hash: u128,
        blocks: u64,
        consts: &InBlockConstants,
    ) -> Option<bool> {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            return Some(avx2.block_contains(words, hash, blocks, consts));
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(avx512) = self.avx512 {
            return Some(avx512.block_contains(words, hash, blocks, consts));
        }
        self.wide
            .then(|| wide::block_contains(words, hash, blocks, consts))
    }

    /// [`block_contains`](Self::block_contains) for an insert into plain
    /// words; `false` when there is no vector probe (nothing was set).
    /// `wide` has no insert: the scalar probe's ORs measured as fast or
    /// faster (see `layout/blocked/wide.rs`).
    #[inline(always)]
    pub(crate) fn block_insert(
        &self,
        words: &mut [u64],
        hash: u128,
        blocks: u64,
        consts: &InBlockConstants,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            avx2.block_insert(words, hash, blocks, consts);
            return true;
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(avx512) = self.avx512 {
            avx512.block_insert(words, hash, blocks, consts);
            return true;
        }
        let _ = (words, hash, blocks, consts);
        false
    }

    /// Sets the bits of a chunk of blocked-layout keys in plain words by the
    /// vector probe; `false` when there is none (the caller sets them in
    /// scalar code, also for `wide`: see
    /// [`block_insert`](Self::block_insert)).
    #[inline(always)]
    pub(crate) fn block_set_chunk(
        &self,
        words: &mut [u64],
        blocks: &[usize],
        hashes: &[u128],
        consts: InBlockConstants,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            avx2.block_set_chunk(words, blocks, hashes, consts);
            return true;
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(avx512) = self.avx512 {
            avx512.block_set_chunk(words, blocks, hashes, consts);
            return true;
        }
        let _ = (words, blocks, hashes, consts);
        false
    }

    /// The blocked-layout test of a chunk of keys (blocks `blocks`, hashes
    /// `hashes`) against plain words, answers in `out`, by the vector
    /// probe; `false` when there is none (the caller runs the scalar one).
    #[inline(always)]
    pub(crate) fn block_test_chunk(
        &self,
        words: &[u64],
        blocks: &[usize],
        hashes: &[u128],
        consts: InBlockConstants,
        out: &mut [bool],
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            avx2.block_test_chunk(words, blocks, hashes, consts, out);
            return true;
        }
        #[cfg(target_arch = "x86_64")]
        if let Some(avx512) = self.avx512 {
            avx512.block_test_chunk(words, blocks, hashes, consts, out);
            return true;
        }
        if self.wide {
            wide::block_test_chunk(words, blocks, hashes, &consts, out);
        }
        self.wide
    }
}
