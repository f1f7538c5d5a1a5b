//! [`FilterView`]: queries a serialized filter in place, without copying it.
//!
//! Meant for memory-mapped files: map the file, hand the bytes to
//! [`FilterView::new`], and query. The bits are read straight from the
//! borrowed bytes (as little-endian words), so opening costs one checksum
//! pass ([`FilterView::new`]) or nothing at all
//! ([`FilterView::new_unverified`]), whatever the filter's size.

#![forbid(unsafe_code)]

use crate::Error;
use crate::bits::LeWords;
use crate::filter::BloomFilter;
use crate::format::{Header, validate};
use crate::geometry::Geometry;
use crate::hash::Key;

/// The alignment [`FilterView`] requires of its bytes: one cache line, so
/// that the payload (at offset 64) is block-aligned as in an owned filter.
/// Memory maps are page-aligned, which satisfies it.
pub const VIEW_ALIGN: usize = 64;

/// A read-only filter over borrowed bytes in the v1 format.
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
    /// The payload as little-endian words.
    words: &'a [u64],
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
    /// As [`new`](Self::new) except [`Error::ChecksumMismatch`] for the
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
        Ok(Self {
            geometry: header.geometry(),
            header,
            words,
        })
    }

    /// A view of bytes validated elsewhere (a [`MappedFilter`](crate::MappedFilter)'s
    /// map): `words` is the payload of the filter `header` describes.
    #[cfg(feature = "mmap")]
    pub(crate) fn from_validated(header: Header, geometry: Geometry, words: &'a [u64]) -> Self {
        Self {
            header,
            geometry,
            words,
        }
    }

    /// Whether a key is possibly in the set (`false`: certainly not).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.geometry.contains(&LeWords(self.words), key)
    }

    /// The filter's parameters.
    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The payload as little-endian words.
    pub(crate) fn payload_words(&self) -> &'a [u64] {
        self.words
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
        for (dst, src) in filter.words_mut().iter_mut().zip(self.words) {
            *dst = u64::from_le(*src);
        }
        filter.set_insert_calls(self.header.insert_calls);
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
