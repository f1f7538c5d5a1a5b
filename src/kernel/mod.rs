//! Index kernels: the probes of a batch of pre-hashed keys, computed several
//! keys at a time.
//!
//! # The contract
//!
//! A kernel turns a batch of 128-bit key hashes (`h1` = low 64 bits, `h2` =
//! high) into the probes of each key, for a validated geometry:
//!
//! * blocked layouts ([`BlockSpec`]): for key j, its block
//!   `blocks_out[j]` and the in-block bit (0..512) of each probe i,
//!   `positions_out[i * n + j]` ([`Kernel::block_positions`]);
//! * flat layouts ([`FlatSpec`]; classic, partitioned): the bit index of
//!   probe i of key j, partition offset included, `out[i * n + j]`
//!   ([`Kernel::flat_indices`]).
//!
//! Outputs are **probe-major** (n = the batch length): the SIMD kernels keep
//! keys in lanes, so probe i of 8 (or 4) consecutive keys is one vector
//! store. (A first version OR-ed each probe into a per-key 8-word mask in
//! memory; the read-modify-write chains made the kernel 60% of the batch
//! time.)
//!
//! Every kernel produces exactly what the scalar oracle ([`scalar`]) does,
//! for every geometry and any batch length (including 0 and lengths that
//! are not a multiple of the lane count): tested bit for bit in
//! `tests/kernels.rs`. Kernels compute probes only; the caller tests or
//! sets the bits (`src/batch.rs`), so one kernel serves the owned filter,
//! views and the parallel path alike.
//!
//! # Kernels and dispatch
//!
//! * [`Kernel::Scalar`]: one key at a time, the oracle; always available.
//! * [`Kernel::Wide`]: keys in lanes with the portable `wide` crate
//!   (`u32x8` for in-block positions, `u64x4` for flat indices). `wide`
//!   picks its instructions at compile time: SSE2 in a default x86-64
//!   build, AVX2 with `-C target-cpu=native` on an AVX2 machine. Its
//!   blocked-layout test runs where that gives per-lane shifts and
//!   shuffles (`wide::BLOCK_PROBE`); below AVX2, and for inserts, the
//!   scalar probe does.
//! * [`Kernel::Avx2`] (x86_64 only): the same lane algorithm written with
//!   `core::arch` intrinsics in `#[target_feature(enable = "avx2")]`
//!   functions, so that a default build still runs AVX2 where the CPU has
//!   it. Available when `is_x86_feature_detected!("avx2")`, detected once
//!   and cached.
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
pub mod avx2;
pub mod scalar;
pub mod wide;

use crate::Error;
use crate::hash::split;
use crate::lanes::{Lanes32, Lanes64, MAX_LANES};
use crate::layout::blocked::addressing::{InBlock, block_index, position_in};
use crate::rates::{MAX_BITS, MAX_HASHES};
use crate::salts::SALTS;
use crate::scheme::{Progression, Scheme};

/// The index kernels. See the [module docs](self).
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
            Kernel::Avx2 => avx2_detected(),
        }
    }

    /// The kernels that can run here, slowest first.
    pub fn available() -> Vec<Kernel> {
        Kernel::ALL
            .into_iter()
            .filter(|k| k.is_available())
            .collect()
    }

    /// The blocks and in-block positions of `hashes` (see the module docs).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] naming `blocks_out` unless it has the
    /// length of `hashes`, or `positions_out` unless it holds `k *
    /// hashes.len()`; [`Error::InvalidParameter`] naming `kernel` if this
    /// kernel is not available on this CPU.
    pub fn block_positions(
        self,
        spec: &BlockSpec,
        hashes: &[u128],
        blocks_out: &mut [u64],
        positions_out: &mut [u32],
    ) -> Result<(), Error> {
        self.check_available()?;
        Error::check_len("blocks_out", hashes.len(), blocks_out.len())?;
        let expected = hashes.len().checked_mul(spec.k as usize);
        Error::check_len(
            "positions_out",
            expected.unwrap_or(usize::MAX),
            positions_out.len(),
        )?;
        self.block_positions_unchecked(spec, hashes, blocks_out, positions_out);
        Ok(())
    }

    /// The k bit indices of each of `hashes`, probe-major (see the module
    /// docs).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] naming `out` unless it holds exactly
    /// `k * hashes.len()` indices; [`Error::InvalidParameter`] naming
    /// `kernel` if this kernel is not available on this CPU.
    pub fn flat_indices(
        self,
        spec: &FlatSpec,
        hashes: &[u128],
        out: &mut [u64],
    ) -> Result<(), Error> {
        self.check_available()?;
        let expected = hashes.len().checked_mul(spec.k as usize);
        Error::check_len("out", expected.unwrap_or(usize::MAX), out.len())?;
        self.flat_indices_unchecked(spec, hashes, out);
        Ok(())
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

    /// [`block_positions`](Self::block_positions) for callers that checked
    /// the lengths and the kernel's availability (panics otherwise, never
    /// UB).
    #[inline]
    pub(crate) fn block_positions_unchecked(
        self,
        spec: &BlockSpec,
        hashes: &[u128],
        blocks_out: &mut [u64],
        positions_out: &mut [u32],
    ) {
        match self {
            Kernel::Scalar => scalar::block_positions(spec, hashes, blocks_out, positions_out),
            Kernel::Wide => wide::block_positions(spec, hashes, blocks_out, positions_out),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => avx2::block_positions(spec, hashes, blocks_out, positions_out),
            #[cfg(not(target_arch = "x86_64"))]
            Kernel::Avx2 => scalar::block_positions(spec, hashes, blocks_out, positions_out),
        }
    }

    /// [`flat_indices`](Self::flat_indices) for callers that checked the
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

/// The in-register probe of a filter, chosen once when the filter is built
/// or loaded: AVX2 when the kernel in use is AVX2 (which implies the CPU
/// has it: the token proves it), the portable `wide` test when it is
/// [`Kernel::Wide`] (inserts stay scalar), otherwise none and the layout's
/// scalar probe runs. The one dispatcher of the blocked layouts' vector
/// probes: each method tests the token, then the flag, once per call (per
/// chunk for the chunk forms). Which probe runs
/// never changes an answer, so it is not part of a filter's identity: any
/// two compare equal.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Simd {
    /// The AVX2 probe, with the token that proves the CPU has it.
    #[cfg(target_arch = "x86_64")]
    avx2: Option<avx2::Avx2>,
    /// `wide`'s `u32x8` test ([`wide::block_test`]), instructions chosen
    /// at compile time; inserts by the scalar probe. (A field beside the
    /// token, not an enum with it: as an enum, the AVX2 batch calls
    /// measured 6-10% slower, the same instructions per key.)
    wide: bool,
}

impl PartialEq for Simd {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Simd {}

impl Simd {
    /// The probe for `kernel`: AVX2 for [`Kernel::Avx2`] on a CPU with it,
    /// `wide`'s for [`Kernel::Wide`] where it is built with the lane
    /// operations it needs ([`wide::BLOCK_PROBE`]), none otherwise.
    pub(crate) fn for_kernel(kernel: Kernel) -> Self {
        Self {
            #[cfg(target_arch = "x86_64")]
            avx2: (kernel == Kernel::Avx2).then(avx2::Avx2::detect).flatten(),
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
        at: InBlock,
    ) -> Option<bool> {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            return Some(line.with_words(|words| avx2.block_test(words, h2, at)));
        }
        self.wide
            .then(|| line.with_words(|words| wide::block_test(words, h2, &at)))
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
        at: &InBlock,
    ) -> Option<bool> {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            return Some(avx2.block_contains(words, hash, blocks, at));
        }
        self.wide
            .then(|| wide::block_contains(words, hash, blocks, at))
    }

    /// [`block_contains`](Self::block_contains) for an insert into plain
    /// words; `false` when there is no vector probe (nothing was set).
    /// `wide` has no insert: the scalar probe's ORs measured as fast or
    /// faster (see `kernel/wide.rs`).
    #[inline(always)]
    pub(crate) fn block_insert(
        &self,
        words: &mut [u64],
        hash: u128,
        blocks: u64,
        at: &InBlock,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            avx2.block_insert(words, hash, blocks, at);
            return true;
        }
        let _ = (words, hash, blocks, at);
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
        at: InBlock,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            avx2.block_set_chunk(words, blocks, hashes, at);
            return true;
        }
        let _ = (words, blocks, hashes, at);
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
        at: InBlock,
        out: &mut [bool],
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        if let Some(avx2) = self.avx2 {
            avx2.block_test_chunk(words, blocks, hashes, at, out);
            return true;
        }
        if self.wide {
            wide::block_test_chunk(words, blocks, hashes, &at, out);
        }
        self.wide
    }
}

/// The geometry of a blocked layout, as a kernel needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockSpec {
    pub(crate) blocks: u64,
    pub(crate) k: u32,
    pub(crate) split: bool,
}

impl BlockSpec {
    /// `blocks` 512-bit blocks (1 to `MAX_BITS / 512`), k probes (1 to
    /// [`MAX_HASHES`]), and whether the block is split into k segments
    /// ([`Layout::SplitBlock`](crate::Layout::SplitBlock)).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming `blocks` or `k`.
    pub fn new(blocks: u64, k: u32, split: bool) -> Result<Self, Error> {
        if blocks == 0 || blocks > MAX_BITS / 512 {
            return Err(Error::invalid(
                "blocks",
                format!("must be between 1 and {}, got {blocks}", MAX_BITS / 512),
            ));
        }
        check_k(k)?;
        Ok(Self { blocks, k, split })
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

    /// The spec of a validated flat layout's probe.
    pub(crate) fn of(flat: &crate::layout::flat::Flat) -> Self {
        Self {
            progression: *flat.progression(),
            stride: flat.stride(),
            k: flat.k(),
        }
    }
}

// ------------------------------------------------ the chunk loops, once --

/// [`Kernel::block_positions`] over lanes `V` (`V::N` keys per step): the
/// blocks by one multiply-high per key, then for each probe the salted
/// multiply and the segment scaling ([`position_in`]) on `V::N` keys at
/// once, stored probe-major. Each vector kernel instantiates it with its
/// lane type.
#[inline(always)]
pub(crate) fn block_positions_in<V: Lanes32>(
    spec: &BlockSpec,
    hashes: &[u128],
    blocks_out: &mut [u64],
    positions_out: &mut [u32],
) {
    let n = hashes.len();
    let at = InBlock::new(spec.k, spec.split);
    for (c, (hs, bs)) in hashes
        .chunks(V::N)
        .zip(blocks_out.chunks_mut(V::N))
        .enumerate()
    {
        // A partial last chunk is padded with zeros, its lanes discarded.
        let (mut lo, mut hi) = ([0u32; MAX_LANES], [0u32; MAX_LANES]);
        for (j, &h) in hs.iter().enumerate() {
            let (h1, h2) = split(h);
            bs[j] = block_index(h1, spec.blocks);
            (lo[j], hi[j]) = (h2 as u32, (h2 >> 32) as u32);
        }
        let (lo, hi) = (V::load(&lo), V::load(&hi));
        for i in 0..spec.k {
            // Even probes take the low half of h2, odd ones the high half.
            let x = if i % 2 == 0 { lo } else { hi };
            let p = position_in(x.mul(V::splat(SALTS[i as usize])), at.seg, i * at.step);
            let out = i as usize * n + c * V::N;
            p.store(&mut positions_out[out..out + hs.len()]);
        }
    }
}

/// [`Kernel::flat_indices`] over lanes `V`: the starts and strides by two
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

/// Whether the CPU has AVX2 (detected once, cached).
fn avx2_detected() -> bool {
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
        assert!(
            BlockSpec::new(0, 8, false)
                .unwrap_err()
                .to_string()
                .contains("`blocks`")
        );
        assert!(
            BlockSpec::new(1, 0, true)
                .unwrap_err()
                .to_string()
                .contains("`k`")
        );
        assert!(
            BlockSpec::new(1, 65, true)
                .unwrap_err()
                .to_string()
                .contains("`k`")
        );
        let e = FlatSpec::new(Scheme::Independent, 10, 0, 3).unwrap_err();
        assert!(e.to_string().contains("`scheme`"));
        let e = FlatSpec::new(Scheme::default(), 0, 0, 3).unwrap_err();
        assert!(e.to_string().contains("`range`"));
        let e = FlatSpec::new(Scheme::default(), 10, MAX_BITS, 3).unwrap_err();
        assert!(e.to_string().contains("`stride`"));
    }
}
