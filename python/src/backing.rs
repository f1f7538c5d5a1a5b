//! What a Python `BloomFilter` holds: an owned filter (lent or not), or a
//! read-only map of a filter file (`BloomFilter.open`). All answer every
//! query through the crate's read-only [`FilterView`] ([`Backing::view`],
//! the one place that tells them apart for reading); changing a filter goes through [`Backing::owned_mut`], which a
//! map refuses.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use lesshash::format::{HEADER_LEN, TRAILER_LEN};
use lesshash::{Error, FilterView, KeyKind, MappedFilter};

use crate::persist::Persisted;

pub enum Backing {
    Owned(lesshash::BloomFilter),
    /// An owned filter whose bits were lent out (`BloomFilter._frames`: a
    /// buffer a transport sends from without copying). The buffer holds
    /// the other reference, so the bits stay in place and unchanged while
    /// it lives; a change meanwhile copies them first (`Arc::make_mut`),
    /// and one after it is gone changes them in place.
    Lent(Arc<lesshash::BloomFilter>),
    Mapped {
        filter: MappedFilter,
        /// Whether the checksum was verified at open (kept so that the
        /// filter pickles, and ships to Dask workers, as it was opened).
        verified: bool,
        /// The key kind this filter answers as: the file's, until set
        /// (`bf.key_kind = ...`; the file is not changed). Every view,
        /// copy, serialization and pickle of the map carries it.
        key_kind: KeyKind,
    },
}

impl Backing {
    /// The crate's read-only filter over whichever bits this holds: every
    /// query reads through it, owned or mapped alike.
    pub fn view(&self) -> FilterView<'_> {
        match self {
            Self::Owned(f) => f.view(),
            Self::Lent(f) => f.view(),
            Self::Mapped {
                filter, key_kind, ..
            } => filter.view().with_key_kind(*key_kind),
        }
    }

    /// The key kind queries are checked against: the filter's, or a
    /// map's as set on this object.
    fn held_key_kind(&self) -> KeyKind {
        match self {
            Self::Owned(f) => f.key_kind(),
            Self::Lent(f) => f.key_kind(),
            Self::Mapped { key_kind, .. } => *key_kind,
        }
    }

    /// One key's query (`key in bf`), or the filter's key kind when it
    /// does not accept keys of `kind`. Straight to the filter, not through
    /// [`view`](Self::view): a view is a copy of the filter's parameters
    /// and derived constants, which cost `key in bf` more than its probe
    /// (docs/bench-notes/2026-11-28.md, "One key at a time").
    #[inline]
    pub fn contains_one<K: lesshash::Key + ?Sized>(
        &self,
        key: &K,
        kind: KeyKind,
    ) -> Result<bool, KeyKind> {
        let held = self.held_key_kind();
        if !held.accepts(kind) {
            return Err(held);
        }
        Ok(match self {
            Self::Owned(f) => f.contains(key),
            Self::Lent(f) => f.contains(key),
            Self::Mapped { filter, .. } => filter.contains(key),
        })
    }

    /// Sets the recorded key kind: an owned filter's (kept in its bytes
    /// and files), a map's for this object only (the file is read-only).
    pub fn set_key_kind(&mut self, kind: KeyKind) {
        match self {
            Self::Mapped { key_kind, .. } => *key_kind = kind,
            // Unchanged, a lent filter's bits are not copied.
            _ if self.view().key_kind() == kind => {}
            _ => {
                if let Some(f) = self.owned_mut() {
                    f.set_key_kind(kind);
                }
            }
        }
    }

    /// The file's key kind where this map answers as another
    /// (`set_key_kind`); `None` for an owned filter or a map as its file.
    pub fn key_kind_override(&self) -> Option<KeyKind> {
        match self {
            Self::Mapped {
                filter, key_kind, ..
            } => (filter.key_kind() != *key_kind).then_some(*key_kind),
            _ => None,
        }
    }

    /// Maps the filter file at `path` (see `lesshash::MappedFilter`).
    pub fn open(path: &Path, verify: bool) -> Result<Self, Error> {
        let filter = if verify {
            MappedFilter::open(path)
        } else {
            MappedFilter::open_unverified(path)
        }?;
        Ok(Self::Mapped {
            key_kind: filter.key_kind(),
            filter,
            verified: verify,
        })
    }

    /// The mapped file's path and whether it was verified; `None` for an
    /// owned filter.
    pub fn mapped(&self) -> Option<(&Path, bool)> {
        match self {
            Self::Owned(_) | Self::Lent(_) => None,
            Self::Mapped {
                filter, verified, ..
            } => Some((filter.path(), *verified)),
        }
    }

    /// The owned filter's bits, shared with the caller (who sends them
    /// without copying): an owned filter becomes [`Backing::Lent`]. `None`
    /// for a map.
    pub fn lend(&mut self) -> Option<Arc<lesshash::BloomFilter>> {
        if let Self::Owned(f) = self {
            // The smallest filter there is holds the place for the moment
            // the owned one moves into its `Arc`.
            let placeholder = lesshash::BloomFilter::builder()
                .layout(lesshash::Layout::Classic)
                .bits(64)
                .hashes(1)
                .build()
                .expect("a 1-bit, 1-hash filter is valid");
            *self = Self::Lent(Arc::new(std::mem::replace(f, placeholder)));
        }
        match self {
            Self::Lent(f) => Some(Arc::clone(f)),
            _ => None,
        }
    }

    /// The filter to change; `None` for a map, which is read-only.
    pub fn owned_mut(&mut self) -> Option<&mut lesshash::BloomFilter> {
        match self {
            Self::Owned(f) => Some(f),
            Self::Lent(f) => Some(Arc::make_mut(f)),
            Self::Mapped { .. } => None,
        }
    }

    /// The filter as an owned one: borrowed, or a map's bits copied (for
    /// unions and comparisons, which the crate defines on owned filters).
    pub fn owned(&self) -> Result<Cow<'_, lesshash::BloomFilter>, Error> {
        match self {
            Self::Owned(f) => Ok(Cow::Borrowed(f)),
            Self::Lent(f) => Ok(Cow::Borrowed(f)),
            // The view carries the map's key kind.
            Self::Mapped { .. } => self.view().to_filter().map(Cow::Owned),
        }
    }

    /// An owned copy (`copy()`: always writable).
    pub fn to_owned_filter(&self) -> Result<lesshash::BloomFilter, Error> {
        self.owned().map(Cow::into_owned)
    }

    /// Equal parameters and bits, as the crate's `==` on owned filters.
    pub fn equals(&self, other: &Self) -> Result<bool, Error> {
        Ok(*self.owned()? == *other.owned()?)
    }

    /// Memory the bits take: allocated for an owned filter, mapped (the
    /// payload's pages) for a map.
    pub fn nbytes(&self) -> usize {
        match self {
            Self::Owned(f) => f.size_in_bytes(),
            Self::Lent(f) => f.size_in_bytes(),
            // The payload was mapped, so it fits the address space.
            Self::Mapped { filter, .. } => {
                usize::try_from(filter.header().payload_len()).unwrap_or(usize::MAX)
            }
        }
    }
}

impl Persisted for Backing {
    fn to_bytes(&self) -> Vec<u8> {
        match self {
            Self::Owned(f) => f.to_bytes(),
            Self::Lent(f) => f.to_bytes(),
            Self::Mapped { filter, .. } => {
                // The map is the serialized filter, byte for byte; with
                // another key kind, a new header and checksum.
                let mut bytes = filter.as_bytes().to_vec();
                if let Some(kind) = self.key_kind_override() {
                    let mut header = *filter.header();
                    header.key_kind = kind;
                    let (head, rest) = bytes.split_at_mut(HEADER_LEN);
                    head.copy_from_slice(&header.to_bytes());
                    let (payload, trailer) = rest.split_at_mut(rest.len() - TRAILER_LEN);
                    trailer.copy_from_slice(&checksum(head, payload).to_le_bytes());
                }
                bytes
            }
        }
    }
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        lesshash::BloomFilter::from_bytes(bytes).map(Self::Owned)
    }
    fn write_file(&self, path: &Path) -> Result<(), Error> {
        match self {
            Self::Owned(f) => f.write_file(path),
            Self::Lent(f) => f.write_file(path),
            // A map with another key kind: written from a copy in memory
            // (`MappedFilter::write_file` writes the file's own bytes).
            Self::Mapped { .. } if self.key_kind_override().is_some() => {
                self.owned()?.write_file(path)
            }
            Self::Mapped { filter, .. } => filter.write_file(path),
        }
    }
    fn read_file(path: &Path) -> Result<Self, Error> {
        lesshash::BloomFilter::read_file(path).map(Self::Owned)
    }
}

/// The format's checksum of a serialized filter (its trailer): XXH3-64 of
/// the header and the payload.
pub fn checksum(header: &[u8], payload: &[u8]) -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(header);
    h.update(payload);
    h.digest()
}
