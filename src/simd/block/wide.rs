//! The blocked layouts' probe on `wide`'s portable vectors.
//!
//! The blocked layouts' test of one key on `wide`'s `u32x8`, written once
//! for every backend `wide` compiles to: the algorithm of `super::avx2`'s probe
//! (eight probes per vector, the block's sixteen 32-bit words looked up by
//! lane shuffles, each bit by a per-lane shift). Vectors are built from
//! arrays by value (`u32x8::new`, `to_array`, `bytemuck::cast`), so the
//! words' order is the oracle's on any target.
//!
//! There is no `wide` insert: the scalar probe's ORs, one per probe into
//! its word, measured as fast or faster than both `wide` forms tried
//! (positions eight at a time, then the same ORs; the AVX2 probe's mask
//! built in registers). Split-block suffers most: two dependent vector
//! multiplies ahead of the ORs. Figures: docs/bench-notes/2026-11-26.md.

#![forbid(unsafe_code)]

use wide::u32x8;

use crate::hash::split;
use crate::layout::blocked::addressing::{InBlockConstants, block_index};
use crate::util::salts::SALTS;

/// Whether [`super::VectorBackend`] runs this probe for
/// [`Kernel::Wide`](crate::Kernel::Wide):
/// only where `wide` has per-lane multiplies, shifts and shuffles in
/// hardware. SSE2 has no 32-bit lane multiply, no per-lane shift and no
/// shuffle by a vector of indices, so `wide` runs those one lane at a time
/// there and its blocked query runs more instructions than the scalar
/// probe, which runs instead (counts per build in
/// docs/bench-notes/2026-11-26.md; times per build in
/// docs/bench-notes/2026-11-27.md, "The workspace split"). Measured only on
/// x86_64: other targets keep the scalar probe until measured.
pub(crate) const BLOCK_LINE_TEST: bool = cfg!(target_feature = "avx2");

/// Lanes 0..8 as a vector.
const IOTA: u32x8 = u32x8::new([0, 1, 2, 3, 4, 5, 6, 7]);

/// h2's low half in the even lanes, its high half in the odd ones: lane j
/// is the input of probe `8g + j` of any group g.
#[inline(always)]
fn probe_inputs(h2: u64) -> u32x8 {
    let (lo, hi) = (h2 as u32, (h2 >> 32) as u32);
    u32x8::new([lo, hi, lo, hi, lo, hi, lo, hi])
}

/// The block's 8 u64 words as sixteen 32-bit words in two vectors, low
/// half of each u64 first: bit p of the block is bit `p & 31` of 32-bit
/// word `p >> 5`. A cast of the array on a little-endian target (written
/// with shifts, LLVM built it from many shuffles and shifts per key for
/// AVX-512; docs/bench-notes/2026-11-27.md, "The workspace split: one
/// read-only view, and the blocked `wide` probe"), shifts on a big-endian
/// one.
#[inline(always)]
fn block_lanes(line: &[u64; 8]) -> [u32x8; 2] {
    let [lo, hi]: [[u32; 8]; 2] = if cfg!(target_endian = "little") {
        bytemuck::cast(*line)
    } else {
        let w: [u32; 16] = std::array::from_fn(|i| (line[i / 2] >> (32 * (i % 2))) as u32);
        bytemuck::cast(w)
    };
    [u32x8::new(lo), u32x8::new(hi)]
}

/// The in-block positions of probes `8g .. 8g + 8` of a key whose
/// [`probe_inputs`] are `x`: `layout::blocked::InBlockConstants::bit` on eight
/// lanes. `SPLIT` is whether the layout is split-block (`consts.step != 0`), a
/// parameter so that the blocked line test is one multiply and one shift.
#[inline(always)]
fn group_positions<const SPLIT: bool>(x: u32x8, g: u32, consts: &InBlockConstants) -> u32x8 {
    let salts: [u32; 8] = SALTS[8 * g as usize..][..8].try_into().unwrap_or_default();
    let y = x * u32x8::new(salts);
    if !SPLIT {
        return y >> 23u32;
    }
    let offset = if consts.shift != 0 {
        y >> consts.shift
    } else {
        ((y >> 16u32) * u32x8::splat(consts.seg)) >> 16u32
    };
    offset + (IOTA + u32x8::splat(8 * g)) * u32x8::splat(consts.step)
}

/// The probe bits of group `g` that are clear in the block whose sixteen
/// 32-bit words are `lo` and `hi`: each probe's word picked from both
/// halves by a shuffle (index bit 3 chooses the half), its bit and-not
/// that word.
#[inline(always)]
fn group_miss<const SPLIT: bool>(
    x: u32x8,
    g: u32,
    consts: &InBlockConstants,
    lo: u32x8,
    hi: u32x8,
) -> u32x8 {
    let p = group_positions::<SPLIT>(x, g, consts);
    let word = p >> 5u32;
    let index = word & u32x8::splat(7);
    let in_lo = (word & u32x8::splat(8)).simd_eq(u32x8::splat(0));
    let w = in_lo.select(lo.shuffle(index), hi.shuffle(index));
    let bit = u32x8::splat(1) << (p & u32x8::splat(31));
    bit & !w
}

/// Whether the k probe bits of a blocked-layout key (its h2) are all set
/// in `line`: the probes eight at a time, only the last group's lanes past
/// k masked off, no branch on the data.
#[inline(always)]
fn block_test_in<const SPLIT: bool>(line: &[u64; 8], h2: u64, consts: &InBlockConstants) -> bool {
    let [lo, hi] = block_lanes(line);
    let x = probe_inputs(h2);
    let last = if consts.k <= 8 {
        0
    } else {
        consts.k.div_ceil(8) - 1
    };
    let mut miss = u32x8::splat(0);
    for g in 0..last {
        miss |= group_miss::<SPLIT>(x, g, consts, lo, hi);
    }
    let tail = group_miss::<SPLIT>(x, last, consts, lo, hi);
    miss |= tail & u32x8::new(bytemuck::cast(consts.last_lanes));
    miss.simd_eq(u32x8::splat(0)).all()
}

/// Whether the k probe bits of a blocked-layout key (its h2) are all set in
/// `line` (the oracle's bits: differential tests in `layout::blocked`).
#[inline(never)]
pub(crate) fn block_test(line: &[u64; 8], h2: u64, consts: &InBlockConstants) -> bool {
    if consts.step == 0 {
        block_test_in::<false>(line, h2, consts)
    } else {
        block_test_in::<true>(line, h2, consts)
    }
}

/// Whether the key with this hash is possibly in a blocked-layout filter of
/// `blocks` blocks in plain `words`.
#[inline(never)]
pub(crate) fn block_contains(
    words: &[u64],
    hash: u128,
    blocks: u64,
    consts: &InBlockConstants,
) -> bool {
    let (h1, h2) = split(hash);
    let line = &words.as_chunks::<8>().0[block_index(h1, blocks) as usize];
    block_test(line, h2, consts)
}

/// [`block_test`] for a chunk of keys, answers in `out`.
#[inline(never)]
pub(crate) fn block_test_chunk(
    words: &[u64],
    blocks: &[usize],
    hashes: &[u128],
    consts: &InBlockConstants,
    out: &mut [bool],
) {
    fn run<const SPLIT: bool>(
        words: &[u64],
        blocks: &[usize],
        hashes: &[u128],
        consts: &InBlockConstants,
        out: &mut [bool],
    ) {
        let (lines, _) = words.as_chunks::<8>();
        for ((&b, &h), o) in blocks.iter().zip(hashes).zip(out) {
            *o = block_test_in::<SPLIT>(&lines[b], split(h).1, consts);
        }
    }
    if consts.step == 0 {
        run::<false>(words, blocks, hashes, consts, out);
    } else {
        run::<true>(words, blocks, hashes, consts, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::blocked::addressing::{Segments, reference_mask};

    use crate::test_support::next;

    /// The probe's own functions (whether or not `VectorBackend` runs them in this
    /// build) against the addressing oracle: every k, both layouts, on the
    /// key's own bits, each of them cleared in turn, and random lines.
    #[test]
    fn wide_probe_equals_the_oracle() {
        let mut state = 3;
        for segs in Segments::ALL {
            for k in 1..=64 {
                let consts = InBlockConstants::new(k, segs);
                for _ in 0..100 {
                    let hash = u128::from(next(&mut state)) << 64;
                    let h2 = split(hash).1;
                    let mask = reference_mask(h2, k, segs);
                    assert!(block_contains(&mask, hash, 1, &consts), "k={k} {segs:?}");
                    for (w, &m) in mask.iter().enumerate() {
                        let mut bits = m;
                        while bits != 0 {
                            let mut line = [u64::MAX; 8];
                            line[w] &= !(bits & bits.wrapping_neg());
                            assert!(!block_test(&line, h2, &consts), "k={k} {segs:?}");
                            bits &= bits - 1;
                        }
                    }
                    let line: [u64; 8] =
                        std::array::from_fn(|_| next(&mut state) | next(&mut state));
                    let expect = (0..8).all(|w| mask[w] & !line[w] == 0);
                    let mut out = [!expect];
                    block_test_chunk(&line, &[0], &[hash], &consts, &mut out);
                    assert_eq!(out[0], expect, "k={k} {segs:?}");
                }
            }
        }
    }
}
