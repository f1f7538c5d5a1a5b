//! The parallel insert without atomics: partition the batch by where its
//! bits go, then let each thread set the bits of one part of the array
//! with plain stores.
//!
//! The bit array is cut into [`Parts`]: runs of 2^s whole blocks (a power
//! of two, so a position's part is one shift), about four per thread so
//! that rayon can balance uneven parts. The keys go through in rounds of
//! [`ROUND_TASKS`] tasks per thread, [`PAR_TASK`] keys per task, so the
//! buffers stay small and in cache whatever the batch's size:
//!
//! 1. **Bucket** (parallel over the round's tasks): each task hashes its
//!    keys and derives their destinations exactly as the sequential
//!    pipeline does ([`Stage::prepare`]), then appends each key's hash
//!    (blocked layouts: one block per key) or each bit index (flat
//!    layouts: k per key) to its bucket for that destination's part.
//! 2. **Set** (parallel over the parts): the task owning part p takes the
//!    part's words as a `&mut [u64]` of its own (`par_chunks_mut`: disjoint
//!    by construction, no `unsafe`, no atomics) and sets the bits of every
//!    task's bucket p, prefetching a chunk ahead like the sequential
//!    pipeline.
//!
//! Setting bits is an OR, commutative and idempotent, so the order in which
//! parts and buckets are applied cannot change the result: the filter is
//! bit-identical to [`BloomFilter::insert_batch`]'s (tested for every
//! layout, scheme and 1 to 8 threads in `tests/par.rs`).
//!
//! The relaxed-atomic path this replaced paid a locked `fetch_or` per word
//! (per probe for flat layouts): on two threads it was twice as slow as the
//! sequential insert at 1e7 keys (docs/benchmarks.md, issue 27).

#![forbid(unsafe_code)]

use std::ops::Range;

use rayon::prelude::*;

use super::PAR_TASK;
use crate::batch::{CHUNK, Plan, Stage};
use crate::bits::Block;
use crate::geometry::Tuning;
use crate::kernel::Kernel;
use crate::layout::blocked::Blocks;
use crate::prefetch::prefetch;

/// Tasks per thread in one round: two, so a thread that finishes early
/// steals work instead of waiting at the round's end.
const ROUND_TASKS: usize = 2;

/// Parts per thread (at most; fewer for small filters): enough for rayon
/// to balance parts of unequal load and for a part's words to stay in a
/// core's L2 cache while its buckets are set (a 12 MiB filter on two
/// threads: 32 parts of 384 KiB).
const PARTS_PER_THREAD: usize = 16;

/// At most this many parts, so that a task's bucket for a part holds about
/// 256 keys or more (`PAR_TASK / MAX_PARTS`): short buckets would spend
/// their time starting the prefetch window.
const MAX_PARTS: usize = 64;

/// Words per block.
const BLOCK_WORDS: usize = (Block::BITS / 64) as usize;

/// The bit array cut into runs of `2^shift` blocks; the last may be short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Parts {
    shift: u32,
    count: usize,
}

impl Parts {
    /// The smallest power-of-two part size giving at most `wanted` parts
    /// over `blocks` blocks (at least one part).
    fn new(blocks: usize, wanted: usize) -> Self {
        let wanted = wanted.max(1);
        let mut shift = 0;
        while blocks.div_ceil(1 << shift) > wanted {
            shift += 1;
        }
        Self {
            shift,
            count: blocks.div_ceil(1 << shift).max(1),
        }
    }

    /// Words per part.
    fn words(self) -> usize {
        BLOCK_WORDS << self.shift
    }

    /// The part holding block `b`.
    #[inline(always)]
    fn of_block(self, b: usize) -> usize {
        b >> self.shift
    }

    /// The part holding bit `x`.
    #[inline(always)]
    fn of_bit(self, x: u64) -> usize {
        (x >> (Block::BITS.trailing_zeros() + self.shift)) as usize
    }
}

/// Inserts the `n` keys whose hashes `fill(start, out)` writes into
/// `words` (the filter's words under `plan`), partitioned as the module
/// docs say. The caller has checked that the batch is worth splitting.
pub(super) fn insert(
    plan: &Plan,
    tuning: Tuning,
    words: &mut [u64],
    n: usize,
    fill: impl Fn(usize, &mut [u128]) + Sync,
) {
    let threads = rayon::current_num_threads();
    let parts = Parts::new(
        words.len() / BLOCK_WORDS,
        (PARTS_PER_THREAD * threads).min(MAX_PARTS),
    );
    let pf = tuning.prefetch.applies_to(std::mem::size_of_val(words));
    let kernel = tuning.kernel;
    match plan {
        Plan::Blocks(p) => rounds(
            words,
            n,
            parts,
            threads,
            |keys, buckets: &mut [Vec<u128>]| {
                each_chunk(plan, kernel, keys, &fill, |stage| {
                    for (&b, &h) in stage.blocks().iter().zip(stage.hashes()) {
                        buckets[parts.of_block(b)].push(h);
                    }
                });
            },
            |part, first_block, hashes| set_blocks(p, part, first_block, hashes, pf),
        ),
        Plan::Flat(_) => rounds(
            words,
            n,
            parts,
            threads,
            |keys, buckets: &mut [Vec<u64>]| {
                each_chunk(plan, kernel, keys, &fill, |stage| {
                    for &x in stage.indices() {
                        buckets[parts.of_bit(x)].push(x);
                    }
                });
            },
            |part, first_block, bits| set_bits(part, first_block, bits, pf),
        ),
    }
}

/// Runs `f` on the prepared stage of each chunk of the keys `keys`.
fn each_chunk(
    plan: &Plan,
    kernel: Kernel,
    keys: Range<usize>,
    fill: &(impl Fn(usize, &mut [u128]) + Sync),
    mut f: impl FnMut(&Stage),
) {
    let mut stage = Stage::new(plan);
    let mut s = keys.start;
    while s < keys.end {
        let len = CHUNK.min(keys.end - s);
        stage.prepare(plan, kernel, len, |hs| fill(s, hs));
        f(&stage);
        s += len;
    }
}

/// The two phases, round after round: `bucket(keys, buckets)` sorts the
/// destinations of a task's keys into one bucket per part; `set(words of
/// part p, first block of p, bucket p)` sets them, once per task.
fn rounds<E: Send + Sync>(
    words: &mut [u64],
    n: usize,
    parts: Parts,
    threads: usize,
    bucket: impl Fn(Range<usize>, &mut [Vec<E>]) + Sync,
    set: impl Fn(&mut [u64], usize, &[E]) + Sync,
) {
    let per_round = ROUND_TASKS * threads;
    let mut tasks: Vec<Vec<Vec<E>>> = (0..per_round)
        .map(|_| (0..parts.count).map(|_| Vec::new()).collect())
        .collect();
    let mut start = 0;
    while start < n {
        let count = (n - start).div_ceil(PAR_TASK).min(per_round);
        let round = &mut tasks[..count];
        round.par_iter_mut().enumerate().for_each(|(t, buckets)| {
            buckets.iter_mut().for_each(Vec::clear);
            let first = start + t * PAR_TASK;
            bucket(first..(first + PAR_TASK).min(n), buckets);
        });
        let round = &*round;
        words
            .par_chunks_mut(parts.words())
            .enumerate()
            .for_each(|(p, part)| {
                for buckets in round {
                    set(part, p << parts.shift, &buckets[p]);
                }
            });
        start += count * PAR_TASK;
    }
}

/// Sets the keys `hashes` (all in this part) into `words`, the part whose
/// first block is `first`: chunk by chunk through the layout's batch probe,
/// the next chunk's lines prefetched before this one is set.
fn set_blocks(p: &Blocks, words: &mut [u64], first: usize, hashes: &[u128], pf: bool) {
    let mut ring = [[0usize; CHUNK]; 2];
    let locate = |blocks: &mut [usize; CHUNK], chunk: &[u128], words: &[u64]| {
        for (b, &h) in blocks.iter_mut().zip(chunk) {
            *b = p.block(h as u64) - first;
            if pf {
                prefetch(words, *b * BLOCK_WORDS);
            }
        }
    };
    let mut chunks = hashes.chunks(CHUNK).peekable();
    if let Some(chunk) = chunks.peek() {
        locate(&mut ring[0], chunk, words);
    }
    let mut c = 0;
    while let Some(chunk) = chunks.next() {
        if let Some(next) = chunks.peek() {
            locate(&mut ring[(c + 1) % 2], next, words);
        }
        p.set_chunk(words, &ring[c % 2][..chunk.len()], chunk);
        c += 1;
    }
}

/// Lines requested ahead of the bit being set in [`set_bits`]: about as
/// many as the blocked layouts keep in flight.
const BIT_PREFETCH_AHEAD: usize = 32;

/// Sets the bits `bits` (all in this part) into `words`, the part whose
/// first block is `first`.
fn set_bits(words: &mut [u64], first: usize, bits: &[u64], pf: bool) {
    let base = first as u64 * Block::BITS;
    let word = |x: u64| ((x - base) / 64) as usize;
    for (i, &x) in bits.iter().enumerate() {
        if pf && let Some(&ahead) = bits.get(i + BIT_PREFETCH_AHEAD) {
            prefetch(words, word(ahead));
        }
        words[word(x)] |= 1 << (x % 64);
    }
}

#[cfg(test)]
mod tests {
    use super::Parts;

    #[test]
    fn parts_cover_the_blocks_in_at_most_the_wanted_count() {
        for blocks in [1, 2, 3, 7, 8, 9, 100, 1000, 1 << 20, (1 << 20) + 1] {
            for wanted in [1, 2, 3, 4, 8, 16, 64] {
                let p = Parts::new(blocks, wanted);
                assert!(p.count <= wanted.max(1), "{blocks} {wanted} {p:?}");
                assert!(
                    p.count * (1 << p.shift) >= blocks,
                    "{blocks} {wanted} {p:?}"
                );
                // The smallest such shift: one less would need too many parts.
                if p.shift > 0 {
                    assert!(blocks.div_ceil(1 << (p.shift - 1)) > wanted);
                }
                assert_eq!(p.of_block(blocks - 1), p.count - 1);
                assert_eq!(p.of_bit((blocks as u64 - 1) * 512 + 511), p.count - 1);
                assert_eq!(p.of_bit(((1 << p.shift) * 512) as u64 - 1), 0);
            }
        }
    }
}
