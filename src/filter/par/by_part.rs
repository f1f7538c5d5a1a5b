//! The parallel insert without atomics: each round's keys sorted by the
//! part of the bit array their bits fall in, each part's bits set by one
//! thread with plain stores ([`crate::util::parts`], the driver shared with
//! the Count-Min sketch).
//!
//! Bucketing hashes the keys and derives their destinations exactly as the
//! sequential pipeline does ([`Stage::prepare`]); a blocked layout's bucket
//! holds each key's hash (one block per key), a flat layout's each bit
//! index (k per key). A part's owner then sets its buckets chunk by chunk,
//! prefetching a chunk ahead like the sequential pipeline.
//!
//! Setting bits is an OR, commutative and idempotent, so the order in which
//! parts and buckets are applied cannot change the result: the filter is
//! bit-identical to [`BloomFilter::insert_batch`]'s (tested for every
//! layout, scheme and 1 to 8 threads in `tests/par.rs`).
//!
//! Why no atomics: a relaxed atomic `fetch_or` per word (per probe for flat
//! layouts) is a locked instruction each, and on two threads it measured
//! slower than the sequential insert
//! (docs/bench-notes/2026-11-25.md, "Parallel inserts, Python per-key
//! calls, Dask").
//!
//! [`BloomFilter::insert_batch`]: crate::BloomFilter::insert_batch

#![forbid(unsafe_code)]

use std::ops::Range;

use crate::filter::batch::{CHUNK, Plan, Stage};
use crate::hash::split;
use crate::layout::blocked::Blocks;
use crate::simd::kernel::Kernel;
use crate::tuning::Tuning;
use crate::util::bits::Block;
use crate::util::parts;
use crate::util::prefetch::prefetch;

/// Words per block.
const BLOCK_WORDS: usize = (Block::BITS / 64) as usize;

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
    let pf = tuning.prefetch.applies_to(std::mem::size_of_val(words));
    let kernel = tuning.kernel;
    match plan {
        Plan::Blocks(p) => parts::update(
            words,
            n,
            |parts, keys, buckets: &mut [Vec<u128>]| {
                each_chunk(plan, kernel, keys, &fill, |stage| {
                    for (&b, &h) in stage.blocks().iter().zip(stage.hashes()) {
                        buckets[parts.of_block(b)].push(h);
                    }
                });
            },
            |part, first_word, hashes| set_blocks(p, part, first_word / BLOCK_WORDS, hashes, pf),
        ),
        Plan::Flat(_) => parts::update(
            words,
            n,
            |parts, keys, buckets: &mut [Vec<u64>]| {
                each_chunk(plan, kernel, keys, &fill, |stage| {
                    for &x in stage.indices() {
                        buckets[parts.of_bit(x)].push(x);
                    }
                });
            },
            |part, first_word, bits| set_bits(part, first_word, bits, pf),
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

/// Sets the keys `hashes` (all in this part) into `words`, the part whose
/// first block is `first`: chunk by chunk through the layout's batch probe,
/// the next chunk's lines prefetched before this one is set.
fn set_blocks(p: &Blocks, words: &mut [u64], first: usize, hashes: &[u128], pf: bool) {
    let mut ring = [[0usize; CHUNK]; 2];
    let locate = |blocks: &mut [usize; CHUNK], chunk: &[u128], words: &[u64]| {
        for (b, &h) in blocks.iter_mut().zip(chunk) {
            *b = p.block(split(h).0) - first;
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
/// first word is `first`.
fn set_bits(words: &mut [u64], first: usize, bits: &[u64], pf: bool) {
    let base = first as u64 * 64;
    let word = |x: u64| ((x - base) / 64) as usize;
    for (i, &x) in bits.iter().enumerate() {
        if pf && let Some(&ahead) = bits.get(i + BIT_PREFETCH_AHEAD) {
            prefetch(words, word(ahead));
        }
        words[word(x)] |= 1 << (x % 64);
    }
}
