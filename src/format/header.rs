//! The 64-byte v1 header: the ids of layouts and schemes, and
//! [`Header`], written and parsed with every field checked (the layout
//! of the bytes is in the [module docs](super)).

#![forbid(unsafe_code)]

use super::{HEADER_LEN, MAGIC, TRAILER_LEN, VERSION};
use crate::FormatError;
use crate::HashFamily;
use crate::KeyKind;

use crate::Error;
use crate::filter::BloomFilter;
use crate::format::frame::{check_input_len, check_preamble, le_u64, seal_header};
use crate::geometry::Geometry;
use crate::layout::Layout;
use crate::scheme::{Enhancement, Scheme};
use crate::util::bits::Block;
use crate::util::limits::{MAX_BITS, MAX_HASHES};

/// The stable id of a scheme in the format (independent of the enum's order).
pub fn scheme_id(scheme: Scheme) -> u8 {
    match scheme {
        Scheme::Independent => 1,
        Scheme::DoubleHashing => 2,
        Scheme::EnhancedDoubleHashing(Enhancement::Square) => 3,
        Scheme::EnhancedDoubleHashing(Enhancement::Cube) => 4,
    }
}

/// The scheme of a format id, if it is one.
pub fn scheme_from_id(id: u8) -> Option<Scheme> {
    Scheme::ALL.into_iter().find(|&s| scheme_id(s) == id)
}

/// The layout of a format id (`Layout as u8`), if it is one.
pub fn layout_from_id(id: u8) -> Option<Layout> {
    Layout::ALL.into_iter().find(|&l| l as u8 == id)
}

/// The `block_bits` field of a layout: 0 for flat layouts.
///
/// Blocked layouts return their block size here (512), which lets them use
/// v1 unchanged.
fn block_bits(layout: Layout) -> u32 {
    match layout {
        Layout::Classic | Layout::Partitioned => 0,
        // Each key in one 512-bit cache line, `Block`. (No catch-all arm: a
        // new layout must say which it is.)
        Layout::Blocked | Layout::SplitBlock => Block::BITS as u32,
    }
}

/// A parsed, validated v1 header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Header {
    /// The layout.
    pub layout: Layout,
    /// The index scheme.
    pub scheme: Scheme,
    /// The 128-bit hash family (byte 12, the `hash` id).
    pub hash_family: HashFamily,
    /// The hash seed.
    pub seed: u64,
    /// m, the number of bits.
    pub num_bits: u64,
    /// k, the number of probes per key.
    pub num_hashes: u32,
    /// Bits per block (0 for flat layouts).
    pub block_bits: u32,
    /// The insert counter stored with the filter.
    pub insert_calls: u64,
    /// The kind of keys the filter was built from (byte 14; `Unrecorded`,
    /// id 0, in every file written before kinds were recorded).
    pub key_kind: KeyKind,
}

impl Header {
    /// Checks that an input of `len` bytes is exactly this filter:
    /// [`FormatError::Truncated`] naming the part cut short (`payload` or
    /// `checksum`), [`FormatError::SizeMismatch`] (`input length`) for extra
    /// bytes. The in-memory and the file loaders share it.
    pub(super) fn check_len(&self, len: u64) -> Result<(), Error> {
        check_input_len(len, self.payload_len())
    }

    /// The header of a filter.
    pub fn of(filter: &BloomFilter) -> Self {
        let g = filter.geometry();
        Self {
            layout: g.layout,
            scheme: g.scheme,
            hash_family: g.hash_family,
            seed: g.seed,
            num_bits: g.num_bits,
            num_hashes: g.num_hashes,
            block_bits: block_bits(g.layout),
            insert_calls: filter.insert_calls(),
            key_kind: filter.key_kind(),
        }
    }

    /// The payload's length in bytes: `ceil(m / 64) * 8`.
    pub fn payload_len(&self) -> u64 {
        self.num_bits.div_ceil(64) * 8
    }

    /// The whole serialized filter's length in bytes.
    pub fn total_len(&self) -> u64 {
        (HEADER_LEN + TRAILER_LEN) as u64 + self.payload_len()
    }

    /// The 64 header bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..10].copy_from_slice(&VERSION.to_le_bytes());
        b[10] = self.layout as u8;
        b[11] = scheme_id(self.scheme);
        b[12] = self.hash_family.id();
        // 13: flags; 15: reserved; zero.
        b[14] = self.key_kind as u8;
        b[16..20].copy_from_slice(&self.num_hashes.to_le_bytes());
        b[20..24].copy_from_slice(&self.block_bits.to_le_bytes());
        b[24..32].copy_from_slice(&self.seed.to_le_bytes());
        b[32..40].copy_from_slice(&self.num_bits.to_le_bytes());
        b[40..48].copy_from_slice(&self.insert_calls.to_le_bytes());
        b[48..56].copy_from_slice(&self.payload_len().to_le_bytes());
        seal_header(&mut b);
        b
    }

    /// Parses and validates the header at the start of `bytes` (which may
    /// hold more than the header).
    ///
    /// # Errors
    /// [`FormatError::Truncated`] (fewer than 64 bytes), [`FormatError::BadMagic`],
    /// [`FormatError::UnsupportedVersion`], [`FormatError::ChecksumMismatch`]
    /// (`header_checksum`), [`FormatError::UnknownId`] (`layout`, `scheme`,
    /// `hash`, `key_kind`), [`FormatError::NonZeroPadding`] (`flags`, `reserved`),
    /// [`FormatError::OutOfRange`] (`k`, `m`, `block_bits`), [`FormatError::SizeMismatch`]
    /// (`payload_len`).
    pub fn parse(bytes: &[u8]) -> Result<Self, Error> {
        let b = check_preamble(bytes, &MAGIC, VERSION)?;

        let layout = layout_from_id(b[10]).ok_or(Error::Format(FormatError::UnknownId {
            field: "layout",
            id: b[10].into(),
        }))?;
        let scheme = scheme_from_id(b[11]).ok_or(Error::Format(FormatError::UnknownId {
            field: "scheme",
            id: b[11].into(),
        }))?;
        let hash_family =
            HashFamily::from_id(b[12]).ok_or(Error::Format(FormatError::UnknownId {
                field: "hash",
                id: b[12].into(),
            }))?;
        if b[13] != 0 {
            return Err(Error::Format(FormatError::NonZeroPadding {
                field: "flags",
            }));
        }
        let key_kind = KeyKind::from_id(b[14]).ok_or(Error::Format(FormatError::UnknownId {
            field: "key_kind",
            id: b[14].into(),
        }))?;
        if b[15] != 0 {
            return Err(Error::Format(FormatError::NonZeroPadding {
                field: "reserved",
            }));
        }
        let k = u32::from_le_bytes([b[16], b[17], b[18], b[19]]);
        if k == 0 || k > MAX_HASHES {
            return Err(Error::Format(FormatError::OutOfRange {
                field: "k",
                reason: format!("must be between 1 and {MAX_HASHES}, got {k}"),
            }));
        }
        let block = u32::from_le_bytes([b[20], b[21], b[22], b[23]]);
        if block != block_bits(layout) {
            return Err(Error::Format(FormatError::OutOfRange {
                field: "block_bits",
                reason: format!(
                    "the {} layout has {} bits per block, got {block}",
                    layout.name(),
                    block_bits(layout)
                ),
            }));
        }
        let seed = le_u64(&b[24..32]);
        let m = le_u64(&b[32..40]);
        if m == 0 || m > MAX_BITS {
            return Err(Error::Format(FormatError::OutOfRange {
                field: "m",
                reason: format!("must be between 1 and {MAX_BITS}, got {m}"),
            }));
        }
        // The layout says which m it stores for k probes (e.g. a multiple
        // of k for partitioned), the rule the builder sizes by: a stored m
        // it would not produce is rejected.
        if layout.stored_bits(m, k).ok() != Some(m) {
            return Err(Error::Format(FormatError::OutOfRange {
                field: "m",
                reason: format!(
                    "{m} bits with k = {k} is not a valid size for the {} layout",
                    layout.name()
                ),
            }));
        }
        if hash_family != HashFamily::Xxh3 && !scheme.is_two_hash() {
            return Err(Error::Format(FormatError::OutOfRange {
                field: "hash",
                reason: format!(
                    "the {} scheme hashes with seeded XXH3-64 (id 1), got id {}",
                    scheme.name(),
                    hash_family.id()
                ),
            }));
        }
        let header = Self {
            layout,
            scheme,
            hash_family,
            seed,
            num_bits: m,
            num_hashes: k,
            block_bits: block,
            insert_calls: le_u64(&b[40..48]),
            key_kind,
        };
        let payload_len = le_u64(&b[48..56]);
        if payload_len != header.payload_len() {
            return Err(Error::Format(FormatError::SizeMismatch {
                field: "payload_len",
                expected: header.payload_len(),
                found: payload_len,
            }));
        }
        Ok(header)
    }

    /// The geometry the header describes (fields already validated).
    pub(crate) fn geometry(&self) -> Geometry {
        Geometry::new(
            self.layout,
            self.scheme,
            self.hash_family,
            self.seed,
            self.num_bits,
            self.num_hashes,
        )
    }
}
