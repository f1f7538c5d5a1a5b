//! The run-time-dispatched AVX2 kernel (x86_64).
//!
//! The lane algorithm of [`super::wide`], written with `core::arch`
//! intrinsics inside `#[target_feature(enable = "avx2")]` functions, so that
//! a library built for the baseline x86-64 target (what `cargo build
//! --release` gives users) still runs 8 x 32-bit multiplies (`vpmulld`) and
//! 4 x 64-bit compares (`vpcmpgtq`) where the CPU has AVX2. (`wide` alone
//! cannot: it picks its instructions at compile time.)
//!
//! The chunk loops and the index computations are the shared ones
//! (`kernel::block_positions_in`, `kernel::flat_indices_in`),
//! instantiated inside `target_feature` functions with this module's lane
//! types (`Lanes32`, `Lanes64` over `__m256i`); the block probe of a
//! filter (`Avx2::block_test`) is written here. Vectors are built from
//! and read back into arrays by value with `bytemuck::cast` (`__m256i` is
//! `Pod`): no pointer loads, no transmute of slices. The `unsafe` is the
//! call into the `target_feature` functions, made after
//! `is_x86_feature_detected!("avx2")` (cached in [`super`]) said yes or
//! with an `Avx2` token, and the intrinsics of the lane types, which
//! exist only inside those functions; without AVX2 the scalar oracle runs
//! instead.

#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256i, _mm_cvtsi32_si128, _mm256_add_epi32, _mm256_add_epi64, _mm256_and_si256,
    _mm256_andnot_si256, _mm256_blendv_ps, _mm256_castps_si256, _mm256_castsi256_ps,
    _mm256_castsi256_si128, _mm256_cmpgt_epi32, _mm256_cmpgt_epi64, _mm256_cvtepu32_epi64,
    _mm256_extracti128_si256, _mm256_mullo_epi32, _mm256_or_si256, _mm256_permutevar8x32_epi32,
    _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_setr_epi32, _mm256_setzero_si256,
    _mm256_slli_epi32, _mm256_sllv_epi32, _mm256_srl_epi32, _mm256_srli_epi32, _mm256_sub_epi32,
    _mm256_sub_epi64, _mm256_testz_si256,
};

use super::scalar::{self, SALTS, store};
use super::{BlockSpec, FlatSpec, Kernel};
use crate::hash::split;
use crate::lanes::{Lanes32, Lanes64, NARROW_MAX_RANGE};
use crate::layout::blocked::addressing::{InBlock, block_index};

const LANES32: usize = 8;
const LANES64: usize = 4;

/// Proof that this CPU has AVX2: [`Avx2::detect`] is the only way to make
/// one, so holding one is what makes calling the `target_feature`
/// functions below sound.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx2(());

impl Avx2 {
    /// A token if the CPU has AVX2 (detected once, cached).
    pub(crate) fn detect() -> Option<Self> {
        Kernel::Avx2.is_available().then_some(Avx2(()))
    }

    /// Whether the k probe bits of a blocked-layout key (its h2) are all
    /// set in `line`: the probes eight at a time in one vector, the block's
    /// sixteen 32-bit words looked up in registers (two `vpermd` and a
    /// blend), no branch on the data (the branches test the filter's
    /// constants, the same every call). The same bits as the scalar probe
    /// (`layout::blocked::position`; differential tests in
    /// `layout::blocked`).
    #[inline]
    pub(crate) fn block_test(self, line: &[u64; 8], h2: u64, at: InBlock) -> bool {
        // SAFETY: `self` exists only if the CPU has AVX2 (see `detect`),
        // the one precondition of calling a `target_feature(enable =
        // "avx2")` function; it reads only through a shared reference.
        unsafe {
            if at.step == 0 {
                block_test_avx2::<false>(line, h2, &at)
            } else {
                block_test_avx2::<true>(line, h2, &at)
            }
        }
    }

    /// Whether the key with this hash is possibly in a blocked-layout
    /// filter of `blocks` blocks stored in plain `words`:
    /// [`block_test`](Self::block_test) with the block looked up inside the
    /// same AVX2 function.
    #[inline]
    pub(crate) fn block_contains(
        self,
        words: &[u64],
        hash: u128,
        blocks: u64,
        at: &InBlock,
    ) -> bool {
        // SAFETY: as in `block_test`: the token proves AVX2; shared
        // references only, indexing checked.
        unsafe {
            if at.step == 0 {
                block_contains_avx2::<false>(words, hash, blocks, at)
            } else {
                block_contains_avx2::<true>(words, hash, blocks, at)
            }
        }
    }

    /// Sets the bits of the key with this hash:
    /// [`block_contains`](Self::block_contains) for an insert.
    #[inline]
    pub(crate) fn block_insert(self, words: &mut [u64], hash: u128, blocks: u64, at: &InBlock) {
        // SAFETY: as in `block_test`: the token proves AVX2; references
        // only, indexing checked.
        unsafe {
            if at.step == 0 {
                block_insert_avx2::<false>(words, hash, blocks, at)
            } else {
                block_insert_avx2::<true>(words, hash, blocks, at)
            }
        }
    }

    /// Sets the bits of a chunk of blocked-layout keys (blocks `blocks`,
    /// hashes `hashes`) in plain `words`: each key's mask built in
    /// registers, ORed into its line with two vector ORs. One call per
    /// chunk. (A mask built word by word in a stack array, then ORed into
    /// the line, made inserts cost 2.6x a query.)
    #[inline]
    pub(crate) fn block_set_chunk(
        self,
        words: &mut [u64],
        blocks: &[usize],
        hashes: &[u128],
        at: InBlock,
    ) {
        // SAFETY: as in `block_test`: the token proves AVX2; references
        // only, indexing checked.
        unsafe {
            if at.step == 0 {
                block_set_chunk_avx2::<false>(words, blocks, hashes, &at)
            } else {
                block_set_chunk_avx2::<true>(words, blocks, hashes, &at)
            }
        }
    }

    /// [`block_test`](Self::block_test) for a chunk of keys: key j's block
    /// `blocks[j]` of `words` (whole 512-bit lines), its hash `hashes[j]`,
    /// the answer in `out[j]`. One call into AVX2 code per chunk, the
    /// per-key probe inlined in it (a call per key cost more than the
    /// probe).
    #[inline]
    pub(crate) fn block_test_chunk(
        self,
        words: &[u64],
        blocks: &[usize],
        hashes: &[u128],
        at: InBlock,
        out: &mut [bool],
    ) {
        // SAFETY: as in `block_test`: the token proves AVX2; shared and
        // exclusive references only, indexing checked.
        unsafe {
            if at.step == 0 {
                block_test_chunk_avx2::<false>(words, blocks, hashes, &at, out)
            } else {
                block_test_chunk_avx2::<true>(words, blocks, hashes, &at, out)
            }
        }
    }
}

#[target_feature(enable = "avx2")]
fn block_test_chunk_avx2<const SPLIT: bool>(
    words: &[u64],
    blocks: &[usize],
    hashes: &[u128],
    at: &InBlock,
    out: &mut [bool],
) {
    let (lines, _) = words.as_chunks::<8>();
    for ((&b, &h), o) in blocks.iter().zip(hashes).zip(out) {
        *o = block_test_avx2::<SPLIT>(&lines[b], (h >> 64) as u64, at);
    }
}

#[target_feature(enable = "avx2")]
fn block_set_chunk_avx2<const SPLIT: bool>(
    words: &mut [u64],
    blocks: &[usize],
    hashes: &[u128],
    at: &InBlock,
) {
    let (lines, _) = words.as_chunks_mut::<8>();
    for (&b, &h) in blocks.iter().zip(hashes) {
        or_mask::<SPLIT>(&mut lines[b], (h >> 64) as u64, at);
    }
}

/// The in-block positions of probes `8g .. 8g + 8` of a key (`x`, its h2
/// in both 64-bit halves of every lane pair, so lane j multiplies the low
/// half for even j, the high half for odd j): `layout::blocked::InBlock::bit`
/// on eight lanes. `SPLIT` is whether the layout is split-block (`at.step
/// != 0`), a parameter so that the blocked probe compiles to one multiply
/// and one shift (its segment is the whole 512-bit block: `x >> 23`).
#[target_feature(enable = "avx2")]
#[inline]
fn group_positions<const SPLIT: bool>(x: __m256i, g: u32, at: &InBlock) -> __m256i {
    let salts: [u32; 8] = SALTS[8 * g as usize..][..8].try_into().unwrap_or_default();
    let y = _mm256_mullo_epi32(x, bytemuck::cast(salts));
    if !SPLIT {
        return _mm256_srli_epi32::<23>(y);
    }
    let offset = if at.shift != 0 {
        _mm256_srl_epi32(y, _mm_cvtsi32_si128(at.shift as i32))
    } else {
        let seg = _mm256_set1_epi32(at.seg as i32);
        _mm256_srli_epi32::<16>(_mm256_mullo_epi32(_mm256_srli_epi32::<16>(y), seg))
    };
    let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let probe = _mm256_add_epi32(iota, _mm256_set1_epi32((8 * g) as i32));
    _mm256_add_epi32(
        offset,
        _mm256_mullo_epi32(probe, _mm256_set1_epi32(at.step as i32)),
    )
}

/// The mask of a key's k bits in its block, as the block's two 256-bit
/// halves: the positions eight at a time (as in `block_test_avx2`), each
/// moved to its 32-bit word by one variable shift per half, whose count is
/// negative or above 31 for every other word (`vpsllvd` gives 0 there).
#[target_feature(enable = "avx2")]
#[inline]
fn block_mask_avx2<const SPLIT: bool>(h2: u64, at: &InBlock) -> [__m256i; 2] {
    let x = _mm256_set1_epi64x(h2 as i64);
    let one = _mm256_set1_epi32(1);
    // The first bit of each 32-bit word of the two halves.
    let first_lo = _mm256_setr_epi32(0, 32, 64, 96, 128, 160, 192, 224);
    let first_hi = _mm256_add_epi32(first_lo, _mm256_set1_epi32(256));
    let (mut lo, mut hi) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for g in 0..at.k.div_ceil(8) {
        let p = group_positions::<SPLIT>(x, g, at);
        for j in 0..(at.k - 8 * g).min(8) {
            // Lane j everywhere, in registers (a store of `p` and scalar
            // reloads stalled on store forwarding).
            let pj = _mm256_permutevar8x32_epi32(p, _mm256_set1_epi32(j as i32));
            lo = _mm256_or_si256(lo, _mm256_sllv_epi32(one, _mm256_sub_epi32(pj, first_lo)));
            hi = _mm256_or_si256(hi, _mm256_sllv_epi32(one, _mm256_sub_epi32(pj, first_hi)));
        }
    }
    [lo, hi]
}

#[target_feature(enable = "avx2")]
#[inline]
fn block_test_avx2<const SPLIT: bool>(line: &[u64; 8], h2: u64, at: &InBlock) -> bool {
    // The block as 16 little-endian u32 words: bit p is bit p & 31 of word
    // p >> 5, whichever word size it was set with.
    let [lo_words, hi_words]: [__m256i; 2] = bytemuck::cast(*line);
    let x = _mm256_set1_epi64x(h2 as i64);
    // Groups of eight probes; only the last has lanes past k, masked off.
    // k <= 8 (the common case: every p above 0.4%) is its own straight-line
    // path, one group with constant salts.
    let last = if at.k <= 8 { 0 } else { at.k.div_ceil(8) - 1 };
    let mut miss = _mm256_setzero_si256();
    for g in 0..last {
        miss = _mm256_or_si256(miss, group_miss::<SPLIT>(x, g, at, lo_words, hi_words));
    }
    let tail = group_miss::<SPLIT>(x, last, at, lo_words, hi_words);
    miss = _mm256_or_si256(miss, _mm256_and_si256(tail, bytemuck::cast(at.last_lanes)));
    _mm256_testz_si256(miss, miss) == 1
}

/// The probe bits of group `g` (probes `8g .. 8g + 8`) that are clear in the
/// block whose sixteen 32-bit words are `lo_words` and `hi_words`: each
/// probe's word looked up in registers (two `vpermd` and a blend), its bit
/// and-not that word.
#[target_feature(enable = "avx2")]
#[inline]
fn group_miss<const SPLIT: bool>(
    x: __m256i,
    g: u32,
    at: &InBlock,
    lo_words: __m256i,
    hi_words: __m256i,
) -> __m256i {
    let p = group_positions::<SPLIT>(x, g, at);
    let word = _mm256_srli_epi32::<5>(p);
    let from_lo = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(lo_words, word));
    let from_hi = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(hi_words, word));
    // Word 8..16 lives in the high half: bit 3 of the index, moved to the
    // sign bit, picks it.
    let pick_hi = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(word));
    let w = _mm256_castps_si256(_mm256_blendv_ps(from_lo, from_hi, pick_hi));
    let bit = _mm256_sllv_epi32(
        _mm256_set1_epi32(1),
        _mm256_and_si256(p, _mm256_set1_epi32(31)),
    );
    _mm256_andnot_si256(w, bit)
}

/// ORs the mask of a key (its h2) into its line.
#[target_feature(enable = "avx2")]
#[inline]
fn or_mask<const SPLIT: bool>(line: &mut [u64; 8], h2: u64, at: &InBlock) {
    let [lo, hi] = block_mask_avx2::<SPLIT>(h2, at);
    let [a, c]: [__m256i; 2] = bytemuck::cast(*line);
    *line = bytemuck::cast([_mm256_or_si256(a, lo), _mm256_or_si256(c, hi)]);
}

/// A single-key query from the key's hash to the answer in one AVX2
/// function: block, bounds check and probe together, six arguments in
/// registers. (The hash stays in the caller: inlined there, it is
/// specialised to the key's length; called from here, XXH3 ran its
/// length dispatch and made the query 1.5x slower.)
#[target_feature(enable = "avx2")]
fn block_contains_avx2<const SPLIT: bool>(
    words: &[u64],
    hash: u128,
    blocks: u64,
    at: &InBlock,
) -> bool {
    let (h1, h2) = split(hash);
    let line = &words.as_chunks::<8>().0[block_index(h1, blocks) as usize];
    block_test_avx2::<SPLIT>(line, h2, at)
}

/// [`block_contains_avx2`] for an insert.
#[target_feature(enable = "avx2")]
fn block_insert_avx2<const SPLIT: bool>(words: &mut [u64], hash: u128, blocks: u64, at: &InBlock) {
    let (h1, h2) = split(hash);
    let line = &mut words.as_chunks_mut::<8>().0[block_index(h1, blocks) as usize];
    or_mask::<SPLIT>(line, h2, at);
}

pub(crate) fn block_positions(
    spec: &BlockSpec,
    hashes: &[u128],
    blocks_out: &mut [u64],
    positions_out: &mut [u32],
) {
    if !Kernel::Avx2.is_available() {
        return scalar::block_positions(spec, hashes, blocks_out, positions_out);
    }
    // SAFETY: the CPU supports AVX2 (checked just above by the cached
    // `is_x86_feature_detected!`), which is the only precondition of
    // calling a `#[target_feature(enable = "avx2")]` function; the function
    // itself uses no pointers.
    unsafe { block_positions_avx2(spec, hashes, blocks_out, positions_out) }
}

pub(crate) fn flat_indices(spec: &FlatSpec, hashes: &[u128], out: &mut [u64]) {
    if !Kernel::Avx2.is_available() {
        return scalar::flat_indices(spec, hashes, out);
    }
    // SAFETY: as in `block_positions`: AVX2 is present (checked above).
    unsafe { flat_indices_avx2(spec, hashes, out) }
}

#[target_feature(enable = "avx2")]
fn block_positions_avx2(
    spec: &BlockSpec,
    hashes: &[u128],
    blocks_out: &mut [u64],
    positions_out: &mut [u32],
) {
    super::block_positions_in::<U32x8>(spec, hashes, blocks_out, positions_out);
}

/// The 32-bit lanes where the range allows, else 64-bit ones.
#[target_feature(enable = "avx2")]
fn flat_indices_avx2(spec: &FlatSpec, hashes: &[u128], out: &mut [u64]) {
    if spec.progression.range() <= NARROW_MAX_RANGE {
        super::flat_indices_in::<Narrow>(spec, hashes, out);
    } else {
        super::flat_indices_in::<U64x4>(spec, hashes, out);
    }
}

// ------------------------------------------------------------ the lanes --
//
// SAFETY (every `unsafe` block below): the intrinsics need AVX2. Values of
// `U32x8`, `U64x4` and `Narrow` are made only inside `block_positions_avx2` and
// `flat_indices_avx2` (these types are private to this module and nothing
// else here creates one), which run only after `Kernel::Avx2.is_available()`
// said the CPU has AVX2; the methods are `inline(always)`, so their
// intrinsics are compiled into those `target_feature` functions. Every
// intrinsic works on registers only; loads and stores go through
// `bytemuck::cast` of arrays by value.

/// Eight u32 lanes in an AVX2 register.
#[derive(Clone, Copy)]
struct U32x8(__m256i);

/// Four u64 lanes in an AVX2 register.
#[derive(Clone, Copy)]
struct U64x4(__m256i);

impl Lanes32 for U32x8 {
    const N: usize = LANES32;

    #[inline(always)]
    fn splat(v: u32) -> Self {
        // SAFETY: AVX2 is present; see "the lanes" above.
        Self(unsafe { _mm256_set1_epi32(v as i32) })
    }

    #[inline(always)]
    fn load(values: &[u32]) -> Self {
        let a = <[u32; LANES32]>::try_from(&values[..LANES32]).unwrap_or_default();
        Self(bytemuck::cast(a))
    }

    #[inline(always)]
    fn store(self, out: &mut [u32]) {
        let a: [u32; LANES32] = bytemuck::cast(self.0);
        store(out, &a);
    }

    #[inline(always)]
    fn add(self, y: Self) -> Self {
        // SAFETY: AVX2 is present; see "the lanes" above.
        Self(unsafe { _mm256_add_epi32(self.0, y.0) })
    }

    #[inline(always)]
    fn mul(self, y: Self) -> Self {
        // SAFETY: AVX2 is present; see "the lanes" above.
        Self(unsafe { _mm256_mullo_epi32(self.0, y.0) })
    }

    #[inline(always)]
    fn shr16(self) -> Self {
        // SAFETY: AVX2 is present; see "the lanes" above.
        Self(unsafe { _mm256_srli_epi32::<16>(self.0) })
    }
}

impl Lanes64 for U64x4 {
    const N: usize = LANES64;

    #[inline(always)]
    fn splat(v: u64) -> Self {
        // SAFETY: AVX2 is present; see "the lanes" above.
        Self(unsafe { _mm256_set1_epi64x(v as i64) })
    }

    #[inline(always)]
    fn load(values: &[u64]) -> Self {
        let a = <[u64; LANES64]>::try_from(&values[..LANES64]).unwrap_or_default();
        Self(bytemuck::cast(a))
    }

    #[inline(always)]
    fn store_offset(self, offset: u64, out: &mut [u64]) {
        // SAFETY: AVX2 is present; see "the lanes" above.
        let a: [u64; LANES64] =
            bytemuck::cast(unsafe { _mm256_add_epi64(self.0, _mm256_set1_epi64x(offset as i64)) });
        store(out, &a);
    }

    /// `s = x + y; s - (r if s > r - 1)`: the signed 64-bit compare is
    /// exact since every value is below 2^47.
    #[inline(always)]
    fn add_mod(self, y: Self, r: Self, r_minus_1: Self) -> Self {
        // SAFETY: AVX2 is present; see "the lanes" above.
        Self(unsafe {
            let s = _mm256_add_epi64(self.0, y.0);
            _mm256_sub_epi64(s, _mm256_and_si256(_mm256_cmpgt_epi64(s, r_minus_1.0), r.0))
        })
    }
}

/// Eight 32-bit index lanes in an AVX2 register (ranges up to
/// [`NARROW_MAX_RANGE`]): twice the keys of [`U64x4`] per instruction.
#[derive(Clone, Copy)]
struct Narrow(__m256i);

impl Lanes64 for Narrow {
    const N: usize = LANES32;

    #[inline(always)]
    fn splat(v: u64) -> Self {
        // SAFETY: AVX2 is present; see "the lanes" above.
        Self(unsafe { _mm256_set1_epi32(v as i32) })
    }

    #[inline(always)]
    fn load(values: &[u64]) -> Self {
        let a: [u32; LANES32] = std::array::from_fn(|j| values.get(j).map_or(0, |&v| v as u32));
        Self(bytemuck::cast(a))
    }

    /// Zero-extended to u64 (`vpmovzxdq` per half), plus the offset.
    #[inline(always)]
    fn store_offset(self, offset: u64, out: &mut [u64]) {
        // SAFETY: AVX2 is present; see "the lanes" above.
        let a: [u64; LANES32] = bytemuck::cast(unsafe {
            let off = _mm256_set1_epi64x(offset as i64);
            [
                _mm256_add_epi64(_mm256_cvtepu32_epi64(_mm256_castsi256_si128(self.0)), off),
                _mm256_add_epi64(
                    _mm256_cvtepu32_epi64(_mm256_extracti128_si256::<1>(self.0)),
                    off,
                ),
            ]
        });
        store(out, &a);
    }

    /// Exact: both values are below `r <= 2^30`, so the sum is below 2^31
    /// and the signed compare is the unsigned one.
    #[inline(always)]
    fn add_mod(self, y: Self, r: Self, r_minus_1: Self) -> Self {
        // SAFETY: AVX2 is present; see "the lanes" above.
        Self(unsafe {
            let s = _mm256_add_epi32(self.0, y.0);
            _mm256_sub_epi32(s, _mm256_and_si256(_mm256_cmpgt_epi32(s, r_minus_1.0), r.0))
        })
    }
}
