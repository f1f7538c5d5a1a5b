//! Parallel updates without atomics (feature `rayon`): split a batch
//! by where its updates land, then let each thread apply those of one part
//! of the storage with plain stores.
//!
//! The storage (a filter's bits, a sketch's counters: `&mut [u64]`) is cut
//! into [`Parts`]: runs of 2^s whole 64-byte blocks (a power of two, so a
//! position's part is one shift), up to [`PARTS_PER_THREAD`] per thread so
//! that rayon can balance uneven parts and a part's words stay in a core's
//! L2 cache while they are updated. The items go through in rounds of
//! [`ROUND_TASKS`] tasks per thread, [`TASK`] items per task, so the
//! buffers stay small and in cache whatever the batch's size:
//!
//! 1. **Bucket** (parallel over the round's tasks): each task derives its
//!    items' destinations and appends each update to its bucket for the
//!    destination's part.
//! 2. **Apply** (parallel over the parts): the task owning part p takes the
//!    part's words as a `&mut [u64]` of its own (`par_chunks_mut`: disjoint
//!    by construction, no `unsafe`, no atomics) and applies every task's
//!    bucket p.
//!
//! The result equals the sequential one's whenever the updates commute
//! (setting bits is an OR; adding counts a saturating add of non-negative
//! numbers): the callers use it only then.

#![forbid(unsafe_code)]

use std::ops::Range;

use rayon::prelude::*;

/// Items per bucketing task: large enough that scheduling costs nothing
/// next to the work, small enough that a task's buckets stay in L2.
pub(crate) const TASK: usize = 1 << 14;

/// Tasks per thread in one round: two, so a thread that finishes early
/// steals work instead of waiting at the round's end.
const ROUND_TASKS: usize = 2;

/// Parts per thread (at most; fewer for small storage): enough for rayon
/// to balance parts of unequal load and for a part's words to stay in a
/// core's L2 cache while its buckets are applied (a 12 MiB filter on two
/// threads: 32 parts of 384 KiB).
const PARTS_PER_THREAD: usize = 16;

/// At most this many parts, so that a task's bucket for a part holds about
/// 256 items or more (`TASK / MAX_PARTS`): short buckets would spend their
/// time starting the prefetch window.
const MAX_PARTS: usize = 64;

/// Words per 64-byte block, the unit parts are made of.
const BLOCK_WORDS: usize = 8;

/// The storage cut into runs of `2^shift` blocks; the last may be short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Parts {
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
    pub(crate) fn of_block(self, b: usize) -> usize {
        b >> self.shift
    }

    /// The part holding word `w`.
    #[inline(always)]
    pub(crate) fn of_word(self, w: usize) -> usize {
        w >> (BLOCK_WORDS.trailing_zeros() + self.shift)
    }

    /// The part holding bit `x`.
    #[inline(always)]
    pub(crate) fn of_bit(self, x: u64) -> usize {
        (x >> (u64::BITS.trailing_zeros() + BLOCK_WORDS.trailing_zeros() + self.shift)) as usize
    }
}

/// Whether a batch of `n` items is better done on the calling thread: one
/// task's worth or less, or a one-thread pool.
pub(crate) fn sequential(n: usize) -> bool {
    n <= TASK || rayon::current_num_threads() < 2
}

/// Applies the updates of items `0..n` to `words`, round after round, on
/// rayon's current pool: `bucket(parts, items, buckets)` sorts the updates
/// of a task's items into one bucket per part (`buckets[part]`), and
/// `apply(words of part p, index of its first word, bucket p)` applies them,
/// once per task of the round. Updates must commute (module docs).
pub(crate) fn update<E: Send + Sync>(
    words: &mut [u64],
    n: usize,
    bucket: impl Fn(Parts, Range<usize>, &mut [Vec<E>]) + Sync,
    apply: impl Fn(&mut [u64], usize, &[E]) + Sync,
) {
    let threads = rayon::current_num_threads();
    let parts = Parts::new(
        words.len().div_ceil(BLOCK_WORDS),
        (PARTS_PER_THREAD * threads).min(MAX_PARTS),
    );
    let per_round = ROUND_TASKS * threads;
    let mut tasks: Vec<Vec<Vec<E>>> = (0..per_round)
        .map(|_| (0..parts.count).map(|_| Vec::new()).collect())
        .collect();
    let mut start = 0;
    while start < n {
        let count = (n - start).div_ceil(TASK).min(per_round);
        let round = &mut tasks[..count];
        round.par_iter_mut().enumerate().for_each(|(t, buckets)| {
            buckets.iter_mut().for_each(Vec::clear);
            let first = start + t * TASK;
            bucket(parts, first..(first + TASK).min(n), buckets);
        });
        let round = &*round;
        words
            .par_chunks_mut(parts.words())
            .enumerate()
            .for_each(|(p, part)| {
                for buckets in round {
                    apply(part, p * parts.words(), &buckets[p]);
                }
            });
        start += count * TASK;
    }
}

#[cfg(test)]
mod tests {
    use super::{Parts, update};

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
                let last_word = blocks * 8 - 1;
                assert_eq!(p.of_block(blocks - 1), p.count - 1);
                assert_eq!(p.of_word(last_word), p.count - 1);
                assert_eq!(p.of_bit(last_word as u64 * 64 + 63), p.count - 1);
                assert_eq!(p.of_word(p.words() - 1), 0);
                assert_eq!(p.of_bit(p.words() as u64 * 64 - 1), 0);
                if p.count > 1 {
                    assert_eq!(p.of_word(p.words()), 1);
                    assert_eq!(p.of_bit(p.words() as u64 * 64), 1);
                }
            }
        }
    }

    /// Every update lands once, in its own word, over many rounds and
    /// storage of a few words (a short last part).
    #[test]
    fn every_update_is_applied_once_whatever_the_pool() {
        for len in [1, 5, 8, 9, 1000, 100_003] {
            let n = 3 * super::TASK * 4 + 17;
            let target = |i: usize| (i * 7919 + i / 3) % len;
            let mut expected = vec![0u64; len];
            for i in 0..n {
                expected[target(i)] += i as u64;
            }
            for threads in [1, 2, 3, 8] {
                let mut words = vec![0u64; len];
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| {
                        update(
                            &mut words,
                            n,
                            |parts, items, buckets: &mut [Vec<(usize, u64)>]| {
                                for i in items {
                                    let w = target(i);
                                    buckets[parts.of_word(w)].push((w, i as u64));
                                }
                            },
                            |part, first, updates| {
                                for &(w, add) in updates {
                                    part[w - first] += add;
                                }
                            },
                        )
                    });
                assert_eq!(words, expected, "len {len} threads {threads}");
            }
        }
    }
}
