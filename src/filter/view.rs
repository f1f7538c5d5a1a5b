//! [`FilterView`]: the read-only filter. Every filter answers its queries
//! through one: an owned [`BloomFilter`] lends one over its bits
//! ([`BloomFilter::view`]), a [`MappedFilter`](crate::MappedFilter) over a
//! file's pages, and [`FilterView::new`] over serialized bytes, so the
//! batch, bitmap, parallel and pre-hashed queries and the fill statistics
//! exist once and the three cannot disagree.
//!
//! Over serialized bytes (a memory-mapped file, say) the bits are read in
//! place as little-endian words, so opening costs one checksum pass
//! ([`FilterView::new`]) or nothing at all ([`FilterView::new_unverified`]),
//! whatever the filter's size. On little-endian targets those are the
//! native words and every path (the batch pipeline included) reads them in
//! place; on big-endian targets queries read them through [`LeWords`], key
//! by key.

#![forbid(unsafe_code)]

use std::borrow::Cow;

use crate::Error;
use crate::filter::BloomFilter;
use crate::filter::batch::{
    Plan, contains_pipeline, copy_answers, copy_hashes, hash_keys, set_answers,
};
use crate::format::{Header, validate};
use crate::geometry::Geometry;
use crate::hash::Key;
use crate::layout::flat::{classic, partitioned};
use crate::layout::{Layout, blocked};
use crate::util::bits::LeWords;

/// The alignment [`FilterView`] requires of its bytes: one cache line, so
/// that the payload (at offset 64) is block-aligned as in an owned filter.
/// Memory maps are page-aligned, which satisfies it.
pub const VIEW_ALIGN: usize = 64;

/// A read-only filter: an owned filter's bits ([`BloomFilter::view`]), a
/// mapped file's ([`MappedFilter::view`](crate::MappedFilter::view)) or
/// borrowed bytes in the v1 format ([`FilterView::new`]). It answers every
/// query a [`BloomFilter`] answers, with the same results; `Copy`, so it
/// can be handed to threads by value.
///
/// ```
/// use lesshash::{Block, BloomFilter, FilterView};
///
/// let mut filter = BloomFilter::with_fpr(1000, 0.01)?;
/// filter.insert("apple");
/// let bytes = filter.to_bytes();
///
/// // A 64-byte-aligned buffer (a memory map is page-aligned already).
/// let mut aligned = vec![Block([0; 8]); bytes.len().div_ceil(64)];
/// let buf = &mut bytemuck::cast_slice_mut::<Block, u8>(&mut aligned)[..bytes.len()];
/// buf.copy_from_slice(&bytes);
///
/// let view = FilterView::new(buf)?;
/// assert!(view.contains("apple"));
/// # Ok::<(), lesshash::Error>(())
/// ```
#[derive(Clone, Copy)]
pub struct FilterView<'a> {
    header: Header,
    geometry: Geometry,
    words: ViewWords<'a>,
}

/// A view's words and their byte order: with a geometry, all that one
/// key's query reads. One-key calls through a handle (a map's `contains`,
/// a pre-hashed handle's) query through this and a borrowed geometry rather
/// than a whole [`FilterView`]: a view is 168 bytes, and building one per
/// key was a `memcpy` call per key that made a one-key query on a filter
/// in cache measurably slower (`handles/` benches;
/// docs/bench-notes/2026-11-27.md, "One-key calls through the handles").
#[derive(Clone, Copy)]
pub(crate) struct ViewWords<'a> {
    words: &'a [u64],
    /// Whether `words` hold little-endian values (a serialized payload)
    /// rather than native ones (an owned filter's bits).
    little_endian: bool,
}

impl<'a> ViewWords<'a> {
    /// An owned filter's words: native values.
    #[inline]
    pub(crate) fn native(words: &'a [u64]) -> Self {
        Self {
            words,
            little_endian: false,
        }
    }

    /// A serialized payload's words: little-endian values.
    #[inline]
    pub(crate) fn little_endian(words: &'a [u64]) -> Self {
        Self {
            words,
            little_endian: true,
        }
    }

    /// The words as native values without copying, when they are.
    #[inline]
    fn plain(self) -> Option<&'a [u64]> {
        (!self.little_endian || cfg!(target_endian = "little")).then_some(self.words)
    }

    /// Whether a key is possibly in the filter of `geometry` over these words.
    #[inline]
    pub(crate) fn contains<K: Key + ?Sized>(self, geometry: &Geometry, key: &K) -> bool {
        match self.plain() {
            Some(words) => geometry.contains(words, key),
            None => geometry.contains(&LeWords(self.words), key),
        }
    }

    /// Whether the key hashed to `hash` is possibly in the filter of
    /// `geometry` over these words; the scheme is a two-hash one.
    #[inline]
    pub(crate) fn contains_hash(self, geometry: &Geometry, hash: u128) -> bool {
        match self.plain() {
            Some(words) => geometry.contains_hash(words, hash),
            None => geometry.contains_hash(&LeWords(self.words), hash),
        }
    }
}

impl<'a> FilterView<'a> {
    /// A view over exactly one serialized filter, fully validated: header,
    /// sizes, padding and the checksum (one pass over the bytes).
    ///
    /// # Errors
    /// [`Error::Misaligned`] (`bytes`) if `bytes` does not start on a
    /// [`VIEW_ALIGN`] boundary; otherwise as
    /// [`BloomFilter::from_bytes`].
    pub fn new(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::open(bytes, true)
    }

    /// As [`new`](Self::new) but without the checksum pass: opening costs
    /// O(1) for any size. Header, sizes and padding are still validated, so
    /// queries never panic or read out of bounds; a corrupted payload would
    /// answer wrongly instead of being rejected. Use when the bytes were
    /// verified before (e.g. with [`new`](Self::new) by another process).
    ///
    /// # Errors
    /// As [`new`](Self::new) except [`FormatError::ChecksumMismatch`](crate::FormatError::ChecksumMismatch) for the
    /// payload.
    pub fn new_unverified(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::open(bytes, false)
    }

    fn open(bytes: &'a [u8], verify: bool) -> Result<Self, Error> {
        let offset = bytes.as_ptr() as usize % VIEW_ALIGN;
        if offset != 0 {
            return Err(Error::Misaligned {
                field: "bytes",
                align: VIEW_ALIGN,
                offset,
            });
        }
        let (header, payload) = validate(bytes, verify)?;
        // The payload starts 64 bytes into an aligned slice and is a whole
        // number of words, so this cast cannot fail; map it anyway.
        let words = bytemuck::try_cast_slice(payload).map_err(|_| Error::Misaligned {
            field: "bytes",
            align: 8,
            offset: payload.as_ptr() as usize % 8,
        })?;
        Ok(Self::payload(header, header.geometry(), words))
    }

    /// A view of a payload validated elsewhere (a
    /// [`MappedFilter`](crate::MappedFilter)'s map): `words` is the
    /// little-endian payload of the filter `header` describes.
    pub(crate) fn payload(header: Header, geometry: Geometry, words: &'a [u64]) -> Self {
        Self {
            header,
            geometry,
            words: ViewWords::little_endian(words),
        }
    }

    /// The filter's parameters.
    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The words as native values without copying, when they are.
    #[inline]
    pub(crate) fn plain(&self) -> Option<&'a [u64]> {
        self.words.plain()
    }

    /// What one key's query reads: the geometry and the words.
    #[inline]
    pub(crate) fn query_parts(&self) -> (&Geometry, ViewWords<'a>) {
        (&self.geometry, self.words)
    }

    /// The words as native values: borrowed, or converted on big-endian
    /// targets (for the fill estimators, which read whole blocks).
    fn native_words(&self) -> Cow<'a, [u64]> {
        match self.plain() {
            Some(words) => Cow::Borrowed(words),
            None => Cow::Owned(self.words.words.iter().map(|&w| u64::from_le(w)).collect()),
        }
    }

    /// Whether a key is possibly in the set (`false`: certainly not).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.words.contains(&self.geometry, key)
    }

    /// The kind of keys the filter records it was built from
    /// ([`BloomFilter::key_kind`]).
    pub fn key_kind(&self) -> crate::KeyKind {
        self.header.key_kind
    }

    /// This view with another recorded key kind: `KeyKind::Mixed` lets
    /// keys of any kind query it (the override of
    /// [`Error::KeyKindMismatch`]). The bytes are not changed.
    #[must_use]
    pub fn with_key_kind(mut self, kind: crate::KeyKind) -> Self {
        self.header.key_kind = kind;
        self
    }

    /// Whether the key hashed to `hash` is possibly in the set; the scheme
    /// is a two-hash one.
    #[inline]
    pub(crate) fn contains_hash(&self, hash: u128) -> bool {
        self.words.contains_hash(&self.geometry, hash)
    }

    /// Calls `answers(start, found)` for every run of keys, in order (key
    /// `start + j`'s answer in `found[j]`): the batch pipeline
    /// (`crate::filter::batch`) a chunk at a time, or key by key for `Independent`
    /// and for payloads on big-endian targets.
    pub(crate) fn contains_keys_with<K: Key>(
        &self,
        keys: &[K],
        mut answers: impl FnMut(usize, &[bool]),
    ) {
        let g = &self.geometry;
        match (Plan::of(g), self.plain()) {
            (Some(plan), Some(words)) => contains_pipeline(
                &plan,
                g.tuning,
                words,
                keys.len(),
                hash_keys(keys, *g.secrets()),
                answers,
            ),
            _ => {
                for (i, key) in keys.iter().enumerate() {
                    answers(i, &[self.contains(key)]);
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
        mut answers: impl FnMut(usize, &[bool]),
    ) {
        match self.plain() {
            Some(words) => contains_pipeline(
                plan,
                self.geometry.tuning,
                words,
                hashes.len(),
                copy_hashes(hashes),
                answers,
            ),
            None => {
                for (i, &h) in hashes.iter().enumerate() {
                    answers(i, &[self.contains_hash(h)]);
                }
            }
        }
    }

    /// The number of set bits (a popcount does not depend on byte order).
    pub fn count_ones(&self) -> u64 {
        self.words
            .words
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    /// Whether no bit is set: no key was inserted (or all were cleared).
    pub fn is_empty(&self) -> bool {
        self.words.words.iter().all(|&w| w == 0)
    }

    /// The fraction of bits set.
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.geometry.num_bits as f64
    }

    /// The estimated number of distinct keys inserted, from the fill (see
    /// the layout's formula in [`Layout`]'s modules; Swamidoss and
    /// Bhattacharya for classic).
    pub fn estimated_len(&self) -> f64 {
        let g = &self.geometry;
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

    /// The false-positive rate of a query now: k independent hashes' rate
    /// from the current fill, plus what the scheme's probe sequences add
    /// for the [`estimated_len`](Self::estimated_len) keys held (the terms
    /// of [`Layout::fpr`]).
    pub fn expected_fpr(&self) -> f64 {
        let g = &self.geometry;
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

    /// Writes into `out[i]` whether `keys[i]` is possibly in the set
    /// (the batch pipeline).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) naming
    /// `out` if `out` and `keys` differ in length.
    pub fn contains_batch<K: crate::Key>(
        &self,
        keys: &[K],
        out: &mut [bool],
    ) -> Result<(), crate::Error> {
        crate::Error::check_len("out", keys.len(), out.len())?;
        self.contains_keys_with(keys, |i, found| copy_answers(out, i, found));
        Ok(())
    }

    /// The answers for `keys` as a bitmap: bit `i % 64` of word `i / 64`
    /// is set when `keys[i]` is possibly in the set (a selection mask
    /// for columnar pipelines); `ceil(len / 64)` words, the unused high
    /// bits of the last word zero.
    pub fn contains_batch_bitmap<K: crate::Key>(&self, keys: &[K]) -> Vec<u64> {
        let mut out = vec![0; crate::filter::batch::bitmap_words(keys.len())];
        self.contains_keys_with(keys, |i, found| set_answers(&mut out, i, found));
        out
    }

    /// [`contains_batch_bitmap`](Self::contains_batch_bitmap) into
    /// `out` (overwritten), which must hold
    /// [`bitmap_words`](crate::filter::batch::bitmap_words)`(keys.len())` words.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) naming
    /// `out`.
    pub fn contains_batch_into_bitmap<K: crate::Key>(
        &self,
        keys: &[K],
        out: &mut [u64],
    ) -> Result<(), crate::Error> {
        crate::Error::check_len(
            "out",
            crate::filter::batch::bitmap_words(keys.len()),
            out.len(),
        )?;
        out.fill(0);
        self.contains_keys_with(keys, |i, found| set_answers(out, i, found));
        Ok(())
    }

    /// The parsed header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    crate::geometry::parameter_getters!(header);

    /// The stored insert counter.
    pub fn insert_calls(&self) -> u64 {
        self.header.insert_calls
    }

    /// An owned copy of the filter.
    ///
    /// # Errors
    /// [`Error::Allocation`] if the bits cannot be allocated.
    pub fn to_filter(&self) -> Result<BloomFilter, Error> {
        let mut filter = BloomFilter::from_geometry(self.geometry)?;
        for (dst, &src) in filter
            .words_mut()
            .iter_mut()
            .zip(self.native_words().iter())
        {
            *dst = src;
        }
        filter.set_insert_calls(self.header.insert_calls);
        filter.set_key_kind(self.header.key_kind);
        Ok(filter)
    }
}

/// Shows the parameters, never the bits.
impl std::fmt::Debug for FilterView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FilterView")
            .field("header", &self.header)
            .finish()
    }
}

/// The read-only queries of a filter type that lends a [`FilterView`]
/// (`self.view()`): each is that view's method, so an owned
/// [`BloomFilter`] and a [`MappedFilter`](crate::MappedFilter) answer as
/// their view does, with no second implementation to drift.
macro_rules! view_queries {
    () => {
        /// [`FilterView::contains_batch`] (`out[i]`: whether `keys[i]` is
        /// possibly in the set).
        ///
        /// # Errors
        /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) naming
        /// `out` if `out` and `keys` differ in length.
        pub fn contains_batch<K: $crate::Key>(
            &self,
            keys: &[K],
            out: &mut [bool],
        ) -> Result<(), $crate::Error> {
            self.view().contains_batch(keys, out)
        }

        /// [`FilterView::contains_batch_bitmap`] (bit `i % 64` of word
        /// `i / 64`: whether `keys[i]` is possibly in the set).
        pub fn contains_batch_bitmap<K: $crate::Key>(&self, keys: &[K]) -> Vec<u64> {
            self.view().contains_batch_bitmap(keys)
        }

        /// [`FilterView::contains_batch_into_bitmap`].
        ///
        /// # Errors
        /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) naming
        /// `out`.
        pub fn contains_batch_into_bitmap<K: $crate::Key>(
            &self,
            keys: &[K],
            out: &mut [u64],
        ) -> Result<(), $crate::Error> {
            self.view().contains_batch_into_bitmap(keys, out)
        }

        /// [`FilterView::par_contains_batch`]: `contains_batch` on rayon's
        /// thread pool.
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
            self.view().par_contains_batch(keys, out)
        }

        /// [`FilterView::count_ones`]: the number of set bits.
        pub fn count_ones(&self) -> u64 {
            self.view().count_ones()
        }

        /// [`FilterView::is_empty`]: whether no bit is set.
        pub fn is_empty(&self) -> bool {
            self.view().is_empty()
        }

        /// [`FilterView::fill_ratio`]: the fraction of bits set.
        pub fn fill_ratio(&self) -> f64 {
            self.view().fill_ratio()
        }

        /// [`FilterView::estimated_len`]: the estimated number of distinct
        /// keys inserted, from the fill.
        pub fn estimated_len(&self) -> f64 {
            self.view().estimated_len()
        }

        /// [`FilterView::expected_fpr`]: the false-positive rate of a query
        /// now.
        pub fn expected_fpr(&self) -> f64 {
            self.view().expected_fpr()
        }
    };
}
// Used by `mapped` (feature `mmap`) too.
#[cfg_attr(not(feature = "mmap"), allow(unused_imports))]
pub(crate) use view_queries;

/// The Arrow queries (feature `arrow`, `crate::arrow`) of a filter type
/// that lends a [`FilterView`]: each is that view's method.
#[cfg(feature = "arrow")]
macro_rules! array_queries {
    () => {
        /// [`FilterView::contains_array`]: whether each key of `array` is
        /// possibly in the set, null for a null key.
        ///
        /// # Errors
        /// [`Error::UnsupportedKeyType`](crate::Error::UnsupportedKeyType),
        /// [`Error::KeyKindMismatch`](crate::Error::KeyKindMismatch).
        pub fn contains_array(
            &self,
            array: &dyn arrow_array::Array,
        ) -> Result<arrow_array::BooleanArray, $crate::Error> {
            self.view().contains_array(array)
        }

        /// [`FilterView::contains_array_into_bitmap`]: the answers as a
        /// bitmap, false for a null key.
        ///
        /// # Errors
        /// As [`contains_array`](Self::contains_array), and
        /// [`Error::LengthMismatch`](crate::Error::LengthMismatch) naming
        /// `out`.
        pub fn contains_array_into_bitmap(
            &self,
            array: &dyn arrow_array::Array,
            out: &mut [u64],
        ) -> Result<(), $crate::Error> {
            self.view().contains_array_into_bitmap(array, out)
        }

        /// [`FilterView::par_contains_array`]: `contains_array` on rayon's
        /// thread pool.
        ///
        /// # Errors
        /// As [`contains_array`](Self::contains_array).
        #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
        pub fn par_contains_array(
            &self,
            array: &dyn arrow_array::Array,
        ) -> Result<arrow_array::BooleanArray, $crate::Error> {
            self.view().par_contains_array(array)
        }
    };
}
#[cfg(feature = "arrow")]
#[cfg_attr(not(feature = "mmap"), allow(unused_imports))]
pub(crate) use array_queries;

/// An owned filter's read-only side: its view.
impl BloomFilter {
    /// A read-only [`FilterView`] of this filter's bits (no copy): what to
    /// hand to code that queries any kind of filter, or to threads.
    #[inline]
    pub fn view(&self) -> FilterView<'_> {
        FilterView {
            header: Header::of(self),
            geometry: *self.geometry(),
            words: ViewWords::native(self.words()),
        }
    }

    view_queries!();

    #[cfg(feature = "arrow")]
    array_queries!();
}
