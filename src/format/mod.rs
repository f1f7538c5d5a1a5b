//! The binary format, version 1: how a [`BloomFilter`] is written to bytes
//! and read back, on any platform, by this and every later version.
//!
//! The format is specified byte by byte in `docs/format.md`; in short:
//!
//! ```text
//! offset  size  field
//!      0     8  magic            89 4C 48 42 46 0D 0A 1A  ("\x89LHBF\r\n\x1a")
//!      8     2  version          1
//!     10     1  layout           Layout as u8 (1 classic, 2 partitioned, 3 blocked, 4 split-block)
//!     11     1  scheme           see [`scheme_id`] (1 independent, 2 double, 3 enhanced-square, 4 enhanced-cube)
//!     12     1  hash             1 = XXH3-128, 2 = folded multiply (keys <= 16 bytes; XXH3-128 past); independent: seeded XXH3-64
//!     13     1  flags            0 (no flags are defined in v1)
//!     14     2  reserved         0
//!     16     4  k                probes per key, 1..=64
//!     20     4  block_bits       bits per block; 0 for the flat layouts (classic, partitioned)
//!     24     8  seed
//!     32     8  m                bits, 1..=2^46
//!     40     8  insert_calls     the filter's insert counter (bookkeeping)
//!     48     8  payload_len      ceil(m / 64) * 8
//!     56     8  header_checksum  XXH3-64 (seed 0) of bytes 0..56
//!     64     P  payload          the bits as ceil(m/64) little-endian u64 words; bits >= m are 0
//!   64+P     8  checksum         XXH3-64 (seed 0) of bytes 0..64+P
//! ```
//!
//! All integers are little-endian. The header is 64 bytes so that the payload
//! of a 64-byte-aligned buffer (a memory-mapped file) is itself aligned, which
//! [`FilterView`](crate::FilterView) relies on.
//!
//! # Validation
//!
//! Nothing in the input is trusted. The header checksum is verified before
//! any field is interpreted, so a flipped header byte is reported as
//! corruption rather than as a strange parameter; every field is then range
//! checked and the sizes are checked against each other with checked
//! arithmetic. [`BloomFilter::from_bytes`] verifies the length and the
//! checksum before allocating; [`BloomFilter::read_from`] allocates at most
//! 64 MiB up front and grows with the data actually read, so a
//! header promising terabytes over a short stream fails with
//! [`FormatError::Truncated`] after allocating about what was read.
//!
//! # Submodules
//!
//! `header` parses and writes the 64-byte header above. `frame` is what
//! every lesshash format shares (this one and the Count-Min sketch's): the
//! preamble and checksums, little-endian payload words, bounded stream
//! reads and the atomic file write; `output_file` decides where an output
//! file goes. Both sit below the filter types, so that the sketch, which
//! does not know the filter, can use them.

#![forbid(unsafe_code)]

pub(crate) mod frame;
pub(crate) mod header;
pub mod looks;
pub(crate) mod output_file;

pub use header::Header;

use crate::FormatError;
use std::io::{Read, Write};
use std::path::Path;

use xxhash_rust::xxh3::xxh3_64;

pub use crate::format::frame::{HEADER_LEN, TRAILER_LEN};
use crate::format::frame::{
    check_checksum, le_u64, load_framed, open_sized, read_payload, write_framed,
};

use crate::Error;
use crate::filter::BloomFilter;
use crate::util::bits::AlignedWords;

/// The first 8 bytes of every serialized filter: a non-ASCII byte (catches
/// 7-bit transfers), `LHBF`, CR LF (catches newline translation) and
/// Ctrl-Z, as PNG does.
pub const MAGIC: [u8; 8] = *b"\x89LHBF\r\n\x1a";

/// The format version this library writes (and the newest it reads).
pub const VERSION: u16 = 1;

/// Validates a whole serialized filter held in memory and returns its header
/// and its payload. The input must be exactly one filter long.
/// `verify_checksum: false` skips the one pass over the payload (the zero-copy
/// view's unverified constructor); everything else is still checked.
pub(crate) fn validate(bytes: &[u8], verify_checksum: bool) -> Result<(Header, &[u8]), Error> {
    let header = Header::parse(bytes)?;
    let payload_end = HEADER_LEN as u64 + header.payload_len();
    header.check_len(bytes.len() as u64)?;
    // len == total fits in usize, so these casts are exact.
    let payload_end = payload_end as usize;
    if verify_checksum {
        check_checksum(
            le_u64(&bytes[payload_end..]),
            xxh3_64(&bytes[..payload_end]),
        )?;
    }
    let payload = &bytes[HEADER_LEN..payload_end];
    check_padding(&header, le_u64(&payload[payload.len() - 8..]))?;
    Ok((header, payload))
}

/// The bits of the last payload word beyond m must be zero.
fn check_padding(header: &Header, last_word: u64) -> Result<(), Error> {
    let used = header.num_bits % 64;
    if used != 0 && last_word >> used != 0 {
        return Err(Error::Format(FormatError::NonZeroPadding {
            field: "payload padding bits",
        }));
    }
    Ok(())
}

impl BloomFilter {
    /// The length of [`to_bytes`](Self::to_bytes)' output.
    pub fn serialized_len(&self) -> u64 {
        Header::of(self).total_len()
    }

    /// The filter in the v1 binary format (`docs/format.md`).
    ///
    /// ```
    /// use lesshash::BloomFilter;
    ///
    /// let mut filter = BloomFilter::with_fpr(1000, 0.01)?;
    /// filter.insert("apple");
    /// let bytes = filter.to_bytes();
    /// let loaded = BloomFilter::from_bytes(&bytes)?;
    /// assert_eq!(loaded, filter);
    /// assert!(loaded.contains("apple"));
    /// # Ok::<(), lesshash::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.serialized_len() as usize);
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// Writes the filter in the v1 binary format, streaming: the bits are
    /// written straight from the filter (big-endian platforms convert
    /// through a small buffer), never copied whole.
    ///
    /// # Errors
    /// [`Error::Io`] if the writer fails.
    pub fn write_to<W: Write>(&self, w: W) -> Result<(), Error> {
        let words = &self.words()[..self.num_bits().div_ceil(64) as usize];
        write_framed(w, &Header::of(self).to_bytes(), words)
    }

    /// Loads a filter from exactly one serialized filter (no bytes before
    /// or after). The header and the length are verified before allocating
    /// (so the allocation never exceeds the input's size), the checksum
    /// during the copy; a mismatch returns an error, never the filter.
    ///
    /// # Errors
    /// Any of the format errors (see [`Header::parse`]), plus
    /// [`FormatError::Truncated`] (`payload`, `checksum`), [`FormatError::SizeMismatch`]
    /// (`input length`: bytes after the filter), [`FormatError::ChecksumMismatch`]
    /// (`checksum`), [`FormatError::NonZeroPadding`] (`payload padding bits`).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        // The allocation is bounded by the input's length (checked here), so
        // the checksum can be verified during the copy.
        let (header, payload) = validate(bytes, false)?;
        let mut filter = BloomFilter::from_geometry(header.geometry())?;
        load_framed(
            bytes,
            &mut filter.words_mut()[..payload.len() / 8],
            |_, _| {},
        )?;
        filter.set_insert_calls(header.insert_calls);
        filter.set_key_kind(header.key_kind);
        Ok(filter)
    }

    /// Reads one serialized filter from a stream, leaving the stream just
    /// after it (so filters can be concatenated). Reads in chunks directly
    /// into the filter's bits; payloads above 64 MiB grow as bytes
    /// arrive, so a lying header cannot make this allocate much more than
    /// what was read.
    ///
    /// Wrap unbuffered readers in a `BufReader` or not: the payload is read
    /// in large chunks either way.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) (bytes after the filter are not
    /// read, so not an error), plus [`Error::Io`].
    pub fn read_from<R: Read>(mut r: R) -> Result<Self, Error> {
        let header = crate::format::frame::read_header(&mut r, &MAGIC)?;
        let parsed = Header::parse(&header)?;
        read_body(r, &parsed, &header, false)
    }

    /// Writes the filter to `path`. A regular file (or a path where nothing
    /// is yet) is written atomically: into a new temporary file in the same
    /// directory, flushed to disk (`fsync`), then renamed over `path` (and,
    /// on Unix, the directory synced), so readers see the old file or the
    /// new one, never a partial one; on error the temporary file is removed.
    /// A symbolic link is followed: its target is replaced, the link kept.
    /// A FIFO or a character device (`/dev/stdout`, a pipe) is written
    /// straight through: renaming over it would replace the device with a
    /// file.
    ///
    /// # Errors
    /// [`Error::Io`] naming the step that failed;
    /// [`Error::UnusablePath`] if `path` has no file name or is
    /// a directory, a socket or a block device.
    pub fn write_file(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        crate::format::frame::write_file(path.as_ref(), "writing the filter", |w| self.write_to(w))
    }

    /// Loads a filter from a file written by [`write_file`](Self::write_file)
    /// (or any file holding exactly one serialized filter). A regular file's
    /// length is checked against the header before the bits are allocated;
    /// a pipe, a FIFO or a device is read as a stream, as
    /// [`read_from`](Self::read_from) reads, and must end after the filter.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), plus [`Error::Io`].
    pub fn read_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let (mut file, len) = open_sized(path.as_ref())?;
        let header = crate::format::frame::read_header(&mut file, &MAGIC)?;
        let parsed = Header::parse(&header)?;
        let Some(len) = len else {
            // A stream: read as `read_from` reads (allocation bounded by
            // what arrives), then it must end.
            let filter = read_body(&mut file, &parsed, &header, false)?;
            crate::format::frame::check_stream_end(file, parsed.total_len())?;
            return Ok(filter);
        };
        parsed.check_len(len)?;
        read_body(file, &parsed, &header, true)
    }
}

/// A filter as two parts held apart: the header and the payload, without
/// the trailing checksum, for a transport that carries them as separate
/// frames (a Dask message, a shared-memory segment) and guarantees their
/// integrity itself. Sending borrows the bits (no copy on little-endian
/// platforms, no checksum pass); receiving verifies the header (its own
/// checksum and every field), the payload's length and padding, and copies
/// the bits once. Data at rest keeps the whole format ([`to_bytes`],
/// [`write_file`]), whose checksum covers the payload.
///
/// [`to_bytes`]: BloomFilter::to_bytes
/// [`write_file`]: BloomFilter::write_file
impl BloomFilter {
    /// The payload as the format stores it: `ceil(m / 64)` little-endian
    /// words. Borrowed from the filter's bits on little-endian platforms;
    /// a converted copy on big-endian ones. With
    /// `Header::of(&filter).to_bytes()` it is the whole filter but its
    /// checksum; [`from_header_and_payload`](Self::from_header_and_payload)
    /// rebuilds it.
    pub fn payload_bytes(&self) -> std::borrow::Cow<'_, [u8]> {
        let words = &self.words()[..self.num_bits().div_ceil(64) as usize];
        if cfg!(target_endian = "little") {
            std::borrow::Cow::Borrowed(bytemuck::cast_slice(words))
        } else {
            std::borrow::Cow::Owned(words.iter().flat_map(|w| w.to_le_bytes()).collect())
        }
    }

    /// A filter from its header (64 bytes, as `Header::to_bytes` writes)
    /// and its payload ([`payload_bytes`](Self::payload_bytes)), held
    /// apart. Everything [`from_bytes`](Self::from_bytes) checks but the
    /// payload's checksum, which the two parts do not carry: the header's
    /// own checksum and fields, the payload's length and its padding bits.
    /// One copy of the bits; the payload may have any alignment.
    ///
    /// ```
    /// use lesshash::BloomFilter;
    /// use lesshash::format::Header;
    ///
    /// let mut filter = BloomFilter::with_fpr(1000, 0.01)?;
    /// filter.insert("apple");
    /// let header = Header::of(&filter).to_bytes();
    /// let payload = filter.payload_bytes();
    /// let received = BloomFilter::from_header_and_payload(&header, &payload)?;
    /// assert_eq!(received, filter);
    /// assert_eq!(received.insert_calls(), 1);
    /// # Ok::<(), lesshash::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Header::parse`] for `header`, [`FormatError::SizeMismatch`]
    /// (`header` for bytes after the header's 64, `payload` for a length
    /// other than the header's `payload_len`), [`FormatError::NonZeroPadding`]
    /// (`payload padding bits`), [`Error::Allocation`].
    pub fn from_header_and_payload(header: &[u8], payload: &[u8]) -> Result<Self, Error> {
        if header.len() > HEADER_LEN {
            return Err(Error::Format(FormatError::SizeMismatch {
                field: "header",
                expected: HEADER_LEN as u64,
                found: header.len() as u64,
            }));
        }
        let parsed = Header::parse(header)?;
        if payload.len() as u64 != parsed.payload_len() {
            return Err(Error::Format(FormatError::SizeMismatch {
                field: "payload",
                expected: parsed.payload_len(),
                found: payload.len() as u64,
            }));
        }
        check_padding(&parsed, le_u64(&payload[payload.len() - 8..]))?;
        let mut filter = BloomFilter::from_geometry(parsed.geometry())?;
        crate::format::frame::load_le(&mut filter.words_mut()[..payload.len() / 8], payload);
        filter.set_insert_calls(parsed.insert_calls);
        filter.set_key_kind(parsed.key_kind);
        Ok(filter)
    }
}

/// Reads the payload and the checksum after a parsed header. `trusted_len`:
/// the input is known to hold the whole payload (a file whose length was
/// checked), so the bits are allocated at once whatever their size.
fn read_body<R: Read>(
    r: R,
    header: &Header,
    header_bytes: &[u8; HEADER_LEN],
    trusted_len: bool,
) -> Result<BloomFilter, Error> {
    let blocks = read_payload(r, header_bytes, header.payload_len(), trusted_len, "m")?;
    let words: &[u64] = bytemuck::cast_slice(&blocks);
    check_padding(header, words[header.payload_len() as usize / 8 - 1])?;
    let mut filter = BloomFilter::from_parts(
        header.geometry(),
        AlignedWords::from_blocks(blocks),
        header.insert_calls,
    );
    filter.set_key_kind(header.key_kind);
    Ok(filter)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::header::{layout_from_id, scheme_from_id, scheme_id};
    use crate::layout::Layout;
    use crate::scheme::Scheme;
    use crate::util::limits::MAX_BITS;

    #[test]
    fn scheme_ids_are_stable_and_distinct() {
        let ids: Vec<u8> = Scheme::ALL.iter().map(|&s| scheme_id(s)).collect();
        assert_eq!(ids, [1, 2, 3, 4]);
        for s in Scheme::ALL {
            assert_eq!(scheme_from_id(scheme_id(s)), Some(s));
        }
        assert_eq!(scheme_from_id(0), None);
        assert_eq!(scheme_from_id(5), None);
        assert_eq!(layout_from_id(1), Some(Layout::Classic));
        assert_eq!(layout_from_id(2), Some(Layout::Partitioned));
        assert_eq!(layout_from_id(3), Some(Layout::Blocked));
        assert_eq!(layout_from_id(4), Some(Layout::SplitBlock));
        assert_eq!(layout_from_id(0), None);
    }

    /// A stream that claims terabytes and delivers a few bytes must fail
    /// after allocating about what it delivered.
    #[test]
    fn lying_header_over_a_short_stream_is_truncated() {
        let h = Header {
            layout: Layout::Classic,
            scheme: Scheme::DoubleHashing,
            hash_family: crate::HashFamily::Xxh3,
            seed: 1,
            num_bits: MAX_BITS,
            num_hashes: 3,
            block_bits: 0,
            insert_calls: 0,
            key_kind: crate::KeyKind::Unrecorded,
        };
        let mut bytes = h.to_bytes().to_vec();
        bytes.extend_from_slice(&[0xff; 1000]);
        let err = BloomFilter::read_from(&bytes[..]).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Format(FormatError::Truncated {
                    field: "payload",
                    got: 1064,
                    ..
                })
            ),
            "{err}"
        );
    }
}
