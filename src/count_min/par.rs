//! Parallel batch adds (feature `rayon`): [`crate::util::parts`]'s rounds,
//! each thread adding into its own part of the counters with plain stores.
//!
//! A plain update adds to counters with a saturating add of a non-negative
//! count: commutative and associative, so the counters equal the sequential
//! batch's whatever the split (tested). A conservative update reads the
//! key's counters before raising them, so its result depends on the order
//! of the updates: conservative sketches take the sequential path.

#![forbid(unsafe_code)]

use super::{Bytes, CountMinScheme, CountMinSketch, Counters, Hashes};
use crate::hash::Key;
use crate::util::parts::{self, sequential};
use crate::util::prefetch::prefetch;

/// Counter updates requested ahead of the one being applied.
const PREFETCH_AHEAD: usize = 16;

impl CountMinSketch {
    /// [`add_batch`](Self::add_batch) on rayon's thread pool: the same
    /// counters and total as the sequential call. Conservative sketches,
    /// and batches of 16,384 keys or fewer, run sequentially.
    pub fn par_add_batch<K: Key + Sync>(&mut self, keys: &[K], count: u64) {
        if self.conservative || sequential(keys.len()) {
            return self.add_batch(keys, count);
        }
        self.par_add(keys, |k| k, |_| count);
        let n = u64::try_from(keys.len()).unwrap_or(u64::MAX);
        self.total = self.total.saturating_add(count.saturating_mul(n));
    }

    /// [`add_updates`](Self::add_updates) on rayon's thread pool: the same
    /// counters and total as the sequential call. Conservative sketches,
    /// and batches of 16,384 updates or fewer, run sequentially.
    pub fn par_add_updates<K: Key + Sync>(&mut self, updates: &[(K, u64)]) {
        if self.conservative || sequential(updates.len()) {
            return self.add_updates(updates);
        }
        self.par_add(updates, |(k, _)| k, |(_, c)| *c);
        self.total = updates
            .iter()
            .fold(self.total, |t, (_, c)| t.saturating_add(*c));
    }

    /// Adds `count_of(item)` to the counters of `key_of(item)` for every
    /// item, partitioned by counter; the caller updates the total.
    fn par_add<T: Sync, K: Key>(
        &mut self,
        items: &[T],
        key_of: impl Fn(&T) -> &K + Sync,
        count_of: impl Fn(&T) -> u64 + Sync,
    ) {
        let ix = self.indexer();
        parts::update(
            self.slots_mut(),
            items.len(),
            |parts, range, buckets: &mut [Vec<(usize, u64)>]| {
                let items = &items[range];
                match ix.scheme {
                    CountMinScheme::Independent => {
                        for item in items {
                            let count = count_of(item);
                            key_of(item).with_bytes(|b| {
                                Bytes(b).each(ix, |w| buckets[parts.of_word(w)].push((w, count)));
                            });
                        }
                    }
                    CountMinScheme::DoubleHashing => {
                        ix.for_each_hashed(items, &key_of, |i, hashes| {
                            let count = count_of(&items[i]);
                            Hashes(hashes).each(ix, |w| buckets[parts.of_word(w)].push((w, count)));
                        });
                    }
                }
            },
            |part, first, adds| {
                for (i, &(w, count)) in adds.iter().enumerate() {
                    // Each add is a random counter of a part that may be
                    // larger than the caches: request lines ahead.
                    if let Some(&(ahead, _)) = adds.get(i + PREFETCH_AHEAD) {
                        prefetch(part, ahead - first);
                    }
                    let c = &mut part[w - first];
                    *c = c.saturating_add(count);
                }
            },
        );
    }
}
