//! What a Python `BloomFilter` holds: an owned filter (lent or not), or a
//! read-only map of a filter file (`BloomFilter.open`). All answer every
//! query through the crate's read-only [`FilterView`] ([`Backing::view`],
//! the one place that tells them apart for reading); changing a filter goes through [`Backing::owned_mut`], which a
//! map refuses.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use lesshash::{Error, FilterView, MappedFilter};

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
    },
}

impl Backing {
    /// The crate's read-only filter over whichever bits this holds: every
    /// query reads through it, owned or mapped alike.
    pub fn view(&self) -> FilterView<'_> {
        match self {
            Self::Owned(f) => f.view(),
            Self::Lent(f) => f.view(),
            Self::Mapped { filter, .. } => filter.view(),
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
            filter,
            verified: verify,
        })
    }

    /// The mapped file's path and whether it was verified; `None` for an
    /// owned filter.
    pub fn mapped(&self) -> Option<(&Path, bool)> {
        match self {
            Self::Owned(_) | Self::Lent(_) => None,
            Self::Mapped { filter, verified } => Some((filter.path(), *verified)),
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
            Self::Mapped { filter, .. } => filter.to_filter().map(Cow::Owned),
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
            // The map is the serialized filter, byte for byte.
            Self::Mapped { filter, .. } => filter.as_bytes().to_vec(),
        }
    }
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        lesshash::BloomFilter::from_bytes(bytes).map(Self::Owned)
    }
    fn write_file(&self, path: &Path) -> Result<(), Error> {
        match self {
            Self::Owned(f) => f.write_file(path),
            Self::Lent(f) => f.write_file(path),
            Self::Mapped { filter, .. } => filter.write_file(path),
        }
    }
    fn read_file(path: &Path) -> Result<Self, Error> {
        lesshash::BloomFilter::read_file(path).map(Self::Owned)
    }
}
