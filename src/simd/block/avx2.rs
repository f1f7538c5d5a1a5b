//! The blocked layouts' probe in AVX2 (x86_64), chosen at run time.
//!
//! Eight probes of a key per vector: positions by one `vpmulld` and a
//! shift (`group_positions`), the block's sixteen 32-bit words looked up in
//! registers (two `vpermd` and a blend), no branch on the data; setting
//! builds the key's mask in registers and ORs it into the line. The same
//! bits as the scalar probe (`crate::layout::blocked::addressing::position`; differential
//! tests in `super`). Written with `core::arch` intrinsics inside
//! `#[target_feature(enable = "avx2")]` functions, so a library built for
//! the baseline x86-64 target still runs them where the CPU has AVX2. The
//! `unsafe` is the call into those functions, made with the `Avx2` token
//! the probe holds; vectors are built from arrays by value with
//! `bytemuck::cast`, never by transmuting slices.

#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256i, _mm_cvtsi32_si128, _mm_cvtsi64_si128, _mm256_add_epi32, _mm256_and_si256,
    _mm256_andnot_si256, _mm256_blendv_ps, _mm256_castps_si256, _mm256_castsi256_ps,
    _mm256_cvtepu8_epi32, _mm256_mullo_epi32, _mm256_or_si256, _mm256_permutevar8x32_epi32,
    _mm256_set_epi64x, _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_setr_epi32,
    _mm256_setzero_si256, _mm256_slli_epi32, _mm256_sllv_epi32, _mm256_srl_epi32,
    _mm256_srli_epi32, _mm256_srlv_epi32, _mm256_sub_epi32, _mm256_testc_si256, _mm256_testz_si256,
};

use crate::layout::blocked::addressing::InBlockConstants;
use crate::simd::cpu::Avx2;
use crate::util::bits::Line;
use crate::util::salts::SALTS;

/// A block in registers: its two 256-bit halves.
type Block = [__m256i; 2];

/// A block read word by word (`Line::get`: relaxed atomic loads), put
/// together in registers (the words moved into vector registers and
/// interleaved), where a copy through the stack would make the vector
/// loads wait on eight scalar stores (no store forwarding across them).
#[target_feature(enable = "avx2")]
#[inline]
fn load_block<L: Line>(line: &L) -> Block {
    let w = |i| line.get(i) as i64;
    [
        _mm256_set_epi64x(w(3), w(2), w(1), w(0)),
        _mm256_set_epi64x(w(7), w(6), w(5), w(4)),
    ]
}

/// Whether every bit of `mask` is set in `line`.
#[target_feature(enable = "avx2")]
#[inline]
fn covers([lo, hi]: Block, [lo_mask, hi_mask]: Block) -> bool {
    _mm256_testc_si256(lo, lo_mask) & _mm256_testc_si256(hi, hi_mask) == 1
}

/// The AVX2 block line test, holding the token that proves the CPU has AVX2
/// (so calling the `target_feature` functions below is sound).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx2LineTest(Avx2);

impl Avx2LineTest {
    /// The probe, if the CPU has AVX2.
    pub(crate) fn detect() -> Option<Self> {
        Avx2::detect().map(Avx2LineTest)
    }
}

super::intrinsics_line_test!(Avx2LineTest, "avx2");

/// The in-block positions of probes `8g .. 8g + 8` of a key (`x`, its h2
/// in both 64-bit halves of every lane pair, so lane j multiplies the low
/// half for even j, the high half for odd j): `layout::blocked::InBlockConstants::bit`
/// on eight lanes. `SPLIT` is whether the layout is split-block (`consts.step
/// != 0`), a parameter so that the blocked line test compiles to one multiply
/// and one shift (its segment is the whole 512-bit block: `x >> 23`).
#[target_feature(enable = "avx2")]
#[inline]
fn group_positions<const SPLIT: bool>(x: __m256i, g: u32, consts: &InBlockConstants) -> __m256i {
    let salts: [u32; 8] = SALTS[8 * g as usize..][..8].try_into().unwrap_or_default();
    let y = _mm256_mullo_epi32(x, bytemuck::cast(salts));
    if !SPLIT {
        return _mm256_srli_epi32::<23>(y);
    }
    let offset = if consts.shift != 0 {
        _mm256_srl_epi32(y, _mm_cvtsi32_si128(consts.shift as i32))
    } else {
        let seg = _mm256_set1_epi32(consts.seg as i32);
        _mm256_srli_epi32::<16>(_mm256_mullo_epi32(_mm256_srli_epi32::<16>(y), seg))
    };
    let iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let probe = _mm256_add_epi32(iota, _mm256_set1_epi32((8 * g) as i32));
    _mm256_add_epi32(
        offset,
        _mm256_mullo_epi32(probe, _mm256_set1_epi32(consts.step as i32)),
    )
}

/// The mask of a key's k bits in its block, as the block's two 256-bit
/// halves: the positions eight at a time (as in `block_test`), each
/// moved to its 32-bit word by one variable shift per half, whose count is
/// negative or above 31 for every other word (`vpsllvd` gives 0 there).
#[target_feature(enable = "avx2")]
#[inline]
fn block_mask<const SPLIT: bool>(h2: u64, consts: &InBlockConstants) -> [__m256i; 2] {
    let x = _mm256_set1_epi64x(h2 as i64);
    if SPLIT && consts.k <= 16 {
        return split_mask16(x, consts);
    }
    let mut mask = [_mm256_setzero_si256(); 2];
    for g in 0..consts.k.div_ceil(8) {
        let p = group_positions::<SPLIT>(x, g, consts);
        for j in 0..(consts.k - 8 * g).min(8) {
            or_probe(&mut mask, p, j);
        }
    }
    mask
}

/// A split-block key's mask for 8 < k <= 16 (a filter under 0.4%): probes
/// 0..8 and 8..16, [`split_half_mask`] choosing between the groups.
#[target_feature(enable = "avx2")]
#[inline]
fn split_mask16(x: __m256i, consts: &InBlockConstants) -> [__m256i; 2] {
    let p = [
        group_positions::<true>(x, 0, consts),
        group_positions::<true>(x, 1, consts),
    ];
    [
        split_half_mask::<true>(p, consts, 0),
        split_half_mask::<true>(p, consts, 1),
    ]
}

/// [`block_mask`] for exactly `K` <= 8 probes, unrolled (the chunk
/// insert's body: the loop over a run-time k cost scalar instructions per
/// probe beside its vector ones; docs/bench-notes/2026-11-27.md, "Blocked
/// chunk loops for k <= 8"); a split-block key's word by word
/// ([`split_half_mask`]), which takes fewer instructions than per probe.
#[target_feature(enable = "avx2")]
#[inline]
fn block_mask8<const SPLIT: bool, const K: u32>(
    h2: u64,
    consts: &InBlockConstants,
) -> [__m256i; 2] {
    let p = group_positions::<SPLIT>(_mm256_set1_epi64x(h2 as i64), 0, consts);
    if SPLIT {
        return [
            split_half_mask::<false>([p; 2], consts, 0),
            split_half_mask::<false>([p; 2], consts, 1),
        ];
    }
    let mut mask = [_mm256_setzero_si256(); 2];
    for j in 0..K {
        or_probe(&mut mask, p, j);
    }
    mask
}

/// Half `h` (words `8h .. 8h + 8`) of a split-block key's mask, k <= 16,
/// from its positions `p` (probes 0..8, then 8..16 where `TWO_GROUPS`): a
/// segment of at least 32 bits puts bits of two probes at most on a
/// 32-bit word, named per word by `consts.word_probes`, so each half is
/// those two probes' positions moved onto the words (`vpermd`, and a blend
/// between the groups for k > 8) and one variable shift of 1 each, where a
/// count outside 0..32 (a probe that lands on another word) gives 0. Four
/// shifts for the block, where [`or_probe`] takes two per probe.
#[target_feature(enable = "avx2")]
#[inline]
fn split_half_mask<const TWO_GROUPS: bool>(
    p: [__m256i; 2],
    consts: &InBlockConstants,
    h: usize,
) -> __m256i {
    let first_bit = _mm256_add_epi32(
        _mm256_setr_epi32(0, 32, 64, 96, 128, 160, 192, 224),
        _mm256_set1_epi32(256 * h as i32),
    );
    let [first, next] = consts.word_probes.map(|probes| {
        let names: [u8; 8] = probes[8 * h..][..8].try_into().unwrap_or_default();
        let names = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(i64::from_le_bytes(names)));
        let pos = if TWO_GROUPS {
            lookup16(names, p)
        } else {
            _mm256_permutevar8x32_epi32(p[0], names)
        };
        _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_sub_epi32(pos, first_bit))
    });
    _mm256_or_si256(first, next)
}

/// Sets the bit of probe `j` of the eight positions `p` in the mask's two
/// halves: the position in every lane, minus each lane's first bit, as the
/// count of a variable shift of 1.
#[target_feature(enable = "avx2")]
#[inline]
fn or_probe(mask: &mut [__m256i; 2], p: __m256i, j: u32) {
    let one = _mm256_set1_epi32(1);
    // The first bit of each 32-bit word of the two halves.
    let first_lo = _mm256_setr_epi32(0, 32, 64, 96, 128, 160, 192, 224);
    let first_hi = _mm256_add_epi32(first_lo, _mm256_set1_epi32(256));
    // Lane j everywhere, in registers (a store of `p` and scalar reloads
    // stalled on store forwarding).
    let pj = _mm256_permutevar8x32_epi32(p, _mm256_set1_epi32(j as i32));
    let [lo, hi] = mask;
    *lo = _mm256_or_si256(*lo, _mm256_sllv_epi32(one, _mm256_sub_epi32(pj, first_lo)));
    *hi = _mm256_or_si256(*hi, _mm256_sllv_epi32(one, _mm256_sub_epi32(pj, first_hi)));
}

/// [`block_test`] for k <= 8 (every filter at 0.4% and above), the chunk
/// loop's body: one group of eight probes with constant salts, each
/// probe's word shifted right by its bit (`vpsrlvd`) and `vptest`'s carry
/// flag saying whether bit 0 is set in every lane that is a probe. Fewer
/// instructions per key in the chunk loop than the general loop
/// (docs/bench-notes/2026-11-27.md, "Blocked chunk loops for k <= 8").
#[target_feature(enable = "avx2")]
#[inline]
fn block_test8<const SPLIT: bool>(line: Block, h2: u64, consts: &InBlockConstants) -> bool {
    let [lo_words, hi_words] = line;
    let p = group_positions::<SPLIT>(_mm256_set1_epi64x(h2 as i64), 0, consts);
    let w = group_words(p, lo_words, hi_words);
    let bit0 = _mm256_srlv_epi32(w, _mm256_and_si256(p, _mm256_set1_epi32(31)));
    // The probes' lanes, bit 0 only: CF = ((!bit0) & probes) == 0.
    _mm256_testc_si256(bit0, bytemuck::cast(consts.last_bits)) == 1
}

/// Whether every probe bit of a key (its h2) is set in `line`: groups of
/// eight probes ([`group_miss`]), the lanes of the last group past k
/// masked off.
#[target_feature(enable = "avx2")]
#[inline]
fn block_test<const SPLIT: bool>(line: Block, h2: u64, consts: &InBlockConstants) -> bool {
    if consts.k <= 8 {
        return block_test8::<SPLIT>(line, h2, consts);
    }
    // The block as 16 little-endian u32 words: bit p is bit p & 31 of word
    // p >> 5, whichever word size it was set with.
    let [lo_words, hi_words] = line;
    let x = _mm256_set1_epi64x(h2 as i64);
    // Groups of eight probes; only the last has lanes past k, masked off.
    let last = consts.k.div_ceil(8) - 1;
    let mut miss = _mm256_setzero_si256();
    for g in 0..last {
        miss = _mm256_or_si256(miss, group_miss::<SPLIT>(x, g, consts, lo_words, hi_words));
    }
    let tail = group_miss::<SPLIT>(x, last, consts, lo_words, hi_words);
    miss = _mm256_or_si256(
        miss,
        _mm256_and_si256(tail, bytemuck::cast(consts.last_lanes)),
    );
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
    consts: &InBlockConstants,
    lo_words: __m256i,
    hi_words: __m256i,
) -> __m256i {
    let p = group_positions::<SPLIT>(x, g, consts);
    let w = group_words(p, lo_words, hi_words);
    let bit = _mm256_sllv_epi32(
        _mm256_set1_epi32(1),
        _mm256_and_si256(p, _mm256_set1_epi32(31)),
    );
    _mm256_andnot_si256(w, bit)
}

/// The 32-bit word of the block (sixteen words in `lo_words`, `hi_words`)
/// that holds each of eight positions `p`, looked up in registers: two
/// `vpermd` and a blend.
#[target_feature(enable = "avx2")]
#[inline]
fn group_words(p: __m256i, lo_words: __m256i, hi_words: __m256i) -> __m256i {
    lookup16(_mm256_srli_epi32::<5>(p), [lo_words, hi_words])
}

/// Lane `i[j]` (0..16) of the sixteen lanes of `lo` and `hi`, for each j:
/// two `vpermd` and a blend.
#[target_feature(enable = "avx2")]
#[inline]
fn lookup16(i: __m256i, [lo, hi]: [__m256i; 2]) -> __m256i {
    let from_lo = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(lo, i));
    let from_hi = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(hi, i));
    // Lanes 8..16 live in `hi`: bit 3 of the index, moved to the sign
    // bit, picks it.
    let pick_hi = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(i));
    _mm256_castps_si256(_mm256_blendv_ps(from_lo, from_hi, pick_hi))
}

/// ORs a mask (the block's two halves) into `line`.
#[target_feature(enable = "avx2")]
#[inline]
fn or_into(line: &mut [u64; 8], [lo, hi]: [__m256i; 2]) {
    let [a, c]: [__m256i; 2] = bytemuck::cast(*line);
    *line = bytemuck::cast([_mm256_or_si256(a, lo), _mm256_or_si256(c, hi)]);
}
