//! [`Prehashed`]: a filter's pre-hashed calls, for filters that take them.

#![forbid(unsafe_code)]

use crate::Error;
use crate::filter::BloomFilter;
use crate::filter::batch::{
    Plan, bitmap_words, copy_answers, copy_hashes, insert_pipeline, set_answers,
};
use crate::filter::view::{FilterView, ViewWords};
use crate::geometry::Geometry;
#[cfg(doc)]
use crate::hash::hash_key;
use crate::hash::{HashFamily, Key};

/// The handles: checked once, here, for each filter type.
impl BloomFilter {
    /// The pre-hashed calls (keys given by their 128-bit hash with this
    /// filter's family and seed): queries, through [`view`](Self::view).
    ///
    /// # Errors
    /// [`Error::PrehashedUnsupported`] for the `Independent` scheme, which
    /// needs the key's bytes.
    pub fn prehashed(&self) -> Result<Prehashed<FilterView<'_>>, Error> {
        self.view().prehashed()
    }

    /// The pre-hashed calls: inserts and queries.
    ///
    /// # Errors
    /// As [`prehashed`](Self::prehashed).
    pub fn prehashed_mut(&mut self) -> Result<Prehashed<&mut Self>, Error> {
        let geometry = *self.geometry();
        Prehashed::new(self, &geometry)
    }
}

impl<'a> FilterView<'a> {
    /// The pre-hashed queries (keys given by their 128-bit hash
    /// in this filter's family, with its seed); the handle holds a copy of the view.
    ///
    /// # Errors
    /// [`Error::PrehashedUnsupported`] for the `Independent` scheme, which
    /// needs the key's bytes.
    pub fn prehashed(&self) -> Result<Prehashed<FilterView<'a>>, Error> {
        Prehashed::new(*self, self.geometry())
    }
}

#[cfg(target_has_atomic = "64")]
impl crate::AtomicBloomFilter {
    /// The pre-hashed calls (keys given by their 128-bit hash with this
    /// filter's family and seed), from any thread.
    ///
    /// # Errors
    /// [`Error::PrehashedUnsupported`] for the `Independent` scheme, which
    /// needs the key's bytes.
    pub fn prehashed(&self) -> Result<Prehashed<&Self>, Error> {
        Prehashed::new(self, self.geometry())
    }
}

/// The pre-hashed calls of a filter with a two-hash scheme: `F` is a
/// [`FilterView`] (queries: the handle of [`BloomFilter::prehashed`],
/// [`FilterView::prehashed`] and `MappedFilter::prehashed`),
/// `&mut BloomFilter` (inserts and queries) or `&AtomicBloomFilter`
/// (inserts and queries from any thread).
///
/// Keys hashed once upstream (a 128-bit [`hash_key`] kept in a column, sent
/// over the wire, shared by several filters of the same seed) skip hashing.
/// Only the two-hash schemes derive every probe from that one hash; the
/// `Independent` scheme hashes the key's bytes k times and cannot use it.
/// Instead of every pre-hashed call returning an error for that one case,
/// the check is made once, when the handle is taken
/// ([`BloomFilter::prehashed`], [`BloomFilter::prehashed_mut`],
/// [`FilterView::prehashed`], [`AtomicBloomFilter::prehashed`](crate::AtomicBloomFilter::prehashed)); the calls
/// on the handle cannot fail for that reason.
///
/// ```
/// use lesshash::{BloomFilter, hash_key};
///
/// let mut filter = BloomFilter::with_fpr(1000, 0.01)?;
/// let mut by_hash = filter.prehashed_mut()?;
/// let h = by_hash.hash("apple"); // the filter's family and seed
/// by_hash.insert(h);
/// // An XXH3 filter (the default family): `hash_key` with its seed.
/// by_hash.insert_batch(&[hash_key(&1u64, by_hash.seed()), hash_key(&2u64, by_hash.seed())]);
/// assert!(by_hash.contains(h));
/// assert!(filter.contains("apple") && filter.contains(&2u64));
/// # Ok::<(), lesshash::Error>(())
/// ```
///
/// A hash must be the key's hash in the filter's
/// [`hash_family`](Self::hash_family) with its [`seed`](Self::seed)
/// ([`hash`](Self::hash) and [`hash_batch`](Self::hash_batch) compute it;
/// [`hash_key`] for an XXH3 filter); any other value is answered as the key
/// it is the hash of.
#[derive(Debug)]
pub struct Prehashed<F> {
    filter: F,
    /// The batch plan; its existence is the proof that the scheme is a
    /// two-hash one.
    plan: Plan,
    seed: u64,
    hash_family: HashFamily,
}

impl<F> Prehashed<F> {
    /// The handle, or [`Error::PrehashedUnsupported`] for a scheme without
    /// a plan (`Independent`).
    pub(crate) fn new(filter: F, geometry: &Geometry) -> Result<Self, Error> {
        match Plan::of(geometry) {
            Some(plan) => Ok(Self {
                filter,
                plan,
                seed: geometry.seed,
                hash_family: geometry.hash_family,
            }),
            None => Err(Error::PrehashedUnsupported {
                scheme: geometry.scheme.name(),
            }),
        }
    }

    /// The filter's seed, the one to hash keys with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The filter's hash family, the one to hash keys in.
    pub fn hash_family(&self) -> HashFamily {
        self.hash_family
    }

    /// The hash of `key` in the filter's family with its seed
    /// ([`HashFamily::hash_key`]; [`hash_key`] for an XXH3 filter).
    #[inline]
    pub fn hash<K: Key + ?Sized>(&self, key: &K) -> u128 {
        self.hash_family.hash_key(key, self.seed)
    }

    /// [`hash`](Self::hash) of each of `keys` into `out`, as the batch
    /// paths hash ([`HashFamily::hash_batch`]).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] naming `out` unless it has the length of
    /// `keys`.
    pub fn hash_batch<K: Key>(&self, keys: &[K], out: &mut [u128]) -> Result<(), Error> {
        self.hash_family.hash_batch(keys, self.seed, out)
    }
}

/// The handles whose pre-hashed queries ([`Prehashed::contains`], the
/// batch, bitmap and parallel forms) read a [`FilterView`]: a
/// `FilterView` itself (the handle of [`BloomFilter::prehashed`],
/// [`FilterView::prehashed`] and `MappedFilter::prehashed`) and
/// `&mut BloomFilter` (the handle of [`BloomFilter::prehashed_mut`]).
///
/// Sealed: only this crate implements it, and its methods are internal.
/// It exists so that the queries are written once for every read-only
/// handle; a bound `F: LendsView` in user code names "any pre-hashed
/// handle that can query".
pub trait LendsView: sealed::Sealed {
    /// The view the batch queries read.
    #[doc(hidden)]
    fn lend(&self) -> FilterView<'_>;

    /// What a one-key query reads (the view's geometry and words, without
    /// building a view per key).
    #[doc(hidden)]
    #[allow(private_interfaces)]
    fn query_parts(&self) -> (&Geometry, ViewWords<'_>);
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::FilterView<'_> {}
    impl Sealed for &mut super::BloomFilter {}
}

impl LendsView for FilterView<'_> {
    #[inline]
    fn lend(&self) -> FilterView<'_> {
        *self
    }

    #[inline]
    #[allow(private_interfaces)]
    fn query_parts(&self) -> (&Geometry, ViewWords<'_>) {
        FilterView::query_parts(self)
    }
}

impl LendsView for &mut BloomFilter {
    #[inline]
    fn lend(&self) -> FilterView<'_> {
        self.view()
    }

    #[inline]
    #[allow(private_interfaces)]
    fn query_parts(&self) -> (&Geometry, ViewWords<'_>) {
        let (geometry, words) = self.parts();
        (geometry, ViewWords::native(words))
    }
}

/// The pre-hashed queries, written once over the view every filter lends.
impl<F: LendsView> Prehashed<F> {
    /// Whether the key hashed to `hash` is possibly in the set.
    #[inline]
    pub fn contains(&self, hash: u128) -> bool {
        let (geometry, words) = self.filter.query_parts();
        words.contains_hash(geometry, hash)
    }

    /// Writes into `out[i]` whether the key hashed to `hashes[i]` is
    /// possibly in the set (the batch pipeline).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] naming `out` if the lengths differ.
    pub fn contains_batch(&self, hashes: &[u128], out: &mut [bool]) -> Result<(), Error> {
        Error::check_len("out", hashes.len(), out.len())?;
        self.filter
            .lend()
            .contains_hashes_with(&self.plan, hashes, |i, found| copy_answers(out, i, found));
        Ok(())
    }

    /// The answers as a bitmap (see
    /// [`FilterView::contains_batch_bitmap`]).
    pub fn contains_batch_bitmap(&self, hashes: &[u128]) -> Vec<u64> {
        let mut out = vec![0; bitmap_words(hashes.len())];
        self.filter
            .lend()
            .contains_hashes_with(&self.plan, hashes, |i, found| {
                set_answers(&mut out, i, found)
            });
        out
    }

    /// [`contains_batch`](Self::contains_batch) on rayon's thread pool.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] naming `out` if the lengths differ.
    #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
    pub fn par_contains_batch(&self, hashes: &[u128], out: &mut [bool]) -> Result<(), Error> {
        Error::check_len("out", hashes.len(), out.len())?;
        self.filter
            .lend()
            .par_contains_hashes(&self.plan, hashes, out);
        Ok(())
    }
}

/// Inserts through an exclusively borrowed owned filter.
impl Prehashed<&mut BloomFilter> {
    /// Inserts the key hashed to `hash`.
    #[inline]
    pub fn insert(&mut self, hash: u128) {
        self.filter.insert_hash_unchecked(hash);
    }

    /// Inserts every key of `hashes` (the batch pipeline).
    pub fn insert_batch(&mut self, hashes: &[u128]) {
        let f = &mut *self.filter;
        let tuning = f.geometry().tuning;
        insert_pipeline(
            &self.plan,
            tuning,
            f.words_mut(),
            hashes.len(),
            copy_hashes(hashes),
        );
        f.count_inserts(hashes.len());
    }

    /// [`insert_batch`](Self::insert_batch) on rayon's thread pool; the
    /// filter is bit-identical to the sequential one.
    #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
    pub fn par_insert_batch(&mut self, hashes: &[u128]) {
        if crate::filter::par::sequential(hashes.len()) {
            return self.insert_batch(hashes);
        }
        crate::filter::par::par_insert_hashes(self.filter, hashes);
    }
}

/// Inserts and queries from any thread.
#[cfg(target_has_atomic = "64")]
impl Prehashed<&crate::AtomicBloomFilter> {
    /// Inserts the key hashed to `hash`, from any thread.
    #[inline]
    pub fn insert(&self, hash: u128) {
        self.filter.insert_hash_unchecked(hash);
    }

    /// Whether the key hashed to `hash` is possibly in the set (see
    /// [`AtomicBloomFilter`](crate::AtomicBloomFilter) for what concurrent
    /// inserts it sees).
    #[inline]
    pub fn contains(&self, hash: u128) -> bool {
        self.filter.contains_hash_unchecked(hash)
    }
}

impl<F: Clone> Clone for Prehashed<F> {
    fn clone(&self) -> Self {
        Self {
            filter: self.filter.clone(),
            plan: self.plan,
            seed: self.seed,
            hash_family: self.hash_family,
        }
    }
}

impl<F: Copy> Copy for Prehashed<F> {}
