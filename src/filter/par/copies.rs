//! The parallel insert for filters that are small next to the batch: each
//! thread inserts its share of the keys into a private zeroed copy of the
//! bits (the first thread into the filter itself) by the sequential
//! pipeline, then the copies are ORed into the filter, word ranges in
//! parallel.
//!
//! OR is commutative and idempotent, so the filter is bit-identical to the
//! sequential insert's (tested in `tests/par.rs`). The copies cost
//! `(threads - 1) x` the filter's size in memory and two passes over it
//! (zeroing, merging); the insert by part (`by_part.rs`) costs about
//! 16 bytes (blocked) to 8 k bytes (flat) of bucket traffic per key
//! instead, and its extra passes over every key cost much of its gain
//! while the filter sits in a core's cache (docs/bench-notes/2026-11-25.md,
//! "Parallel inserts, Python per-key calls, Dask"). So copies are used
//! when they are the smaller cost and bounded: [`pays`].

#![forbid(unsafe_code)]

use rayon::prelude::*;

use crate::filter::batch::{Plan, insert_pipeline};
use crate::tuning::Tuning;
use crate::util::bits::AlignedWords;

/// Copies are used when their bytes are at most this many per key of the
/// batch. The partitioned insert moves 16 or more per key, but zeroing and
/// merging a copy costs more per byte than a bucket's sequential traffic:
/// measured on two threads, copies won below this bound and lost well
/// above it (docs/bench-notes/2026-11-25.md, "Parallel inserts, Python
/// per-key calls, Dask", the paragraph "Why two strategies").
const COPY_BYTES_PER_KEY: usize = 4;

/// And never more than this many bytes of copies in all.
const MAX_COPY_BYTES: usize = 256 << 20;

/// Words ORed per merge task.
const MERGE_WORDS: usize = 1 << 13;

/// Whether `n` keys into `words` words on `threads` threads go through
/// private copies rather than parts.
pub(super) fn pays(words: usize, n: usize, threads: usize) -> bool {
    let bytes = words
        .saturating_mul(8)
        .saturating_mul(threads.saturating_sub(1));
    bytes <= n.saturating_mul(COPY_BYTES_PER_KEY) && bytes <= MAX_COPY_BYTES
}

/// Inserts the `n` keys whose hashes `fill(start, out)` writes into
/// `words`, one share per thread, through copies. Returns `false`, having
/// inserted nothing, if the copies cannot be allocated.
pub(super) fn insert(
    plan: &Plan,
    tuning: Tuning,
    words: &mut [u64],
    n: usize,
    fill: impl Fn(usize, &mut [u128]) + Sync,
) -> bool {
    let threads = rayon::current_num_threads().max(1);
    let share = n.div_ceil(threads);
    let bits = words.len() as u64 * 64;
    let copies: Result<Vec<AlignedWords>, _> = (1..threads)
        .map(|_| AlignedWords::zeroed(bits, "copy"))
        .collect();
    let Ok(mut copies) = copies else {
        return false;
    };
    let insert_share = |words: &mut [u64], t: usize| {
        let start = (t * share).min(n);
        let len = share.min(n - start);
        insert_pipeline(plan, tuning, words, len, |s, out| fill(start + s, out));
    };
    rayon::join(
        || insert_share(words, 0),
        || {
            copies
                .par_iter_mut()
                .enumerate()
                .for_each(|(i, copy)| insert_share(copy.words_mut(), i + 1))
        },
    );
    words
        .par_chunks_mut(MERGE_WORDS)
        .enumerate()
        .for_each(|(i, dst)| {
            for copy in &copies {
                let src = &copy.words()[i * MERGE_WORDS..][..dst.len()];
                for (d, s) in dst.iter_mut().zip(src) {
                    *d |= *s;
                }
            }
        });
    true
}

#[cfg(test)]
mod tests {
    use super::pays;

    /// tests/par.rs reaches both strategies by the filter's size; these are
    /// the sizes it relies on (keys, bytes of the filter).
    #[test]
    fn the_sizes_tests_rely_on_pick_the_strategies_they_expect() {
        let words = |bytes: usize| bytes / 8;
        // parallel_build_is_bit_identical: 98,309 keys; a filter sized for
        // them (118-123 KiB) is copied on 2 to 4 threads and partitioned
        // on 8, one 40 times larger partitioned.
        for kib in [118, 123] {
            let bytes = kib << 10;
            assert!(pays(words(bytes), 98_309, 2));
            assert!(pays(words(bytes), 98_309, 4));
            assert!(!pays(words(bytes), 98_309, 8));
            assert!(!pays(words(40 * bytes), 98_309, 2));
        }
        // parallel_insert_over_many_rounds: 600,003 keys; a filter of one
        // or two blocks copied, 3.6 MiB and 36 MiB partitioned.
        assert!(pays(16, 600_003, 8));
        assert!(!pays(words(36 << 20) / 10, 600_003, 2));
        assert!(!pays(words(36 << 20), 600_003, 2));
    }
}
