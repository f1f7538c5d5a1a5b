//! Parallel batch inserts and queries (feature `rayon`, on by default).
//!
//! Keys are split into tasks of [`PAR_TASK`] keys run on rayon's pool.
//!
//! * Queries share `&self`; each task runs the sequential pipeline
//!   (`src/batch.rs`, prefetching included) over its keys and writes its
//!   own part of the output: no synchronisation at all.
//! * Inserts turn the filter into an [`AtomicBloomFilter`] without copying
//!   the bits, and every task sets its keys' words with relaxed atomic
//!   `fetch_or`: free of data races by construction. Setting bits is an OR,
//!   commutative and idempotent, so whatever the interleaving the final
//!   bits are exactly those of the sequential build (tested bit for bit in
//!   `tests/par.rs`). The filter is converted back, again without a copy,
//!   also when a task panics (a key's `with_bytes` is user code).
//!
//! Below one task's worth of keys, or on a one-thread pool, the sequential
//! path runs.

#![forbid(unsafe_code)]

use rayon::prelude::*;

use crate::batch::{CHUNK, Plan, Stage, contains_pipeline, copy_hashes, hash_keys};
use crate::bits::AlignedWords;
use crate::filter::BloomFilter;
use crate::hash::Key;
use crate::{AtomicBloomFilter, Error};

/// Keys per parallel task: large enough that scheduling costs nothing
/// next to the work (16,384 keys are 20-200 µs), small enough to balance
/// two to dozens of threads on a million keys.
pub(crate) const PAR_TASK: usize = 1 << 14;

/// Gives the bits back to the filter when dropped, also while unwinding.
struct Shared<'a> {
    slot: &'a mut BloomFilter,
    atomic: Option<AtomicBloomFilter>,
}

impl Drop for Shared<'_> {
    fn drop(&mut self) {
        if let Some(atomic) = self.atomic.take() {
            *self.slot = atomic.into_inner();
        }
    }
}

pub(crate) fn sequential(n: usize) -> bool {
    n <= PAR_TASK || rayon::current_num_threads() < 2
}

/// Parallel batch paths; see `src/par.rs` for how they stay race-free and
/// bit-identical to the sequential ones.
impl BloomFilter {
    /// [`insert_batch`](Self::insert_batch) on rayon's thread pool. The
    /// resulting filter is bit-identical to the sequential one.
    pub fn par_insert_batch<K: Key + Sync>(&mut self, keys: &[K]) {
        if sequential(keys.len()) {
            return self.insert_batch(keys);
        }
        let seed = self.seed();
        self.par_insert_with(
            keys.len(),
            |start, hs| hash_keys(keys, seed)(start, hs),
            |a, i| a.insert(&keys[i]),
        );
    }

    fn par_insert_with(
        &mut self,
        n: usize,
        fill: impl Fn(usize, &mut [u128]) + Sync,
        independent: impl Fn(&AtomicBloomFilter, usize) + Sync,
    ) {
        let geometry = *self.geometry();
        let calls = self.insert_calls();
        let plan = Plan::of(&geometry);
        let taken = std::mem::replace(
            self,
            BloomFilter::from_parts(geometry, AlignedWords::from_blocks(Vec::new()), 0),
        );
        let shared = Shared {
            slot: self,
            atomic: Some(AtomicBloomFilter::new(taken)),
        };
        let Some(atomic) = shared.atomic.as_ref() else {
            unreachable!("set just above")
        };
        let kernel = geometry.tuning.kernel;
        (0..n.div_ceil(PAR_TASK)).into_par_iter().for_each(|t| {
            let (start, end) = (t * PAR_TASK, ((t + 1) * PAR_TASK).min(n));
            match &plan {
                Some(plan) => {
                    let mut stage = Stage::new(plan);
                    let mut s = start;
                    while s < end {
                        let len = CHUNK.min(end - s);
                        stage.prepare(plan, kernel, len, |hs| fill(s, hs));
                        stage.insert(plan, &mut atomic.shared());
                        s += len;
                    }
                }
                None => (start..end).for_each(|i| independent(atomic, i)),
            }
        });
        drop(shared);
        self.set_insert_calls(calls);
        self.count_inserts(n);
    }

    /// [`contains_batch`](Self::contains_batch) on rayon's thread pool.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] naming `out`.
    pub fn par_contains_batch<K: Key + Sync>(
        &self,
        keys: &[K],
        out: &mut [bool],
    ) -> Result<(), Error> {
        if sequential(keys.len()) {
            return self.contains_batch(keys, out);
        }
        Error::check_len("out", keys.len(), out.len())?;
        keys.par_chunks(PAR_TASK)
            .zip(out.par_chunks_mut(PAR_TASK))
            .for_each(|(ks, os)| self.contains_keys_with(ks, |i, hit| os[i] = hit));
        Ok(())
    }
}

/// [`Prehashed::par_insert_batch`](crate::prehashed::Prehashed::par_insert_batch)
/// above the sequential threshold; the filter's scheme is a two-hash one.
pub(crate) fn par_insert_hashes(filter: &mut BloomFilter, hashes: &[u128]) {
    filter.par_insert_with(
        hashes.len(),
        |start, hs| copy_hashes(hashes)(start, hs),
        |_, _| unreachable!("pre-hashed keys have a kernel plan"),
    );
}

/// [`Prehashed::par_contains_batch`](crate::prehashed::Prehashed::par_contains_batch)
/// with lengths checked.
pub(crate) fn par_contains_hashes(
    filter: &BloomFilter,
    plan: &Plan,
    hashes: &[u128],
    out: &mut [bool],
) {
    hashes
        .par_chunks(PAR_TASK)
        .zip(out.par_chunks_mut(PAR_TASK))
        .for_each(|(hs, os)| {
            contains_pipeline(
                plan,
                filter.geometry().tuning,
                filter.words(),
                hs.len(),
                copy_hashes(hs),
                |i, hit| os[i] = hit,
            )
        });
}
