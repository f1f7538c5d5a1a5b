//! The blocked layouts' addressing as pure functions, the oracle of every
//! probe: which block a key's h1 selects and which bit of it each probe's
//! 32-bit value lands on. A leaf (it imports only the salts, the block
//! size and the multiply-high reduction): the layout's scalar, `wide` and
//! AVX2 probes (`super`, `super::wide`, `super::avx2`) share this one
//! definition.

#![forbid(unsafe_code)]

use crate::scheme::reduce;
use crate::util::bits::Block;
use crate::util::salts::SALTS;

/// Bits per block: the storage's [`Block::BITS`], named for the layout.
pub(crate) const BLOCK_BITS: u64 = Block::BITS;

/// The block of a key among `blocks`: the schemes' 64-bit multiply-high
/// ([`reduce`]) of h1.
#[inline(always)]
pub(crate) fn block_index(h1: u64, blocks: u64) -> u64 {
    reduce(h1, blocks)
}

/// The 32-bit input of probe `i`: the low half of h2 for even i, the high
/// half for odd i (so every k >= 2 uses all 64 bits of h2).
#[inline(always)]
pub(crate) fn lane_input(h2: u64, i: u32) -> u32 {
    (h2 >> ((i & 1) * 32)) as u32
}

/// The mixed 32-bit value of probe `i`: `x_i * SALTS[i]`.
#[inline(always)]
pub(crate) fn lane_hash(h2: u64, i: u32) -> u32 {
    lane_input(h2, i).wrapping_mul(SALTS[i as usize])
}

/// How a block is divided among a key's probes: the one difference
/// between the blocked layout ([`One`](Self::One) segment, the whole
/// block, for every probe) and the split-block layout
/// ([`PerProbe`](Self::PerProbe): k segments of `floor(512 / k)` bits,
/// probe i in segment i). The vector line tests take it as a const generic
/// `SPLIT: bool` (`true` for `PerProbe`), an enum not being a const
/// generic on stable Rust.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Segments {
    /// The blocked layout: every probe anywhere in the block.
    One,
    /// The split-block layout: one segment per probe.
    PerProbe,
}

impl Segments {
    /// Both, for the tests.
    #[cfg(test)]
    pub(crate) const ALL: [Segments; 2] = [Segments::One, Segments::PerProbe];
}

/// The bits of one probe's segment: 512 for the blocked layout (the whole
/// block), `floor(512 / k)` for the split-block layout (k segments).
#[inline(always)]
pub(crate) const fn segment_bits(k: u32, segs: Segments) -> u32 {
    match segs {
        Segments::PerProbe => BLOCK_BITS as u32 / k,
        Segments::One => BLOCK_BITS as u32,
    }
}

/// The in-block bit (0..512) of probe `i` whose mixed 32-bit value is `x`:
/// `i * S + ((x >> 16) * S >> 16)` with `S` the [segment](segment_bits)
/// bits and no base for the blocked layout. The top 16 bits of `x` scaled to
/// `[0, S)`; for a power-of-two `S` this is the top `log2 S` bits of `x`
/// (blocked: `x >> 23`).
#[inline(always)]
pub(crate) fn position(x: u32, i: u32, k: u32, segs: Segments) -> u32 {
    let seg = segment_bits(k, segs);
    let base = match segs {
        Segments::PerProbe => i * seg,
        Segments::One => 0,
    };
    position_in(x, seg, base)
}

/// The in-block addressing constants of a blocked or split-block filter,
/// derived once from (k, [`Segments`]) so that no probe recomputes them per key:
/// probe i of a key lands on bit `i * step + ((x_i >> 16) * seg >> 16)` of
/// its block ([`position`]), which is `i * step + (x_i >> shift)` when
/// `seg` is a power of two (every blocked filter: `x_i >> 23`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InBlockConstants {
    /// Probes per key, 1 to 64.
    pub(crate) k: u32,
    /// Bits per segment (512 when not split).
    pub(crate) seg: u32,
    /// The offset between consecutive probes' segments: `seg` when split,
    /// 0 otherwise (so the base is a multiply, not a branch).
    pub(crate) step: u32,
    /// `32 - log2(seg)` when `seg` is a power of two, 0 otherwise.
    pub(crate) shift: u32,
    /// For the vector line tests, which go 8 probes at a time: lane j of the
    /// last group of 8 is a probe (all ones) or past k (zero).
    pub(crate) last_lanes: [i32; 8],
    /// `last_lanes` with bit 0 only: the lanes the k <= 8 vector test
    /// reads its answer from, as one memory operand.
    pub(crate) last_bits: [i32; 8],
    /// For the split-block layout with k <= 16 (segments of at least 32
    /// bits), the probes that can land on each of the block's sixteen
    /// 32-bit words: a word holds bits of two probes at most, the first
    /// whose segment reaches it (`floor(32 w / seg)`) and the next, both
    /// capped at k - 1 so that no probe past k is named. The vector insert
    /// builds the key's mask from these two per word, two shifts per half
    /// block instead of one per probe ([`word_probes`](Self::word_probes));
    /// zero where unused.
    pub(crate) word_probes: [[u8; 16]; 2],
}

impl InBlockConstants {
    /// The constants for k probes (1 to 64) in a plain or split block.
    pub(crate) const fn new(k: u32, segs: Segments) -> Self {
        let seg = segment_bits(k, segs);
        Self {
            k,
            seg,
            step: match segs {
                Segments::PerProbe => seg,
                Segments::One => 0,
            },
            shift: if seg.is_power_of_two() {
                32 - seg.trailing_zeros()
            } else {
                0
            },
            last_lanes: {
                let mut lanes = [0; 8];
                let mut j = 0;
                while j < 8 {
                    lanes[j] = if (j as u32) < (k - 1) % 8 + 1 { -1 } else { 0 };
                    j += 1;
                }
                lanes
            },
            last_bits: {
                let mut lanes = [0; 8];
                let mut j = 0;
                while j < 8 {
                    lanes[j] = if (j as u32) < (k - 1) % 8 + 1 { 1 } else { 0 };
                    j += 1;
                }
                lanes
            },
            word_probes: Self::word_probes(k, seg, segs),
        }
    }

    /// The table of [`word_probes`](Self::word_probes) for k probes in
    /// segments of `seg` bits. A probe's bit lies in its segment,
    /// `[i seg, (i + 1) seg)`, so the probes on word w (bits `32 w ..
    /// 32 w + 32`) are those with `i seg <= 32 w + 31` and `(i + 1) seg >
    /// 32 w`: i from `floor(32 w / seg)` to `floor((32 w + 31) / seg)`,
    /// at most one more when `seg >= 32` (tested exhaustively below).
    const fn word_probes(k: u32, seg: u32, segs: Segments) -> [[u8; 16]; 2] {
        let mut t = [[0u8; 16]; 2];
        if !matches!(segs, Segments::PerProbe) || k > 16 {
            return t;
        }
        let last = k - 1;
        let mut w = 0;
        while w < 16 {
            let first = 32 * w as u32 / seg;
            let first = if first < last { first } else { last };
            let next = if first + 1 < last { first + 1 } else { last };
            t[0][w] = first as u8;
            t[1][w] = next as u8;
            w += 1;
        }
        t
    }

    /// How the block is divided: one segment per probe where consecutive
    /// probes' segments are apart.
    #[inline(always)]
    pub(crate) fn segments(&self) -> Segments {
        if self.step != 0 {
            Segments::PerProbe
        } else {
            Segments::One
        }
    }

    /// The in-block bit of probe `i` with mixed value `x`: [`position`],
    /// with the shift where `seg` allows it (tested equal).
    #[inline(always)]
    pub(crate) fn bit(&self, x: u32, i: u32) -> u32 {
        let offset = if self.shift != 0 {
            x >> self.shift
        } else {
            ((x >> 16) * self.seg) >> 16
        };
        i * self.step + offset
    }
}

/// Sets in-block bit `p` (0 to 511) of a block's 8 words: the one way a
/// key's mask is built, by the probes and the oracles alike.
#[inline(always)]
pub(crate) fn set_in_line(line: &mut [u64; 8], p: u32) {
    line[(p >> 6) as usize & 7] |= 1 << (p & 63);
}

/// The oracle's in-block mask of a two-hash key (its h2): each probe's
/// [`position`] set by [`set_in_line`]. The probes' fast masks are tested
/// against it.
#[cfg(test)]
pub(crate) fn reference_mask(h2: u64, k: u32, segs: Segments) -> [u64; 8] {
    let mut mask = [0u64; 8];
    for i in 0..k {
        set_in_line(&mut mask, position(lane_hash(h2, i), i, k, segs));
    }
    mask
}

/// [`position`]'s scaling: `base + ((x >> 16) * seg >> 16)`, the top 16
/// bits of `x` scaled to `[0, seg)`.
#[inline(always)]
pub(crate) fn position_in(x: u32, seg: u32, base: u32) -> u32 {
    (((x >> 16) * seg) >> 16) + base
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The per-filter constants give [`position`]'s bits (the shift where
    /// the segment is a power of two, the scaling otherwise), and the last
    /// group's lane mask has one lane per remaining probe.
    #[test]
    fn in_block_constants_match_position() {
        for segs in Segments::ALL {
            for k in 1..=64 {
                let consts = InBlockConstants::new(k, segs);
                let lanes = consts.last_lanes.iter().filter(|&&l| l == -1).count() as u32;
                assert_eq!(lanes, k - 8 * (k.div_ceil(8) - 1), "k={k}");
                assert!(consts.last_lanes.iter().all(|&l| l == 0 || l == -1));
                assert_eq!(segs, consts.segments());
                let mut x = 0x2545_f491u32;
                for i in 0..k {
                    for _ in 0..64 {
                        x = x.wrapping_mul(0x9e37_79b9).wrapping_add(0x7f4a_7c15);
                        for v in [x, 0, u32::MAX] {
                            assert_eq!(consts.bit(v, i), position(v, i, k, segs), "k={k} i={i}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn split_positions_stay_in_their_segment() {
        for k in 1u32..=64 {
            let seg = 512 / k;
            for x in [0u32, 1, u32::MAX, 0x8000_0000, 0x1234_5678] {
                for i in 0..k {
                    let p = position(x, i, k, Segments::PerProbe);
                    assert!((i * seg..(i + 1) * seg).contains(&p), "k={k} i={i} p={p}");
                }
            }
        }
    }

    /// Every bit a split-block probe can set (all of its segment, so any
    /// hash) lies on a word whose `word_probes` name that probe, and no
    /// name is past k: the vector insert's mask, built from those names,
    /// can then miss no probe and set no bit of a probe the key lacks.
    #[test]
    fn word_probes_name_every_probe_that_reaches_a_word() {
        for k in 1u32..=16 {
            let consts = InBlockConstants::new(k, Segments::PerProbe);
            let [first, next] = consts.word_probes;
            assert!(
                first.iter().chain(&next).all(|&i| u32::from(i) < k),
                "k={k}"
            );
            for i in 0..k {
                for p in i * consts.seg..(i + 1) * consts.seg {
                    let w = (p / 32) as usize;
                    assert!(
                        u32::from(first[w]) == i || u32::from(next[w]) == i,
                        "k={k}: probe {i} can set bit {p}, word {w} names {} and {}",
                        first[w],
                        next[w]
                    );
                }
            }
        }
        // Unused elsewhere: zero.
        for consts in [
            InBlockConstants::new(17, Segments::PerProbe),
            InBlockConstants::new(8, Segments::One),
        ] {
            assert_eq!(consts.word_probes, [[0; 16]; 2]);
        }
    }

    #[test]
    fn split_mask_has_one_bit_per_segment() {
        let mut h = 0x0123_4567_89ab_cdefu64;
        for k in 1u32..=64 {
            for _ in 0..100 {
                h = h.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17);
                let mask = reference_mask(h, k, Segments::PerProbe);
                let ones: u32 = mask.iter().map(|w| w.count_ones()).sum();
                assert_eq!(ones, k);
            }
        }
    }

    #[test]
    fn power_of_two_segments_take_the_top_bits() {
        for k in [1u32, 2, 4, 8, 16, 32, 64] {
            let seg_log = 9 - k.trailing_zeros();
            for x in [
                0u32,
                1,
                0xffff,
                0x1_0000,
                u32::MAX,
                0x8000_0000,
                0x1234_5678,
            ] {
                for i in 0..k {
                    assert_eq!(
                        position(x, i, k, Segments::PerProbe),
                        (i << seg_log) + (x >> (32 - seg_log))
                    );
                }
                assert_eq!(position(x, 0, k, Segments::One), x >> 23);
            }
        }
    }

    #[test]
    fn block_index_covers_the_range() {
        assert_eq!(block_index(u64::MAX, 7), 6);
        assert_eq!(block_index(0, 7), 0);
        assert_eq!(block_index(u64::MAX, 1 << 40), (1 << 40) - 1);
    }
}
