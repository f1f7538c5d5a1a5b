//! The portable SIMD kernel: keys in lanes, with the `wide` crate.
//!
//! * Blocked layouts: 8 keys per `u32x8`. For probe i, lane j holds the
//!   32-bit input of key j (the low or high half of its h2), times the
//!   probe's salt, scaled into the probe's segment
//!   (`scalar::position`): one multiply, two shifts, one multiply and
//!   one add for 8 keys, stored with one vector store (outputs are
//!   probe-major). Blocks are one scalar multiply-high per key (a vector
//!   64-bit multiply-high is four scalar ones in `wide` anyway).
//! * Flat layouts: 4 keys per `u64x4`. The start a and stride b of each key
//!   (two multiply-highs) are scalar; the scheme's sequence of modular
//!   additions runs in lanes: `s = x + y; s - (r if s > r - 1)`, exact
//!   because ranges are at most `MAX_BITS = 2^46` (no overflow).
//!
//! A partial last chunk is padded with zero hashes whose results are
//! discarded. `wide` compiles to SSE2 in a default x86-64 build and to AVX2
//! with `-C target-cpu=native`; see [`super::avx2`] for run-time AVX2.

#![forbid(unsafe_code)]

use wide::{u32x8, u64x4};

use super::scalar::store;
use super::scalar::{self, SALTS};
use super::{BlockSpec, FlatSpec};
use crate::hash::split;
use crate::scheme::{Enhancement, Scheme};

/// Keys per blocked-layout vector step.
const LANES32: usize = 8;
/// Keys per flat-layout vector step.
const LANES64: usize = 4;

pub(crate) fn block_positions(
    spec: &BlockSpec,
    hashes: &[u128],
    blocks_out: &mut [u64],
    positions_out: &mut [u32],
) {
    let n = hashes.len();
    let seg = scalar::segment_bits(spec.k, spec.split);
    let segv = u32x8::splat(seg);
    for (c, (hs, bs)) in hashes
        .chunks(LANES32)
        .zip(blocks_out.chunks_mut(LANES32))
        .enumerate()
    {
        let mut lo = [0u32; LANES32];
        let mut hi = [0u32; LANES32];
        for (j, &h) in hs.iter().enumerate() {
            let (h1, h2) = split(h);
            bs[j] = scalar::block_index(h1, spec.blocks);
            lo[j] = h2 as u32;
            hi[j] = (h2 >> 32) as u32;
        }
        let (lo, hi) = (u32x8::from(lo), u32x8::from(hi));
        let len = hs.len();
        for i in 0..spec.k {
            let x = if i % 2 == 0 { lo } else { hi };
            let y = x * u32x8::splat(SALTS[i as usize]);
            let base = if spec.split { i * seg } else { 0 };
            let p = (((y >> 16u32) * segv) >> 16u32) + u32x8::splat(base);
            let at = i as usize * n + c * LANES32;
            store(&mut positions_out[at..at + len], &p.to_array());
        }
    }
}

/// `x + y mod r` in lanes, for `x, y < r <= 2^46`.
#[inline(always)]
fn add_mod(x: u64x4, y: u64x4, r: u64x4, r_minus_1: u64x4) -> u64x4 {
    let s = x + y;
    s - (s.simd_gt(r_minus_1) & r)
}

pub(crate) fn flat_indices(spec: &FlatSpec, hashes: &[u128], out: &mut [u64]) {
    let (k, n) = (spec.k as usize, hashes.len());
    let prog = &spec.progression;
    let range = prog.range();
    let (one, two, six) = prog.constants();
    let r = u64x4::splat(range);
    let r1 = u64x4::splat(range - 1);
    for (c, hs) in hashes.chunks(LANES64).enumerate() {
        let mut a = [0u64; LANES64];
        let mut b = [0u64; LANES64];
        for (j, &h) in hs.iter().enumerate() {
            (a[j], b[j]) = prog.start_and_stride(h);
        }
        let (mut x, b) = (u64x4::from(a), u64x4::from(b));
        let len = hs.len();
        let mut emit = |i: usize, x: u64x4| {
            let v = x + u64x4::splat(i as u64 * spec.stride);
            let at = i * n + c * LANES64;
            store(&mut out[at..at + len], &v.to_array());
        };
        match prog.scheme() {
            Scheme::EnhancedDoubleHashing(Enhancement::Square) => {
                let two = u64x4::splat(two);
                let mut y = add_mod(b, u64x4::splat(one), r, r1);
                for i in 0..k {
                    emit(i, x);
                    x = add_mod(x, y, r, r1);
                    y = add_mod(y, two, r, r1);
                }
            }
            Scheme::EnhancedDoubleHashing(Enhancement::Cube) => {
                let six = u64x4::splat(six);
                let mut y = add_mod(b, u64x4::splat(one), r, r1);
                let mut z = six;
                for i in 0..k {
                    emit(i, x);
                    x = add_mod(x, y, r, r1);
                    y = add_mod(y, z, r, r1);
                    z = add_mod(z, six, r, r1);
                }
            }
            _ => {
                for i in 0..k {
                    emit(i, x);
                    x = add_mod(x, b, r, r1);
                }
            }
        }
    }
}
