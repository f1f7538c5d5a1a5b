//! Batch inserts and queries: hash a chunk of keys, find their lines,
//! prefetch, then probe.
//!
//! # The pipeline
//!
//! Keys go through in chunks of [`CHUNK`] = 32. For each chunk the batch
//! path (1) hashes the keys (the batched XXH3-128 of `hash::short`: one
//! per key, the seed's constants once per batch), (2) derives where they
//! go: the block of each key for the blocked layouts, the k bit indices of
//! each key from the flat index routine ([`crate::simd::kernel`], the filter's
//! kernel) for the flat ones, and (3) tests or sets the bits (the blocked
//! layouts by their vector line test over the chunk's lines).
//!
//! With prefetching on, steps (1)-(2) of chunk c + d run before step (3) of
//! chunk c, and every cache line that chunk c + d will touch is prefetched
//! as soon as its address is known. d is the filter's prefetch distance
//! ([`Builder::prefetch_distance`](crate::Builder::prefetch_distance), 1 to
//! [`Prefetch::MAX_DISTANCE`](crate::Prefetch::MAX_DISTANCE) chunks); the default, one chunk, requests each
//! line 32 to 63 keys before it is probed: 32 lines in flight for the
//! blocked layouts (one per key) and `32 k` for the flat ones. Longer
//! distances put more lines in flight than the CPU's line-fill buffers
//! hold; the sweep that chose one chunk is in
//! docs/bench-notes/2026-11-23.md ("Prefetch distance").
//!
//! [`Prefetch::Auto`] (the default) prefetches when the filter is larger
//! than [`Prefetch::AUTO_MIN_BYTES`](crate::Prefetch::AUTO_MIN_BYTES) (it no longer fits in a core's L2 cache);
//! a filter's [`set_prefetch`](crate::BloomFilter::set_prefetch) (or the
//! builder's [`prefetch`](crate::Builder::prefetch)) forces it on or off
//! for that filter (benchmarks, the no-prefetch figure). The kernel is a
//! filter's option the same way ([`crate::BloomFilter::set_kernel`]).
//! Results never depend on either.
//!
//! The `Independent` scheme hashes a key k times and has no kernel: its
//! batch paths are the per-key scalar path.

#![forbid(unsafe_code)]

use crate::filter::BloomFilter;
use crate::geometry::{Addressing, Geometry};
use crate::hash::short::hash_into;
use crate::hash::{HashFamily, Key, Secrets, split};
use crate::layout::blocked::Blocks;
use crate::layout::flat::Flat;
use crate::simd::flat::FlatSpec;
use crate::simd::kernel::Kernel;
use crate::tuning::Tuning;
use crate::util::bits::WordsMut;
use crate::util::prefetch::prefetch;

/// Keys per pipeline step (a multiple of every kernel's lane count).
pub const CHUNK: usize = 32;

/// What a batch computes per chunk for a geometry; `None` for
/// `Independent`, which has no 128-bit hash to share.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Plan {
    /// Blocked layouts: the block of each key, then the layout's probe over
    /// that one cache line.
    Blocks(Blocks),
    /// Flat layouts: the k bit indices of each key from the SIMD kernel
    /// (needed in memory anyway: each is a cache line to prefetch).
    Flat(FlatSpec),
}

impl Plan {
    pub(crate) fn of(g: &Geometry) -> Option<Plan> {
        if !g.scheme.is_two_hash() {
            return None;
        }
        Some(match g.addressing {
            Addressing::Blocks(b) => Plan::Blocks(b),
            Addressing::Flat(f) => Plan::Flat(f.kernel_spec()),
        })
    }
}

/// One chunk's hashes and what the plan derived from them.
pub(crate) struct Stage {
    len: usize,
    hashes: [u128; CHUNK],
    /// The block of each key (blocked layouts).
    blocks: [usize; CHUNK],
    /// Bit indices, probe-major as the kernels write them: probe i of key j
    /// at `i * len + j` (flat layouts).
    indices: Vec<u64>,
}

impl Stage {
    pub(crate) fn new(plan: &Plan) -> Box<Self> {
        let indices = match plan {
            Plan::Blocks(_) => Vec::new(),
            Plan::Flat(spec) => vec![0; CHUNK * spec.k as usize],
        };
        Box::new(Self {
            len: 0,
            hashes: [0; CHUNK],
            blocks: [0; CHUNK],
            indices,
        })
    }

    /// Fills the hashes (`fill` writes `len` of them) and derives the
    /// blocks or the indices.
    #[inline]
    pub(crate) fn prepare(
        &mut self,
        plan: &Plan,
        kernel: Kernel,
        len: usize,
        fill: impl FnOnce(&mut [u128]),
    ) {
        self.len = len;
        fill(&mut self.hashes[..len]);
        let hs = &self.hashes[..len];
        match plan {
            Plan::Blocks(p) => {
                for (b, &h) in self.blocks.iter_mut().zip(hs) {
                    *b = p.block(split(h).0);
                }
            }
            Plan::Flat(spec) => crate::simd::flat::flat_indices_unchecked(
                kernel,
                spec,
                hs,
                &mut self.indices[..len * spec.k as usize],
            ),
        }
    }

    /// The chunk's hashes.
    #[inline(always)]
    #[cfg(feature = "rayon")]
    pub(crate) fn hashes(&self) -> &[u128] {
        &self.hashes[..self.len]
    }

    /// The chunk's blocks (blocked layouts; meaningless for flat ones).
    #[inline(always)]
    #[cfg(feature = "rayon")]
    pub(crate) fn blocks(&self) -> &[usize] {
        &self.blocks[..self.len]
    }

    /// The chunk's bit indices, probe-major (flat layouts; empty for
    /// blocked ones).
    #[inline(always)]
    #[cfg(feature = "rayon")]
    pub(crate) fn indices(&self) -> &[u64] {
        let k = self.indices.len() / CHUNK;
        &self.indices[..self.len * k]
    }

    /// Prefetches every line the chunk will touch.
    #[inline]
    pub(crate) fn prefetch(&self, plan: &Plan, words: &[u64]) {
        match plan {
            Plan::Blocks(_) => {
                for &b in &self.blocks[..self.len] {
                    prefetch(words, b * 8);
                }
            }
            Plan::Flat(spec) => {
                for &x in &self.indices[..self.len * spec.k as usize] {
                    prefetch(words, (x / 64) as usize);
                }
            }
        }
    }

    /// The chunk's answers, key j's in `found[j]` (the layout is matched
    /// once per chunk).
    #[inline(always)]
    pub(crate) fn contains<'a>(
        &self,
        plan: &Plan,
        words: &[u64],
        found: &'a mut [bool; CHUNK],
    ) -> &'a [bool] {
        let n = self.len;
        let found = &mut found[..n];
        match plan {
            Plan::Blocks(p) => {
                p.test_chunk(words, &self.blocks[..n], &self.hashes[..n], found);
            }
            Plan::Flat(spec) => {
                for (j, f) in found.iter_mut().enumerate() {
                    *f = (0..spec.k as usize)
                        .all(|i| Flat::test_index(words, self.indices[i * n + j]));
                }
            }
        }
        found
    }

    /// Sets the bits of every key of the chunk in `words` (plain words, or
    /// atomic ones in `par`).
    #[inline]
    pub(crate) fn insert<W: WordsMut + ?Sized>(&self, plan: &Plan, words: &mut W) {
        let n = self.len;
        match plan {
            Plan::Blocks(p) => {
                p.set_chunk(words, &self.blocks[..n], &self.hashes[..n]);
            }
            Plan::Flat(spec) => {
                for &x in &self.indices[..n * spec.k as usize] {
                    words.set_bit(x);
                }
            }
        }
    }
}

/// Runs the contains pipeline over `n` keys whose hashes `fill(start, out)`
/// writes, calling `answers(start, found)` for each chunk in order: key
/// `start + j`'s answer in `found[j]` (a chunk at a time: a call per key
/// cost more instructions per key on the blocked AVX2 query;
/// docs/bench-notes/2026-11-27.md, "Blocked chunk loops for k <= 8").
pub(crate) fn contains_pipeline(
    plan: &Plan,
    tuning: Tuning,
    mut words: &[u64],
    n: usize,
    fill: impl FnMut(usize, &mut [u128]),
    mut answers: impl FnMut(usize, &[bool]),
) {
    let mut found = [false; CHUNK];
    pipeline(plan, tuning, &mut words, n, fill, |stage, words, start| {
        answers(start, stage.contains(plan, words, &mut found))
    });
}

/// Runs the insert pipeline over `n` keys whose hashes `fill` writes.
pub(crate) fn insert_pipeline(
    plan: &Plan,
    tuning: Tuning,
    words: &mut [u64],
    n: usize,
    fill: impl FnMut(usize, &mut [u128]),
) {
    pipeline(plan, tuning, words, n, fill, |stage, words, _| {
        stage.insert(plan, words)
    });
}

/// The pipeline: with prefetching, chunk c + d (d the filter's prefetch
/// distance) is hashed, planned and prefetched before chunk c is probed by
/// `probe(stage, words, first key's index)`; without, each chunk is
/// prepared just before its probe. The stages form a ring of d + 1.
fn pipeline<S: AsRef<[u64]> + ?Sized>(
    plan: &Plan,
    tuning: Tuning,
    words: &mut S,
    n: usize,
    mut fill: impl FnMut(usize, &mut [u128]),
    mut probe: impl FnMut(&Stage, &mut S, usize),
) {
    if n == 0 {
        return;
    }
    let kernel = tuning.kernel;
    let pf = tuning
        .prefetch
        .applies_to(std::mem::size_of_val(words.as_ref()));
    let chunks = n.div_ceil(CHUNK);
    // Never more stages than chunks: a short batch allocates one or two.
    let ahead = if pf {
        (tuning.prefetch_distance as usize).min(chunks - 1)
    } else {
        0
    };
    let slots = ahead + 1;
    let mut ring: Vec<Box<Stage>> = (0..slots).map(|_| Stage::new(plan)).collect();
    let mut prepare = |stage: &mut Stage, c: usize, words: &S| {
        let len = CHUNK.min(n - c * CHUNK);
        stage.prepare(plan, kernel, len, |hs| fill(c * CHUNK, hs));
        if pf {
            stage.prefetch(plan, words.as_ref());
        }
    };
    for c in 0..ahead {
        prepare(&mut ring[c % slots], c, words);
    }
    for c in 0..chunks {
        let later = c + ahead;
        if later < chunks {
            prepare(&mut ring[later % slots], later, words);
        }
        probe(&ring[c % slots], words, c * CHUNK);
    }
}

/// A `fill` closure hashing `keys` with the filter's `secrets` (its family
/// and seed) for the pipeline: the batched 128-bit hash (`hash::short`: the seed's constants once, short keys
/// by formula), by the scalar formulas on every kernel. The AVX-512
/// kernel's four-lane hash is faster alone, but in the pipeline it made
/// the batch slower: its multiplies compete for the vector ports the
/// probe runs on, where the scalar hash runs beside the probe on the
/// integer ports. On a Cascade Lake the AVX-512 kernel's blocked and
/// split-block queries measured faster without it
/// (docs/bench-notes/2026-11-27.md, "The AVX-512 kernel's pipeline
/// without its vector hash").
pub(crate) fn hash_keys<K: Key>(
    keys: &[K],
    secrets: Secrets,
) -> impl FnMut(usize, &mut [u128]) + '_ {
    move |start, out| {
        let len = out.len();
        hash_into(&keys[start..start + len], &secrets, out);
    }
}

/// XXH3-128 of each of `keys` under `seed` into `out`: the same values as
/// [`hash_key`](crate::hash_key) of each key (what the pre-hashed calls
/// take), computed as the batch paths hash: the seed's constants once for
/// the batch, XXH3's closed formulas for keys of at most 16 bytes (no
/// length dispatch for a fixed-width key type), and four keys per
/// register where [`Kernel::auto`] is [`Kernel::Avx512`] (where hashing
/// is the whole job, the lanes are faster).
///
/// # Errors
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) naming `out`
/// unless it has the length of `keys`.
pub fn hash_batch<K: Key>(keys: &[K], seed: u64, out: &mut [u128]) -> Result<(), crate::Error> {
    hash_batch_with(Kernel::auto(), keys, seed, out)
}

/// [`hash_batch`] on `kernel` (the same values on every kernel; tests and
/// benches compare them).
///
/// # Errors
/// As [`hash_batch`].
pub fn hash_batch_with<K: Key>(
    kernel: Kernel,
    keys: &[K],
    seed: u64,
    out: &mut [u128],
) -> Result<(), crate::Error> {
    hash_batch_in(HashFamily::Xxh3, kernel, keys, seed, out)
}

/// [`hash_batch_with`] in `family` ([`HashFamily::hash_batch`]'s body).
pub(crate) fn hash_batch_in<K: Key>(
    family: HashFamily,
    kernel: Kernel,
    keys: &[K],
    seed: u64,
    out: &mut [u128],
) -> Result<(), crate::Error> {
    crate::Error::check_len("out", keys.len(), out.len())?;
    // Vectorised (four keys per AVX-512 register) for `Kernel::Avx512`
    // only, so a call forced to another kernel hashes as that kernel's
    // CPUs do.
    let vector = kernel == Kernel::Avx512;
    crate::hash::hash_into_by(keys, |k| k, &Secrets::new(family, seed), vector, out);
    Ok(())
}

/// The batch hash of a family (here, not in `hash`, which the batch
/// pipeline builds on: the kernel choice is this module's).
impl HashFamily {
    /// [`hash_key`](Self::hash_key) of each of `keys` into `out`, as the
    /// batch paths hash (the seed's constants once per call; four keys per
    /// register where [`Kernel::auto`](crate::Kernel::auto) is AVX-512).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) naming `out`
    /// unless it has the length of `keys`.
    pub fn hash_batch<K: Key>(
        self,
        keys: &[K],
        seed: u64,
        out: &mut [u128],
    ) -> Result<(), crate::Error> {
        self.hash_batch_on(crate::Kernel::auto(), keys, seed, out)
    }

    /// [`hash_batch`](Self::hash_batch) on `kernel` (the same values on
    /// every kernel; tests and benches compare them).
    ///
    /// # Errors
    /// As [`hash_batch`](Self::hash_batch).
    pub fn hash_batch_on<K: Key>(
        self,
        kernel: crate::Kernel,
        keys: &[K],
        seed: u64,
        out: &mut [u128],
    ) -> Result<(), crate::Error> {
        hash_batch_in(self, kernel, keys, seed, out)
    }
}

/// A `fill` closure copying pre-hashed keys.
pub(crate) fn copy_hashes(hashes: &[u128]) -> impl FnMut(usize, &mut [u128]) + '_ {
    move |start, out| {
        let len = out.len();
        out.copy_from_slice(&hashes[start..start + len]);
    }
}

/// `ceil(n / 64)`: the words of a bitmap of n answers.
pub fn bitmap_words(n: usize) -> usize {
    n.div_ceil(64)
}

/// Records the answers `found` of keys `start..` in a zeroed bitmap: key
/// i's in bit `i % 64` of word `i / 64` (the layout of every
/// `contains_batch_bitmap`). A whole chunk (`start` a multiple of
/// [`CHUNK`], at most `CHUNK` answers) is packed into one 32-bit half of a
/// word; any other run bit by bit.
#[inline(always)]
pub(crate) fn set_answers(bitmap: &mut [u64], start: usize, found: &[bool]) {
    if start.is_multiple_of(CHUNK) && found.len() <= CHUNK {
        let bits = found
            .iter()
            .enumerate()
            .fold(0u64, |bits, (j, &f)| bits | u64::from(f) << j);
        bitmap[start / 64] |= bits << (start % 64);
    } else {
        for (i, &f) in (start..).zip(found) {
            bitmap[i / 64] |= u64::from(f) << (i % 64);
        }
    }
}

/// Copies the answers `found` of keys `start..` into `out`.
#[inline(always)]
pub(crate) fn copy_answers(out: &mut [bool], start: usize, found: &[bool]) {
    out[start..start + found.len()].copy_from_slice(found);
}

/// Batch inserts and queries, pipelined in chunks of 32 keys with the
/// filter's prefetch window ([`Prefetch`](crate::Prefetch)).
impl BloomFilter {
    /// Inserts every key of `keys` (the batch pipeline).
    pub fn insert_batch<K: Key>(&mut self, keys: &[K]) {
        let g = *self.geometry();
        match Plan::of(&g) {
            Some(plan) => insert_pipeline(
                &plan,
                g.tuning,
                self.words_mut(),
                keys.len(),
                hash_keys(keys, *g.secrets()),
            ),
            None => {
                let words = self.words_mut();
                for key in keys {
                    g.insert(words, key);
                }
            }
        }
        self.count_inserts(keys.len());
    }
}
