//! The blocked layout: `m / 512` cache-line blocks; each key sets k bits
//! anywhere inside one block (Putze, Sanders and Singler 2009).
//!
//! * Addressing (the pure functions in [`addressing`], a leaf the kernels
//!   import too; the probe [`Blocks`] in this file): the block is `h1 * blocks >> 64`
//!   (multiply-high, no 2^32-block limit); probe i inside it takes the
//!   32-bit half `x_i` of h2 (low half for even i, high for odd), multiplies
//!   it by [`SALTS`]`[i]` and keeps the top bits: bit `(x_i * SALTS[i]) >> 23`
//!   of the block (blocked), or bit `i * S + ((x_i * SALTS[i]) >> 16) * S >>
//!   16` with `S = floor(512 / k)` (split-block: one bit per segment; for
//!   k = 8 one bit per u64 word). One cache line per key, whatever k.
//! * Probe: the key's block is read once as 8 words and its k bits tested
//!   with `ok &= word >> bit`: no branch depends on the data. A key's bits
//!   are set by OR-ing an 8-word mask into the block.
//! * FPR: [`crate::rates::blocked_fpr`], the binomial mixture over the
//!   query block's load of the exact rate of a 512-bit block. It needs 9.92
//!   bits/key for 1% (classic: 9.59).
//! * Sizing: m a multiple of 512, the smallest meeting p by that formula for
//!   each k near the optimum; the best k is below `c ln 2` at high bits/key.
//! * k: 1 to [`MAX_HASHES`](crate::util::limits::MAX_HASHES) (the SIMD kernels do
//!   8 probes per vector step).
//! * All two-hash schemes address a block the same way (the in-block
//!   positions come from the salts, not from the scheme's progression: a
//!   progression modulo 512 has only 512 x 256 distinct probe sets, so keys
//!   in one block would coincide entirely far too often). `Independent` uses
//!   k hash computations, the baseline.
//! * Current FPR from the fill: the mean over blocks of `(ones/512)^k`.
//!   Cardinality: the sum over blocks of `ln(1 - x/B) / (q ln(1 - 1/S))`
//!   ([`estimated_len`]: B probed bits, S bits per probe's choice, q probes
//!   per key into them).

#![forbid(unsafe_code)]

pub(crate) mod addressing;

pub(crate) use crate::simd::block::{KeyRoute, VectorBackend};

pub(crate) use addressing::{
    BLOCK_BITS, InBlockConstants, Segments, block_index, lane_hash, lane_input, position,
    set_in_line,
};

use crate::Error;
use crate::hash::{Secrets, independent_hash, split};
use crate::layout::Layout;
use crate::rates::{blocked_fpr, classic_bits_guess, smallest_bits_search, split_block_fpr};
use crate::simd::kernel::Kernel;
use crate::util::bits::{Line, Words, WordsMut};
use crate::util::limits::MAX_HASHES;
use crate::util::salts::SALTS;

/// The addressing and probe of a blocked or split-block filter: which
/// 512-bit block a key's hash selects and which k bits inside it. Every
/// path (single key, batch, parallel, view, atomic) tests and sets bits
/// through this; the SIMD kernels compute the same positions and are
/// tested against [`position`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Blocks {
    blocks: u64,
    /// Where each probe lands inside the block.
    consts: InBlockConstants,
    /// The vector line test, if the kernel in use has one.
    vector: VectorBackend,
}

impl Blocks {
    /// `blocks` blocks (at least 1), k probes (1 to 64), probed with the
    /// vector line test of `kernel` where it has one.
    pub(crate) fn new(blocks: u64, k: u32, segs: Segments, kernel: Kernel) -> Self {
        Self {
            blocks: blocks.max(1),
            consts: InBlockConstants::new(k, segs),
            vector: VectorBackend::for_kernel(kernel),
        }
    }

    /// The same probe, with the vector line test of `kernel`.
    pub(crate) fn with_kernel(self, kernel: Kernel) -> Self {
        Self {
            vector: VectorBackend::for_kernel(kernel),
            ..self
        }
    }

    /// The one-key route of this filter's kernel, hashing under `secrets`
    /// (the same bits as [`test`](Self::test) and [`set`](Self::set)).
    pub(crate) fn key_route(&self, secrets: Secrets) -> KeyRoute {
        KeyRoute::blocked(&self.vector, self.blocks, self.consts, secrets)
    }

    /// The block of a key whose low hash half is `h1`.
    #[inline(always)]
    pub(crate) fn block(&self, h1: u64) -> usize {
        block_index(h1, self.blocks) as usize
    }

    /// Calls `f(p)` with the in-block bit p of each of the k probes of a
    /// two-hash key (its h2), in probe order.
    ///
    /// Written for a short dependency chain: probes go in pairs (the even
    /// one uses the low half of h2, the odd one the high half, so no shift
    /// selects the half), and a power-of-two segment (every blocked filter,
    /// split-block with k a power of two) takes the top bits with one shift
    /// instead of a multiply and two shifts; the values are those of
    /// [`position`] either way (tested).
    #[inline(always)]
    fn for_each_bit(&self, h2: u64, mut f: impl FnMut(u32)) {
        let (lo, hi) = (h2 as u32, (h2 >> 32) as u32);
        let InBlockConstants { k, step, shift, .. } = self.consts;
        let salts = &SALTS[..k as usize];
        if shift != 0 {
            let mut base = 0;
            let mut pairs = salts.chunks_exact(2);
            for pair in &mut pairs {
                f(base + (lo.wrapping_mul(pair[0]) >> shift));
                f(base + step + (hi.wrapping_mul(pair[1]) >> shift));
                base += 2 * step;
            }
            if let [salt] = pairs.remainder() {
                f(base + (lo.wrapping_mul(*salt) >> shift));
            }
        } else {
            for (i, &salt) in (0..k).zip(salts) {
                let x = lane_input(h2, i).wrapping_mul(salt);
                f(self.consts.bit(x, i));
            }
        }
    }

    /// Whether the k bits of a two-hash key (its h2) are all set in `line`:
    /// by the vector line test where there is one, else branch-free scalar
    /// code. A block read word by word (atomic words) reaches the vector
    /// test put together in registers, never through a stack copy, whose
    /// vector loads would wait on eight stores (docs/bench-notes,
    /// 2026-11-28 and 2026-11-29, "The atomic filter's one-key calls").
    #[inline(always)]
    pub(crate) fn test_line<L: Line>(&self, line: L, h2: u64) -> bool {
        if let Some(found) = self.vector.block_test(&line, h2, &self.consts) {
            return found;
        }
        self.test_line_scalar(line, h2)
    }

    /// Whether each key of a chunk (its block and hash) is possibly in the
    /// plain `words`, answers in `out`: one vector call per chunk where the
    /// kernel has a vector line test, the scalar probe per key otherwise.
    #[inline(always)]
    pub(crate) fn test_chunk(
        &self,
        words: &[u64],
        blocks: &[usize],
        hashes: &[u128],
        out: &mut [bool],
    ) {
        if !self
            .vector
            .block_test_chunk(words, blocks, hashes, self.consts, out)
        {
            self.test_chunk_scalar(words, blocks, hashes, out);
        }
    }

    /// [`test_chunk`](Self::test_chunk) by the scalar probe, out of line
    /// like the vector line tests' chunk functions: inlined into the batch
    /// pipeline beside their calls, its per-key loop lost registers to
    /// them (more instructions per key; docs/bench-notes/2026-11-26.md).
    #[inline(never)]
    fn test_chunk_scalar(
        &self,
        words: &[u64],
        blocks: &[usize],
        hashes: &[u128],
        out: &mut [bool],
    ) {
        for ((&b, &h), o) in blocks.iter().zip(hashes).zip(out) {
            *o = self.test_line_scalar(words.line(b), split(h).1);
        }
    }

    /// [`test_line`](Self::test_line) in scalar code, each probe `ok &=
    /// word >> bit`: the oracle of the vector line test.
    #[inline(always)]
    pub(crate) fn test_line_scalar(&self, line: impl Line, h2: u64) -> bool {
        let mut ok = 1;
        self.for_each_bit(h2, |p| {
            ok &= line.get((p >> 6) as usize) >> (p & 63);
        });
        ok & 1 == 1
    }

    /// The in-block mask of a two-hash key (its h2).
    #[inline(always)]
    pub(crate) fn mask(&self, h2: u64) -> [u64; 8] {
        let mut mask = [0u64; 8];
        self.for_each_bit(h2, |p| set_in_line(&mut mask, p));
        mask
    }

    /// Whether a two-hash key is possibly in `words`. Plain words with a
    /// vector line test: one call from the hash to the answer (the block, its
    /// bounds check and the probe in the same vector function).
    #[inline(always)]
    pub(crate) fn test<W: Words + ?Sized>(&self, words: &W, hash: u128) -> bool {
        if let Some(plain) = words.as_plain()
            && let Some(found) = self
                .vector
                .block_contains(plain, hash, self.blocks, &self.consts)
        {
            return found;
        }
        self.test_other(words, hash)
    }

    /// [`test`](Self::test) without the fused vector call (atomic words,
    /// a kernel without a vector line test), out of line: inlined into `test`,
    /// its register needs made every fused query save and restore six
    /// registers.
    #[inline(never)]
    fn test_other<W: Words + ?Sized>(&self, words: &W, hash: u128) -> bool {
        let (h1, h2) = split(hash);
        self.test_line(words.line(self.block(h1)), h2)
    }

    /// Sets a two-hash key's bits in `words` (as [`test`](Self::test)
    /// tests them).
    #[inline(always)]
    pub(crate) fn set<W: WordsMut + ?Sized>(&self, words: &mut W, hash: u128) {
        if let Some(plain) = words.plain()
            && self
                .vector
                .block_insert(plain, hash, self.blocks, &self.consts)
        {
            return;
        }
        let b = self.block(split(hash).0);
        self.set_chunk(words, &[b], &[hash]);
    }

    /// Sets the bits of each key of a chunk (its block and hash) in
    /// `words`: one vector call per chunk into plain words where the kernel
    /// has a vector line test; otherwise plain words get each probe's bit ORed
    /// straight into its word of the line, and other storage (atomic) the
    /// key's [`mask`](Self::mask) ORed into the line.
    ///
    /// Plain words skip the mask: built in a stack array, it cost four
    /// zeroing stores, a read-modify-write per probe, and a failed store
    /// forward when read back as 16-byte vectors over the 8-byte ORs
    /// (instruction counts in docs/bench-notes/2026-11-26.md).
    #[inline(always)]
    pub(crate) fn set_chunk<W: WordsMut + ?Sized>(
        &self,
        words: &mut W,
        blocks: &[usize],
        hashes: &[u128],
    ) {
        if let Some(plain) = words.plain() {
            if self
                .vector
                .block_set_chunk(plain, blocks, hashes, self.consts)
            {
                return;
            }
            self.set_chunk_scalar(plain, blocks, hashes);
            return;
        }
        for (&b, &h) in blocks.iter().zip(hashes) {
            words.or_line(b, self.mask(split(h).1));
        }
    }

    /// [`set_chunk`](Self::set_chunk) into plain words by the scalar probe,
    /// out of line for the reason [`test_chunk_scalar`](Self::test_chunk_scalar) is.
    #[inline(never)]
    fn set_chunk_scalar(&self, words: &mut [u64], blocks: &[usize], hashes: &[u128]) {
        let (lines, _) = words.as_chunks_mut::<8>();
        for (&b, &h) in blocks.iter().zip(hashes) {
            let line = &mut lines[b];
            self.for_each_bit(split(h).1, |p| set_in_line(line, p));
        }
    }

    /// The block and mask of a key under the `Independent` scheme: block
    /// from hash 0, probe i from the low 32 bits of hash i (k hash
    /// computations: the baseline).
    fn independent(&self, bytes: &[u8], seed: u64) -> (usize, [u64; 8]) {
        let mut mask = [0u64; 8];
        let mut block = 0;
        for i in 0..self.consts.k {
            let h = independent_hash(bytes, seed, i);
            if i == 0 {
                block = self.block(h);
            }
            set_in_line(&mut mask, self.consts.bit(h as u32, i));
        }
        (block, mask)
    }

    /// [`test`](Self::test) for the `Independent` scheme.
    pub(crate) fn test_independent<W: Words + ?Sized>(
        &self,
        words: &W,
        bytes: &[u8],
        seed: u64,
    ) -> bool {
        let (block, mask) = self.independent(bytes, seed);
        let line = words.line(block);
        (0..8).fold(0, |miss, w| miss | (mask[w] & !line.get(w))) == 0
    }

    /// [`set`](Self::set) for the `Independent` scheme.
    pub(crate) fn set_independent<W: WordsMut + ?Sized>(
        &self,
        words: &mut W,
        bytes: &[u8],
        seed: u64,
    ) {
        let (block, mask) = self.independent(bytes, seed);
        words.or_line(block, mask);
    }

    /// The oracle: a key's bit positions in probe order, computed directly
    /// from [`block_index`], [`lane_hash`] and [`position`] (allocates).
    pub(crate) fn positions(
        &self,
        bytes: &[u8],
        family: crate::HashFamily,
        seed: u64,
        two_hash: bool,
    ) -> Vec<u64> {
        let k = self.consts.k;
        let segs = self.consts.segments();
        let (block, xs): (u64, Vec<u32>) = if two_hash {
            let (h1, h2) = split(family.hash_key(bytes, seed));
            (
                block_index(h1, self.blocks),
                (0..k).map(|i| lane_hash(h2, i)).collect(),
            )
        } else {
            let hs: Vec<u64> = (0..k).map(|i| independent_hash(bytes, seed, i)).collect();
            (
                block_index(hs[0], self.blocks),
                hs.iter().map(|&h| h as u32).collect(),
            )
        };
        (0..k)
            .map(|i| block * BLOCK_BITS + u64::from(position(xs[i as usize], i, k, segs)))
            .collect()
    }
}

impl Segments {
    /// The segments of a blocked layout's blocks: one per probe for
    /// [`Layout::SplitBlock`], one otherwise ([`Layout::Blocked`]).
    pub(crate) fn of(layout: Layout) -> Self {
        if layout == Layout::SplitBlock {
            Segments::PerProbe
        } else {
            Segments::One
        }
    }
}

/// The ideal-hashing rate of a blocked (or split-block) filter.
pub(crate) fn fpr(segs: Segments, m: u64, n: u64, k: u32) -> f64 {
    match segs {
        Segments::PerProbe => split_block_fpr(m, n, k),
        Segments::One => blocked_fpr(m, n, k),
    }
}

/// Whether k is offered by the layout: 1 to `MAX_HASHES` for both (the
/// split-block layout cuts its block into k segments of `floor(512 / k)`
/// bits; a power of two wastes no bit and k = 8 is one bit per word).
pub(crate) fn valid_k(k: u32) -> bool {
    (1..=MAX_HASHES).contains(&k)
}

/// The k values tried when sizing for p.
fn candidates(p: f64) -> Vec<u32> {
    // The classic optimum is log2(1/p); blocked filters want a little less.
    let k0 = (1.0 / p).log2().round().clamp(1.0, f64::from(MAX_HASHES)) as u32;
    (1..=MAX_HASHES)
        .filter(|&k| valid_k(k))
        .filter(|&k| 2 * k + 1 >= k0 && k <= k0 + 2)
        .collect()
}

/// `(m, k)` for n keys at rate p; `fpr` is the layout's full rate (with the
/// scheme's term).
pub(crate) fn size_for(
    n: u64,
    p: f64,
    fixed_k: Option<u32>,
    fpr: impl Fn(u64, u32) -> f64,
) -> Result<(u64, u32), Error> {
    let ks = match fixed_k {
        Some(k) => vec![k],
        None => candidates(p),
    };
    if n == 0 {
        return Ok((BLOCK_BITS, ks[0].min(fixed_k.unwrap_or(1))));
    }
    super::best_of(p, ks, |k, below| {
        let guess = classic_bits_guess(n, p, k);
        smallest_bits_search(p, BLOCK_BITS, guess, below, |m| fpr(m, k))
    })
}

/// The k minimising the rate of m bits holding n keys.
pub(crate) fn optimal_hashes(segs: Segments, m: u64, n: u64) -> u32 {
    if n == 0 {
        return 1;
    }
    let ideal = m as f64 / n as f64 * std::f64::consts::LN_2;
    // Clamped as f64: at huge m/n the u32 cast saturates and `+ 1` overflowed.
    let hi = (ideal.ceil() + 1.0).clamp(1.0, f64::from(MAX_HASHES)) as u32;
    let lo = (hi / 2).max(1);
    let (mut best_k, mut best_p) = (0, f64::INFINITY);
    for k in lo..=hi {
        let p = fpr(segs, m, n, k);
        if p < best_p {
            (best_k, best_p) = (k, p);
        }
    }
    best_k.max(1)
}

/// Set bits in the bit range `[start, end)` of `words`.
fn ones(words: &[u64], start: u64, end: u64) -> u64 {
    crate::util::bits::count_ones_in(|w| words[w], start, end)
}

/// `(segments, segment bits)` of a block.
fn segments(segs: Segments, k: u32) -> (u64, u64) {
    match segs {
        Segments::PerProbe => (u64::from(k), BLOCK_BITS / u64::from(k)),
        Segments::One => (1, BLOCK_BITS),
    }
}

/// The false-positive rate now: the mean over blocks of the block's rate
/// given its fill.
pub(crate) fn current_fpr(segments_of: Segments, words: &[u64], blocks: u64, k: u32) -> f64 {
    let (segs, seg) = segments(segments_of, k);
    let total: f64 = (0..blocks)
        .map(|b| {
            if segments_of == Segments::PerProbe {
                (0..segs)
                    .map(|s| {
                        let start = b * BLOCK_BITS + s * seg;
                        ones(words, start, start + seg) as f64 / seg as f64
                    })
                    .product::<f64>()
            } else {
                let start = b * BLOCK_BITS;
                (ones(words, start, start + BLOCK_BITS) as f64 / BLOCK_BITS as f64).powi(k as i32)
            }
        })
        .sum();
    total / blocks.max(1) as f64
}

/// The estimated number of distinct keys: the sum over blocks of the
/// number of keys that fills the block's bits as they are, on average.
///
/// A block holding L keys has, in expectation, `B (1 - 1/S)^(q L)` clear
/// bits among its B probed bits, with S the bits one probe chooses from and
/// q the probes per key into each of them: blocked, B = S = 512 and q = k
/// (k probes anywhere in the block); split-block, B = k S and q = 1 (one
/// probe per segment of S = floor(512/k) bits; the bits past k S are never
/// probed). Solving for L gives `ln(1 - x/B) / (q ln(1 - 1/S))` for x set
/// bits. The per-segment form with `-1/S` in place of `ln(1 - 1/S)` (the
/// classic approximation) overestimated a split-block filter by 1.0% at
/// k = 7 (S = 73) and a blocked one by 0.14%; pooling a block's segments
/// also makes the estimate's curvature (Jensen) bias k times smaller.
/// Measured bias now under 0.1% for both at fills up to the design point
/// (`tests/blocked.rs`).
pub(crate) fn estimated_len(segments_of: Segments, words: &[u64], blocks: u64, k: u32) -> f64 {
    let (segs, seg) = segments(segments_of, k);
    let per_probe = segments_of == Segments::PerProbe;
    let probed = segs * seg;
    let per_key = if per_probe { 1.0 } else { f64::from(k) };
    let per_bit = per_key * (-1.0 / seg as f64).ln_1p();
    (0..blocks)
        .map(|b| {
            let x = if per_probe {
                (0..segs)
                    .map(|s| {
                        let start = b * BLOCK_BITS + s * seg;
                        ones(words, start, start + seg)
                    })
                    .sum()
            } else {
                ones(words, b * BLOCK_BITS, (b + 1) * BLOCK_BITS)
            };
            (-(x as f64) / probed as f64).ln_1p() / per_bit
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_support::next;

    /// Every vector line test to check against the scalar one, named: each
    /// available kernel's, and `wide`'s even where the kernel does not
    /// choose it (`wide::BLOCK_LINE_TEST`).
    fn probes(blocks: u64, k: u32, segs: Segments) -> Vec<(String, Blocks)> {
        let mut probes: Vec<(String, Blocks)> = Kernel::available()
            .into_iter()
            .map(|kernel| (kernel.name().into(), Blocks::new(blocks, k, segs, kernel)))
            .collect();
        let wide = Blocks::new(blocks, k, segs, Kernel::Scalar);
        probes.push((
            "wide probe".into(),
            Blocks {
                vector: VectorBackend::wide(),
                ..wide
            },
        ));
        probes
    }

    /// The probe's fast bit enumeration (pairs, power-of-two shift) gives
    /// the oracle's bits, for every k and both layouts.
    #[test]
    fn mask_equals_the_positions_oracle() {
        let mut state = 1;
        for segs in Segments::ALL {
            for k in 1..=MAX_HASHES {
                let b = Blocks::new(1, k, segs, Kernel::Scalar);
                for _ in 0..200 {
                    let h2 = next(&mut state);
                    let naive = addressing::reference_mask(h2, k, segs);
                    assert_eq!(b.mask(h2), naive, "k={k} {segs:?}");
                }
            }
        }
    }

    /// Every kernel's probe answers as the scalar probe, on lines from
    /// empty to full and on the key's own mask with one bit cleared.
    #[test]
    fn every_kernel_probe_equals_the_scalar_probe() {
        let mut state = 7;
        for segs in Segments::ALL {
            for k in 1..=MAX_HASHES {
                let scalar = Blocks::new(1, k, segs, Kernel::Scalar);
                for (kernel, b) in probes(1, k, segs) {
                    for round in 0..300 {
                        let h2 = next(&mut state);
                        let mut line: [u64; 8] = std::array::from_fn(|_| next(&mut state));
                        // Denser and sparser lines: AND or OR a few draws.
                        for _ in 0..round % 4 {
                            for w in &mut line {
                                *w = if round % 2 == 0 {
                                    *w | next(&mut state)
                                } else {
                                    *w & next(&mut state)
                                };
                            }
                        }
                        let mask = b.mask(h2);
                        for candidate in [line, mask, [u64::MAX; 8], [0; 8]] {
                            assert_eq!(
                                b.test_line(&candidate, h2),
                                scalar.test_line_scalar(&candidate, h2),
                                "{kernel:?} k={k} {segs:?}"
                            );
                        }
                        assert!(b.test_line(&mask, h2), "{kernel:?} k={k}: own mask");
                        // Clear each of the key's bits in turn: a miss.
                        for w in 0..8 {
                            let mut m = mask[w];
                            while m != 0 {
                                let bit = m & m.wrapping_neg();
                                let mut cleared = [u64::MAX; 8];
                                cleared[w] &= !bit;
                                for (c, &own) in cleared.iter_mut().zip(&mask) {
                                    *c &= own | line[0];
                                }
                                cleared[w] &= !bit;
                                assert!(!b.test_line(&cleared, h2), "{kernel:?} k={k} {segs:?}");
                                m &= m - 1;
                            }
                        }
                    }
                }
            }
        }
    }

    /// The chunk probe of every kernel answers as the scalar probe of each
    /// key: random, full, empty and own-mask-minus-one-bit lines, chunks of
    /// 0 to 32 keys over several blocks.
    #[test]
    fn every_kernel_chunk_probe_equals_the_scalar_probe() {
        let mut state = 11;
        let blocks = 5usize;
        for segs in Segments::ALL {
            for k in 1..=MAX_HASHES {
                let scalar = Blocks::new(blocks as u64, k, segs, Kernel::Scalar);
                for (kernel, b) in probes(blocks as u64, k, segs) {
                    for len in [0usize, 1, 7, 32] {
                        let hashes: Vec<u128> = (0..len)
                            .map(|_| {
                                u128::from(next(&mut state)) << 64 | u128::from(next(&mut state))
                            })
                            .collect();
                        let at: Vec<usize> = hashes.iter().map(|&h| b.block(split(h).0)).collect();
                        // Block 0 random, 1 full, 2 empty, 3 and 4 hold the
                        // chunk's keys but the last key's first bit.
                        let mut words: Vec<u64> =
                            (0..blocks * 8).map(|_| next(&mut state)).collect();
                        words[8..16].fill(u64::MAX);
                        words[16..24].fill(0);
                        let mut last = None;
                        for (&bl, &h) in at.iter().zip(&hashes) {
                            if bl >= 3 {
                                let mask = b.mask(split(h).1);
                                for (w, m) in words[bl * 8..bl * 8 + 8].iter_mut().zip(mask) {
                                    *w |= m;
                                }
                                let w = mask.iter().position(|&m| m != 0).unwrap();
                                last = Some((bl, w, mask[w] & mask[w].wrapping_neg()));
                            }
                        }
                        if let Some((bl, w, bit)) = last {
                            words[bl * 8 + w] &= !bit;
                        }
                        // Setting: every kernel's chunk set = the scalar
                        // masks ORed in, on random starting words.
                        let mut set = words.clone();
                        b.set_chunk(&mut set[..], &at, &hashes);
                        let mut expect = words.clone();
                        for (&bl, &h) in at.iter().zip(&hashes) {
                            let mask = scalar.mask(split(h).1);
                            for (w, m) in expect[bl * 8..bl * 8 + 8].iter_mut().zip(mask) {
                                *w |= m;
                            }
                        }
                        assert_eq!(set, expect, "{kernel:?} k={k} {segs:?} set");
                        // The single-key set and test (the fused vector
                        // calls on plain words) agree with the chunk's.
                        let mut single = words.clone();
                        for &h in &hashes {
                            b.set(&mut single[..], h);
                        }
                        assert_eq!(single, expect, "{kernel:?} k={k} {segs:?} set");
                        for &h in &hashes {
                            let line = &words.as_chunks::<8>().0[b.block(split(h).0)];
                            let expect = scalar.test_line_scalar(line, split(h).1);
                            assert_eq!(b.test(&words[..], h), expect, "{kernel:?} k={k}");
                        }
                        let mut out = vec![true; len];
                        b.test_chunk(&words, &at, &hashes, &mut out);
                        for (j, (&bl, &h)) in at.iter().zip(&hashes).enumerate() {
                            let line: &[u64; 8] = words[bl * 8..bl * 8 + 8].try_into().unwrap();
                            let expect = scalar.test_line_scalar(line, split(h).1);
                            assert_eq!(out[j], expect, "{kernel:?} k={k} {segs:?} j={j}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn candidates_hold_the_optimum() {
        use crate::rates::smallest_bits;
        for p in [0.1, 0.01, 1e-3, 1e-4, 1e-6] {
            for segs in Segments::ALL {
                let ks = candidates(p);
                assert!(!ks.is_empty(), "p={p} {segs:?}");
                // The best k over every valid k is among the candidates.
                let n = 100_000;
                let best = (1..=MAX_HASHES)
                    .filter(|&k| valid_k(k))
                    .filter_map(|k| {
                        smallest_bits(p, BLOCK_BITS, |m| fpr(segs, m, n, k)).map(|m| (m, k))
                    })
                    .min()
                    .unwrap();
                assert!(
                    ks.contains(&best.1),
                    "p={p} {segs:?}: best {best:?} not in {ks:?}"
                );
            }
        }
    }
}
