//! Parallel batch inserts and queries (feature `rayon`, on by default).
//!
//! * Queries share `&self`: keys are split into tasks of [`PAR_TASK`]
//!   keys, each running the sequential pipeline (`src/filter/batch.rs`,
//!   prefetching included) over its keys and writing its own part of the
//!   output; no synchronisation at all ([`query`]: `FilterView`'s, which
//!   every filter lends).
//! * Inserts of two-hash schemes use no atomics: a filter small next to
//!   the batch is built as one private copy per thread, ORed together at
//!   the end ([`copies`]); a larger one is partitioned by destination so
//!   that each thread owns a disjoint part of the bit array and sets bits
//!   with plain stores ([`by_part`], over the driver [`crate::util::parts`]). Both are bit-identical to the
//!   sequential insert (tested bit for bit in `tests/par.rs`).
//! * Inserts of the `Independent` scheme (the k-hash baseline, which has no
//!   two-hash plan to partition by) turn the filter into an
//!   [`AtomicBloomFilter`] without copying the bits, and every task sets its
//!   keys' words with relaxed atomic `fetch_or`; the filter is converted
//!   back, again without a copy, also when a task panics (a key's
//!   `with_bytes` is user code).
//!
//! Below one task's worth of keys, or on a one-thread pool, the sequential
//! path runs.

#![forbid(unsafe_code)]

use rayon::prelude::*;

mod by_part;
mod copies;
mod query;

use crate::AtomicBloomFilter;
use crate::filter::BloomFilter;
use crate::filter::batch::{Plan, copy_hashes, hash_keys};
use crate::hash::Key;
use crate::util::bits::AlignedWords;

/// Keys per parallel task: the partitioned insert's task size, for the
/// same reasons (enough work per task to hide scheduling, and enough tasks
/// to balance two to dozens of threads on a million keys).
pub(crate) const PAR_TASK: usize = crate::util::parts::TASK;

/// Gives the bits back to the filter when dropped, also while unwinding.
struct AtomicLoan<'a> {
    slot: &'a mut BloomFilter,
    atomic: Option<AtomicBloomFilter>,
}

impl Drop for AtomicLoan<'_> {
    fn drop(&mut self) {
        if let Some(atomic) = self.atomic.take() {
            *self.slot = atomic.into_inner();
        }
    }
}

pub(crate) use crate::util::parts::sequential;

/// Parallel batch paths; see the module docs (`src/filter/par/`) for how they stay race-free and
/// bit-identical to the sequential ones.
impl BloomFilter {
    /// [`insert_batch`](Self::insert_batch) on rayon's thread pool. The
    /// resulting filter is bit-identical to the sequential one.
    ///
    /// No atomics: when the filter is small next to the batch (its size
    /// times threads - 1 at most 4 bytes per key, and 256 MiB), each
    /// thread inserts its share of the keys into a private copy of the bits
    /// and the copies are ORed in at the end; otherwise each thread sets the
    /// bits of its own part of the filter, the keys going through in rounds
    /// of 32,768 per thread sorted by the part their bits fall in (working
    /// memory: about 16 bytes per key of a round for the blocked layouts, 8
    /// k bytes for the flat ones). The `Independent` scheme sets bits with
    /// atomic ORs instead.
    pub fn par_insert_batch<K: Key + Sync>(&mut self, keys: &[K]) {
        if sequential(keys.len()) {
            return self.insert_batch(keys);
        }
        let secrets = *self.geometry().secrets();
        self.par_insert_with(
            keys.len(),
            |start, hs| hash_keys(keys, secrets)(start, hs),
            |a, i| a.insert(&keys[i]),
        );
    }

    /// The parallel insert of `n` keys whose hashes `fill(start, out)`
    /// writes; `independent(filter, i)` inserts key i when the scheme has
    /// no two-hash plan.
    pub(crate) fn par_insert_with(
        &mut self,
        n: usize,
        fill: impl Fn(usize, &mut [u128]) + Sync,
        independent: impl Fn(&AtomicBloomFilter, usize) + Sync,
    ) {
        let geometry = *self.geometry();
        match Plan::of(&geometry) {
            Some(plan) => {
                let tuning = geometry.tuning;
                let words = self.words_mut();
                // Copies for a filter small next to the batch; parts
                // otherwise, or when the copies cannot be allocated.
                let copied = copies::pays(words.len(), n, rayon::current_num_threads())
                    && copies::insert(&plan, tuning, words, n, &fill);
                if !copied {
                    by_part::insert(&plan, tuning, words, n, fill);
                }
            }
            None => self.par_insert_atomic(n, independent),
        }
        self.count_inserts(n);
    }

    /// Inserts keys 0..n by `insert(filter, i)` from rayon's tasks into the
    /// filter's words seen as atomic words.
    fn par_insert_atomic(&mut self, n: usize, insert: impl Fn(&AtomicBloomFilter, usize) + Sync) {
        let geometry = *self.geometry();
        let (calls, kind) = (self.insert_calls(), self.key_kind());
        let taken = std::mem::replace(
            self,
            BloomFilter::from_parts(geometry, AlignedWords::from_blocks(Vec::new()), 0),
        );
        let loan = AtomicLoan {
            slot: self,
            atomic: Some(AtomicBloomFilter::new(taken)),
        };
        let Some(atomic) = loan.atomic.as_ref() else {
            unreachable!("set just above")
        };
        (0..n)
            .into_par_iter()
            .with_min_len(PAR_TASK)
            .for_each(|i| insert(atomic, i));
        drop(loan);
        self.set_insert_calls(calls);
        self.set_key_kind(kind);
    }
}

/// [`Prehashed::par_insert_batch`](crate::filter::prehashed::Prehashed::par_insert_batch)
/// above the sequential threshold; the filter's scheme is a two-hash one.
pub(crate) fn par_insert_hashes(filter: &mut BloomFilter, hashes: &[u128]) {
    filter.par_insert_with(
        hashes.len(),
        |start, hs| copy_hashes(hashes)(start, hs),
        |_, _| unreachable!("pre-hashed keys have a kernel plan"),
    );
}
