//! The read-only side every filter shares: an owned [`BloomFilter`], a
//! [`FilterView`](crate::FilterView) over serialized bytes and a
//! [`MappedFilter`](crate::MappedFilter) over a file answer batch and
//! parallel queries and report their fill through one implementation,
//! [`Frozen`] (a borrowed geometry and its words), so the three cannot
//! disagree.
//!
//! A payload's words are little-endian. On little-endian targets they are
//! the native words and every path (the batch pipeline included) reads
//! them in place; on big-endian targets queries read them through
//! [`LeWords`], key by key.
//!
//! [`BloomFilter`]: crate::BloomFilter

#![forbid(unsafe_code)]

use std::borrow::Cow;

use crate::batch::{Plan, contains_pipeline, copy_hashes, hash_keys};
use crate::bits::LeWords;
use crate::filter::BloomFilter;
use crate::geometry::Geometry;
use crate::hash::Key;
use crate::layout::{Layout, blocked, classic, partitioned};
use crate::view::FilterView;

/// A filter's parameters and bits, borrowed for reading.
#[derive(Clone, Copy)]
pub(crate) struct Frozen<'a> {
    geometry: &'a Geometry,
    words: &'a [u64],
    /// Whether `words` hold little-endian values (a serialized payload)
    /// rather than native ones.
    little_endian: bool,
}

impl<'a> Frozen<'a> {
    /// An owned filter's native words.
    pub(crate) fn native(geometry: &'a Geometry, words: &'a [u64]) -> Self {
        Self {
            geometry,
            words,
            little_endian: false,
        }
    }

    /// A payload's little-endian words.
    pub(crate) fn payload(geometry: &'a Geometry, words: &'a [u64]) -> Self {
        Self {
            geometry,
            words,
            little_endian: true,
        }
    }

    /// The words as native values without copying, when they are.
    #[inline]
    fn plain(&self) -> Option<&'a [u64]> {
        (!self.little_endian || cfg!(target_endian = "little")).then_some(self.words)
    }

    /// The words as native values: borrowed, or converted on big-endian
    /// targets (for the fill estimators, which read whole blocks).
    fn native_words(&self) -> Cow<'a, [u64]> {
        match self.plain() {
            Some(words) => Cow::Borrowed(words),
            None => Cow::Owned(self.words.iter().map(|&w| u64::from_le(w)).collect()),
        }
    }

    /// Whether `key` is possibly in the set.
    #[inline]
    pub(crate) fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        match self.plain() {
            Some(words) => self.geometry.contains(words, key),
            None => self.geometry.contains(&LeWords(self.words), key),
        }
    }

    /// Whether the key hashed to `hash` is possibly in the set; the scheme
    /// is a two-hash one.
    #[inline]
    pub(crate) fn contains_hash(&self, hash: u128) -> bool {
        match self.plain() {
            Some(words) => self.geometry.contains_hash(words, hash),
            None => self.geometry.contains_hash(&LeWords(self.words), hash),
        }
    }

    /// Calls `hit(i, answer)` for every key, in order: the batch pipeline
    /// (`crate::batch`), or key by key for `Independent` and for payloads
    /// on big-endian targets.
    pub(crate) fn contains_keys_with<K: Key>(&self, keys: &[K], mut hit: impl FnMut(usize, bool)) {
        let g = self.geometry;
        match (Plan::of(g), self.plain()) {
            (Some(plan), Some(words)) => contains_pipeline(
                &plan,
                g.tuning,
                words,
                keys.len(),
                hash_keys(keys, g.seed, g.tuning.kernel),
                hit,
            ),
            _ => {
                for (i, key) in keys.iter().enumerate() {
                    hit(i, self.contains(key));
                }
            }
        }
    }

    /// As [`contains_keys_with`](Self::contains_keys_with) for keys given
    /// by their hashes; `plan` is the geometry's.
    pub(crate) fn contains_hashes_with(
        &self,
        plan: &Plan,
        hashes: &[u128],
        mut hit: impl FnMut(usize, bool),
    ) {
        match self.plain() {
            Some(words) => contains_pipeline(
                plan,
                self.geometry.tuning,
                words,
                hashes.len(),
                copy_hashes(hashes),
                hit,
            ),
            None => {
                for (i, &h) in hashes.iter().enumerate() {
                    hit(i, self.contains_hash(h));
                }
            }
        }
    }

    /// The number of set bits (a popcount does not depend on byte order).
    pub(crate) fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// The fraction of bits set.
    pub(crate) fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.geometry.num_bits as f64
    }

    /// The estimated number of distinct keys inserted, from the fill.
    pub(crate) fn estimated_len(&self) -> f64 {
        let g = self.geometry;
        match g.layout {
            Layout::Classic => classic::estimated_len(g.num_bits, g.num_hashes, self.count_ones()),
            Layout::Partitioned => {
                partitioned::estimated_len(&self.native_words(), g.range, g.num_hashes)
            }
            Layout::Blocked | Layout::SplitBlock => {
                blocked::estimated_len(g.segments(), &self.native_words(), g.range, g.num_hashes)
            }
        }
    }

    /// The false-positive rate of a query now (see
    /// [`BloomFilter::expected_fpr`](crate::BloomFilter::expected_fpr)).
    pub(crate) fn expected_fpr(&self) -> f64 {
        let g = self.geometry;
        let n = self.estimated_len();
        let n = if n.is_finite() {
            n.round() as u64
        } else {
            u64::MAX
        };
        let ideal = match g.layout {
            Layout::Classic => classic::current_fpr(g.num_bits, g.num_hashes, self.count_ones()),
            Layout::Partitioned => {
                partitioned::current_fpr(&self.native_words(), g.range, g.num_hashes)
            }
            Layout::Blocked | Layout::SplitBlock => {
                blocked::current_fpr(g.segments(), &self.native_words(), g.range, g.num_hashes)
            }
        };
        g.layout
            .with_coincidences(g.scheme, g.num_bits, n, g.num_hashes, ideal)
    }

    /// [`contains_keys_with`](Self::contains_keys_with) into `out` on
    /// rayon's pool: tasks of `PAR_TASK` keys, each running the sequential
    /// pipeline over its own keys and its own part of `out` (lengths
    /// checked by the caller).
    #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
    pub(crate) fn par_contains_keys<K: Key + Sync>(&self, keys: &[K], out: &mut [bool]) {
        use rayon::prelude::*;
        if crate::partition::sequential(keys.len()) {
            return self.contains_keys_with(keys, |i, hit| out[i] = hit);
        }
        keys.par_chunks(crate::partition::TASK)
            .zip(out.par_chunks_mut(crate::partition::TASK))
            .for_each(|(ks, os)| self.contains_keys_with(ks, |i, hit| os[i] = hit));
    }

    /// As [`par_contains_keys`](Self::par_contains_keys) for hashes.
    #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
    pub(crate) fn par_contains_hashes(&self, plan: &Plan, hashes: &[u128], out: &mut [bool]) {
        use rayon::prelude::*;
        if crate::partition::sequential(hashes.len()) {
            return self.contains_hashes_with(plan, hashes, |i, hit| out[i] = hit);
        }
        hashes
            .par_chunks(crate::partition::TASK)
            .zip(out.par_chunks_mut(crate::partition::TASK))
            .for_each(|(hs, os)| self.contains_hashes_with(plan, hs, |i, hit| os[i] = hit));
    }
}

/// The batch queries and fill statistics of a read-only filter type, as
/// inherent methods over `self.frozen()` (the same text, so the same
/// contract, on [`BloomFilter`](crate::BloomFilter),
/// [`FilterView`](crate::FilterView) and
/// [`MappedFilter`](crate::MappedFilter)).
macro_rules! read_only_methods {
    () => {
        /// Writes into `out[i]` whether `keys[i]` is possibly in the set
        /// (the batch pipeline).
        ///
        /// # Errors
        /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) naming
        /// `out` if `out` and `keys` differ in length.
        pub fn contains_batch<K: $crate::Key>(
            &self,
            keys: &[K],
            out: &mut [bool],
        ) -> Result<(), $crate::Error> {
            $crate::Error::check_len("out", keys.len(), out.len())?;
            self.frozen()
                .contains_keys_with(keys, |i, hit| out[i] = hit);
            Ok(())
        }

        /// The answers for `keys` as a bitmap: bit `i % 64` of word `i / 64`
        /// is set when `keys[i]` is possibly in the set (a selection mask
        /// for columnar pipelines); `ceil(len / 64)` words, the unused high
        /// bits of the last word zero.
        pub fn contains_batch_bitmap<K: $crate::Key>(&self, keys: &[K]) -> Vec<u64> {
            let mut out = vec![0; $crate::batch::bitmap_words(keys.len())];
            self.frozen()
                .contains_keys_with(keys, |i, hit| $crate::batch::set_answer(&mut out, i, hit));
            out
        }

        /// [`contains_batch_bitmap`](Self::contains_batch_bitmap) into
        /// `out` (overwritten), which must hold
        /// [`bitmap_words`](crate::batch::bitmap_words)`(keys.len())` words.
        ///
        /// # Errors
        /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) naming
        /// `out`.
        pub fn contains_batch_into_bitmap<K: $crate::Key>(
            &self,
            keys: &[K],
            out: &mut [u64],
        ) -> Result<(), $crate::Error> {
            $crate::Error::check_len("out", $crate::batch::bitmap_words(keys.len()), out.len())?;
            out.fill(0);
            self.frozen()
                .contains_keys_with(keys, |i, hit| $crate::batch::set_answer(out, i, hit));
            Ok(())
        }

        /// [`contains_batch`](Self::contains_batch) on rayon's thread pool
        /// (tasks of 16,384 keys, each running the sequential pipeline over
        /// its own keys and its own part of `out`); the sequential path
        /// below one task's worth of keys.
        ///
        /// # Errors
        /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) naming
        /// `out`.
        #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
        pub fn par_contains_batch<K: $crate::Key + Sync>(
            &self,
            keys: &[K],
            out: &mut [bool],
        ) -> Result<(), $crate::Error> {
            $crate::Error::check_len("out", keys.len(), out.len())?;
            self.frozen().par_contains_keys(keys, out);
            Ok(())
        }

        /// The number of set bits.
        pub fn count_ones(&self) -> u64 {
            self.frozen().count_ones()
        }

        /// The fraction of bits set.
        pub fn fill_ratio(&self) -> f64 {
            self.frozen().fill_ratio()
        }

        /// The estimated number of distinct keys inserted, from the fill
        /// (see the layout's formula in [`Layout`](crate::Layout)'s
        /// modules; Swamidoss and Bhattacharya for classic).
        pub fn estimated_len(&self) -> f64 {
            self.frozen().estimated_len()
        }

        /// The false-positive rate of a query now: k independent hashes'
        /// rate from the current fill, plus what the scheme's probe
        /// sequences add for the
        /// [`estimated_len`](Self::estimated_len) keys held (the terms of
        /// [`Layout::fpr`](crate::Layout::fpr)).
        pub fn expected_fpr(&self) -> f64 {
            self.frozen().expected_fpr()
        }
    };
}
// Used by `mapped` (feature `mmap`); this module's own impls below.
#[cfg_attr(not(feature = "mmap"), allow(unused_imports))]
pub(crate) use read_only_methods;

/// The pre-hashed queries of a [`Prehashed`](crate::Prehashed) handle over
/// a read-only filter type, as methods over `self.frozen()` and its plan.
macro_rules! prehashed_queries {
    () => {
        /// Whether the key hashed to `hash` is possibly in the set.
        #[inline]
        pub fn contains(&self, hash: u128) -> bool {
            self.frozen().contains_hash(hash)
        }

        /// Writes into `out[i]` whether the key hashed to `hashes[i]` is
        /// possibly in the set (the batch pipeline).
        ///
        /// # Errors
        /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) naming
        /// `out` if the lengths differ.
        pub fn contains_batch(
            &self,
            hashes: &[u128],
            out: &mut [bool],
        ) -> Result<(), $crate::Error> {
            $crate::Error::check_len("out", hashes.len(), out.len())?;
            self.frozen()
                .contains_hashes_with(&self.plan, hashes, |i, hit| out[i] = hit);
            Ok(())
        }

        /// The answers as a bitmap (see
        /// [`BloomFilter::contains_batch_bitmap`](crate::BloomFilter::contains_batch_bitmap)).
        pub fn contains_batch_bitmap(&self, hashes: &[u128]) -> Vec<u64> {
            let mut out = vec![0; $crate::batch::bitmap_words(hashes.len())];
            self.frozen()
                .contains_hashes_with(&self.plan, hashes, |i, hit| {
                    $crate::batch::set_answer(&mut out, i, hit)
                });
            out
        }

        /// [`contains_batch`](Self::contains_batch) on rayon's thread pool.
        ///
        /// # Errors
        /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) naming
        /// `out` if the lengths differ.
        #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
        pub fn par_contains_batch(
            &self,
            hashes: &[u128],
            out: &mut [bool],
        ) -> Result<(), $crate::Error> {
            $crate::Error::check_len("out", hashes.len(), out.len())?;
            self.frozen().par_contains_hashes(&self.plan, hashes, out);
            Ok(())
        }
    };
}
pub(crate) use prehashed_queries;

/// The read-only methods of an owned filter.
impl BloomFilter {
    /// The filter's parameters and bits, for the read-only paths.
    #[inline]
    pub(crate) fn frozen(&self) -> Frozen<'_> {
        Frozen::native(self.geometry(), self.words())
    }

    read_only_methods!();
}

/// The read-only methods of a view: the same as an owned filter's.
impl FilterView<'_> {
    /// The parameters and the payload's words, for the read-only paths.
    #[inline]
    pub(crate) fn frozen(&self) -> Frozen<'_> {
        Frozen::payload(self.geometry(), self.payload_words())
    }

    read_only_methods!();
}
