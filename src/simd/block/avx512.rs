//! The blocked layouts' probe in AVX-512 (x86_64), chosen at run time.
//!
//! One block per register: the 512-bit line is one `__m512i` of sixteen
//! 32-bit words. Sixteen probes of a key per vector: positions by one
//! `vpmulld` and a shift (`group_positions`, the scalar
//! `InBlockConstants::bit` on sixteen lanes), each probe's word looked up
//! with one `vpermd` over the whole line, its bit tested with one
//! `vptestnmd` into a mask register (lanes past k masked off), no branch
//! on the data. Setting builds the key's 512-bit mask in a register (per
//! probe: the position broadcast to every 64-bit lane, one variable shift
//! whose count is out of range in all lanes but the probe's word) and ORs
//! it into the line with one `vporq`. The same bits as the scalar probe
//! (`crate::layout::blocked::addressing::position`; the differential tests in `super`
//! cover every available kernel).
//!
//! Written with `core::arch` intrinsics inside `#[target_feature]`
//! functions, so a library built for the baseline x86-64 target still runs
//! them where the CPU has AVX-512. The `unsafe` is the call into those
//! functions, made with the [`Avx512`] token the probe holds; lines are
//! read and written with `bytemuck::cast` of arrays by value, never by
//! transmuting slices.

#![allow(unsafe_code)]

use core::arch::x86_64::{
    __m256i, __m512i, __mmask16, _mm_cvtsi32_si128, _mm256_add_epi32, _mm256_mullo_epi32,
    _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_setr_epi32, _mm256_srl_epi32, _mm256_srli_epi32,
    _mm512_add_epi32, _mm512_and_si512, _mm512_andnot_si512, _mm512_castsi256_si512,
    _mm512_mask_testn_epi32_mask, _mm512_maskz_permutexvar_epi32, _mm512_mullo_epi32,
    _mm512_or_si512, _mm512_permutexvar_epi32, _mm512_set_epi64, _mm512_set1_epi32,
    _mm512_set1_epi64, _mm512_setr_epi32, _mm512_setr_epi64, _mm512_setzero_si512,
    _mm512_sllv_epi32, _mm512_sllv_epi64, _mm512_srl_epi32, _mm512_srli_epi32, _mm512_sub_epi64,
    _mm512_test_epi64_mask,
};

use crate::layout::blocked::addressing::InBlockConstants;
use crate::simd::cpu::Avx512;
use crate::util::bits::Line;
use crate::util::salts::SALTS;

/// Probes per vector: 32-bit lanes of a 512-bit register.
const LANES: u32 = 16;

/// A block in a register.
type Block = __m512i;

/// A block read word by word (`Line::get`: relaxed atomic loads), put
/// together in a register (as AVX2's `load_block`).
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
#[inline]
fn load_block<L: Line>(line: &L) -> Block {
    let w = |i| line.get(i) as i64;
    _mm512_set_epi64(w(7), w(6), w(5), w(4), w(3), w(2), w(1), w(0))
}

/// Whether every bit of `mask` is set in `line`.
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
#[inline]
fn covers(line: Block, mask: Block) -> bool {
    let missing = _mm512_andnot_si512(line, mask);
    _mm512_test_epi64_mask(missing, missing) == 0
}

/// The AVX-512 block line test, holding the token that proves the CPU has
/// AVX-512 F, DQ, BW and VL (so calling the `target_feature` functions
/// below is sound).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Avx512LineTest(Avx512);

impl Avx512LineTest {
    /// The probe, if the CPU has AVX-512.
    pub(crate) fn detect() -> Option<Self> {
        Avx512::detect().map(Avx512LineTest)
    }
}

super::intrinsics_line_test!(Avx512LineTest, "avx512f,avx512dq,avx512bw,avx512vl");

/// The lanes of group `g` (probes `16g .. 16g + 16`) that are probes:
/// all sixteen but in the last group, where only the remaining
/// `k - 16g`.
#[inline(always)]
fn group_lanes(g: u32, k: u32) -> __mmask16 {
    let left = k - LANES * g;
    if left >= LANES { !0 } else { (1 << left) - 1 }
}

/// The in-block positions of probes `16g .. 16g + 16` of a key (`x`, its
/// h2 in both halves of every 64-bit lane, so lane j multiplies the low
/// half for even j, the high half for odd j, as `lane_input` does):
/// `InBlockConstants::bit` on sixteen lanes. `SPLIT` is whether the layout
/// is split-block (`consts.step != 0`), a parameter so that the blocked
/// probe compiles to one multiply and one shift (`x >> 23`).
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
#[inline]
fn group_positions<const SPLIT: bool>(x: __m512i, g: u32, consts: &InBlockConstants) -> __m512i {
    let salts: [u32; LANES as usize] = SALTS[(LANES * g) as usize..][..LANES as usize]
        .try_into()
        .unwrap_or_default();
    let y = _mm512_mullo_epi32(x, bytemuck::cast(salts));
    if !SPLIT {
        return _mm512_srli_epi32::<23>(y);
    }
    let offset = if consts.shift != 0 {
        _mm512_srl_epi32(y, _mm_cvtsi32_si128(consts.shift as i32))
    } else {
        let seg = _mm512_set1_epi32(consts.seg as i32);
        _mm512_srli_epi32::<16>(_mm512_mullo_epi32(_mm512_srli_epi32::<16>(y), seg))
    };
    let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let probe = _mm512_add_epi32(iota, _mm512_set1_epi32((LANES * g) as i32));
    _mm512_add_epi32(
        offset,
        _mm512_mullo_epi32(probe, _mm512_set1_epi32(consts.step as i32)),
    )
}

/// [`group_positions`] of the first eight probes, in a 256-bit register.
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
#[inline]
fn group_positions8<const SPLIT: bool>(x: __m256i, consts: &InBlockConstants) -> __m256i {
    let salts: [u32; 8] = SALTS[..8].try_into().unwrap_or_default();
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
    _mm256_add_epi32(
        offset,
        _mm256_mullo_epi32(iota, _mm256_set1_epi32(consts.step as i32)),
    )
}

/// [`block_test`] for k <= 8 (every filter at 0.4% and above), the chunk
/// loop's body: the positions in a 256-bit register, like AVX2's, widened
/// for free to index the whole line.
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
#[inline]
fn block_test8<const SPLIT: bool>(words: Block, h2: u64, consts: &InBlockConstants) -> bool {
    // The block as 16 little-endian u32 words: bit p is bit p & 31 of word
    // p >> 5, whichever word size it was set with.
    let x = _mm256_set1_epi64x(h2 as i64);
    let p = _mm512_castsi256_si512(group_positions8::<SPLIT>(x, consts));
    let w = _mm512_permutexvar_epi32(_mm512_srli_epi32::<5>(p), words);
    let bit = _mm512_sllv_epi32(
        _mm512_set1_epi32(1),
        _mm512_and_si512(p, _mm512_set1_epi32(31)),
    );
    _mm512_mask_testn_epi32_mask(group_lanes(0, consts.k), w, bit) == 0
}

/// Whether every probe bit of a key (its h2) is set in `line`: per group
/// of sixteen probes, each probe's 32-bit word picked from the line by one
/// `vpermd`, and `vptestnmd` marks the probes whose bit is clear.
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
#[inline]
fn block_test<const SPLIT: bool>(words: Block, h2: u64, consts: &InBlockConstants) -> bool {
    if consts.k <= 8 {
        return block_test8::<SPLIT>(words, h2, consts);
    }
    let x = _mm512_set1_epi64(h2 as i64);
    let one = _mm512_set1_epi32(1);
    let low5 = _mm512_set1_epi32(31);
    let mut miss: __mmask16 = 0;
    for g in 0..consts.k.div_ceil(LANES) {
        let p = group_positions::<SPLIT>(x, g, consts);
        let w = _mm512_permutexvar_epi32(_mm512_srli_epi32::<5>(p), words);
        let bit = _mm512_sllv_epi32(one, _mm512_and_si512(p, low5));
        miss |= _mm512_mask_testn_epi32_mask(group_lanes(g, consts.k), w, bit);
    }
    miss == 0
}

/// The mask of a key's k bits in its block, as one register of eight
/// 64-bit words: per probe, its position in every 64-bit lane (one masked
/// `vpermd`), minus each lane's first bit, as the count of a variable
/// shift of 1, which `vpsllvq` makes 0 in every lane but the probe's (the
/// count is negative, so huge, or 64 and above there).
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
#[inline]
fn block_mask<const SPLIT: bool>(h2: u64, consts: &InBlockConstants) -> __m512i {
    let x = _mm512_set1_epi64(h2 as i64);
    let mut mask = _mm512_setzero_si512();
    for g in 0..consts.k.div_ceil(LANES) {
        let p = if consts.k <= 8 {
            // As in `block_test`: a 256-bit multiply, widened.
            _mm512_castsi256_si512(group_positions8::<SPLIT>(
                _mm256_set1_epi64x(h2 as i64),
                consts,
            ))
        } else {
            group_positions::<SPLIT>(x, g, consts)
        };
        for j in 0..(consts.k - LANES * g).min(LANES) {
            mask = or_probe(mask, p, j);
        }
    }
    mask
}

/// [`block_mask`] for exactly `K` <= 8 probes, unrolled (the chunk
/// insert's body, as AVX2's).
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
#[inline]
fn block_mask8<const SPLIT: bool, const K: u32>(h2: u64, consts: &InBlockConstants) -> __m512i {
    let p = _mm512_castsi256_si512(group_positions8::<SPLIT>(
        _mm256_set1_epi64x(h2 as i64),
        consts,
    ));
    let mut mask = _mm512_setzero_si512();
    for j in 0..K {
        mask = or_probe(mask, p, j);
    }
    mask
}

/// `mask` with the bit of probe `j` of the positions `p` set.
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
#[inline]
fn or_probe(mask: __m512i, p: __m512i, j: u32) -> __m512i {
    let one = _mm512_set1_epi64(1);
    let first = _mm512_setr_epi64(0, 64, 128, 192, 256, 320, 384, 448);
    // Lane j in the low half of every 64-bit lane, zero above.
    let pj = _mm512_maskz_permutexvar_epi32(0x5555, _mm512_set1_epi32(j as i32), p);
    _mm512_or_si512(mask, _mm512_sllv_epi64(one, _mm512_sub_epi64(pj, first)))
}

/// ORs a mask into `line`.
#[target_feature(enable = "avx512f,avx512dq,avx512bw,avx512vl")]
#[inline]
fn or_into(line: &mut [u64; 8], mask: __m512i) {
    let words: __m512i = bytemuck::cast(*line);
    *line = bytemuck::cast(_mm512_or_si512(words, mask));
}
