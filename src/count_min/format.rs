//! The Count-Min sketch's binary format, version 1: how a
//! [`CountMinSketch`] is saved, loaded and pickled, on any platform, by
//! this and every later version.
//!
//! The format is specified byte by byte in `docs/format.md` ("Count-Min
//! sketch format, version 1"); it has the Bloom filter format's framing
//! (`crate::format`: a 64-byte header sealed by its own checksum, a
//! payload of little-endian u64 words, a checksum over everything) with
//! its own magic and fields:
//!
//! ```text
//! offset  size  field
//!      0     8  magic            89 4C 48 43 4D 0D 0A 1A  ("\x89LHCM\r\n\x1a")
//!      8     2  version          1
//!     10     1  scheme           see [`scheme_id`] (1 independent, 2 double)
//!     11     1  hash             1 = XXH3 (seeded XXH3-64 per table for independent, XXH3-128 per copy for double)
//!     12     1  conservative     0 = plain update, 1 = conservative update
//!     13     1  flags            0 (no flags are defined in v1)
//!     14     2  reserved         0
//!     16     4  depth            tables per copy, 1..=MAX_ROWS
//!     20     4  copies           1..=MAX_ROWS; 1 for independent; depth * copies <= MAX_ROWS
//!     24     8  seed
//!     32     8  width            counters per table, 1..=MAX_COUNTERS; double: prime and >= depth
//!     40     8  total            the stream's total ||a||, saturating; no counter exceeds it
//!     48     8  payload_len      8 * width * depth * copies (<= 8 * MAX_COUNTERS)
//!     56     8  header_checksum  XXH3-64 (seed 0) of bytes 0..56
//!     64     P  payload          the counters as P/8 little-endian u64, table by table
//!   64+P     8  checksum         XXH3-64 (seed 0) of bytes 0..64+P
//! ```
//!
//! All integers are little-endian. Counter `x` of table `t` (tables
//! numbered copy by copy: table `j` of copy `c` is `t = c * depth + j`) is
//! payload word `t * width + x`, so the payload is the sketch's counters in
//! memory order and [`CountMinSketch::columns`] gives a key's column of
//! every table in that order. `MAX_ROWS` is [`super::MAX_ROWS`] (1024),
//! `MAX_COUNTERS` is [`super::MAX_COUNTERS`] (2^40).
//!
//! # Validation
//!
//! Nothing in the input is trusted. The header checksum is verified before
//! any field is interpreted. The dimensions are checked by the rules the
//! builder applies (`width`, `depth`, `copies` and their products, with
//! checked arithmetic; a prime width and `depth <= width` for the two-hash
//! scheme, one copy for the classic one), so every file that loads is a
//! sketch the builder can make. [`CountMinSketch::from_bytes`] checks the
//! input's length against the header before allocating;
//! [`CountMinSketch::read_from`] allocates at most
//! [`EAGER_LIMIT`](crate::format::EAGER_LIMIT) bytes up front and grows with
//! the data actually read, so a header promising 2^40 counters over a short
//! stream fails with [`FormatError::Truncated`] after allocating about what was
//! read.
//!
//! **`total` against the counters.** After the checksum, every counter must
//! be at most `total` ([`FormatError::OutOfRange`] `total` otherwise). Every
//! sketch the library makes keeps that: an update adds `count` to `total`
//! and raises a counter by at most `count` (conservative update raises it
//! to at most `estimate + count <= total`), a merge adds both, and
//! saturation keeps the order (`total` saturates no later than any
//! counter). It is what makes `estimate(key) <= total()` hold for a loaded
//! sketch. The stronger equality of a plain sketch (each table's counters
//! sum to `total` while nothing saturated) is not checked: conservative
//! sketches do not have it, and it would bind every later operation on the
//! counters (a decay, a subtraction) to keep sums exact, for no answer that
//! depends on it.

#![forbid(unsafe_code)]

use crate::FormatError;
use std::io::{Read, Write};
use std::path::Path;

use super::builder::check_dimensions;
use super::{CountMinDimensions, CountMinScheme, CountMinSketch};
use crate::Error;
pub use crate::format::frame::{HEADER_LEN, TRAILER_LEN};
use crate::format::frame::{
    check_input_len, check_preamble, le_u64, load_framed, open_sized, read_header, read_payload,
    seal_header, write_framed,
};
use crate::util::bits::AlignedWords;

/// The first 8 bytes of every serialized sketch: as the Bloom filter's
/// magic (a non-ASCII byte, the name, CR LF, Ctrl-Z), with `LHCM`
/// ("lesshash Count-Min") for `LHBF`, so neither loader accepts the other's
/// files.
pub const MAGIC: [u8; 8] = *b"\x89LHCM\r\n\x1a";

/// The format version this library writes (and the newest it reads).
pub const VERSION: u16 = 1;

/// The hash algorithm id of XXH3 (the only one in v1): the classic sketch
/// hashes a key's bytes with seeded XXH3-64 once per table, the two-hash
/// sketch with XXH3-128 once per copy, as [`crate::hash`] specifies.
pub const HASH_XXH3: u8 = 1;

/// The stable id of a scheme in the format (independent of the enum's
/// order; the same numbers as the Bloom filter's `Independent` and
/// `DoubleHashing`).
pub fn scheme_id(scheme: CountMinScheme) -> u8 {
    match scheme {
        CountMinScheme::Independent => 1,
        CountMinScheme::DoubleHashing => 2,
    }
}

/// The scheme of a format id, if it is one.
pub fn scheme_from_id(id: u8) -> Option<CountMinScheme> {
    CountMinScheme::ALL
        .into_iter()
        .find(|&s| scheme_id(s) == id)
}

/// A parsed, validated v1 header.
#[derive(Debug, Clone, Copy)]
struct Header {
    scheme: CountMinScheme,
    conservative: bool,
    seed: u64,
    dims: CountMinDimensions,
    total: u64,
}

impl Header {
    fn of(sketch: &CountMinSketch) -> Self {
        Self {
            scheme: sketch.scheme,
            conservative: sketch.conservative,
            seed: sketch.seed,
            dims: sketch.dimensions(),
            total: sketch.total,
        }
    }

    /// Counters in all tables. The dimensions were validated (at most
    /// `MAX_COUNTERS` counters), so neither product overflows.
    fn counters(&self) -> u64 {
        self.dims.width * u64::from(self.dims.depth) * u64::from(self.dims.copies)
    }

    fn payload_len(&self) -> u64 {
        self.counters() * 8
    }

    fn total_len(&self) -> u64 {
        (HEADER_LEN + TRAILER_LEN) as u64 + self.payload_len()
    }

    fn to_bytes(self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..10].copy_from_slice(&VERSION.to_le_bytes());
        b[10] = scheme_id(self.scheme);
        b[11] = HASH_XXH3;
        b[12] = u8::from(self.conservative);
        // 13: flags, 14..16: reserved; zero.
        b[16..20].copy_from_slice(&self.dims.depth.to_le_bytes());
        b[20..24].copy_from_slice(&self.dims.copies.to_le_bytes());
        b[24..32].copy_from_slice(&self.seed.to_le_bytes());
        b[32..40].copy_from_slice(&self.dims.width.to_le_bytes());
        b[40..48].copy_from_slice(&self.total.to_le_bytes());
        b[48..56].copy_from_slice(&self.payload_len().to_le_bytes());
        seal_header(&mut b);
        b
    }

    /// Parses and validates the header at the start of `bytes` (which may
    /// hold more than the header), in the order of `docs/format.md`.
    fn parse(bytes: &[u8]) -> Result<Self, Error> {
        let b = check_preamble(bytes, &MAGIC, VERSION)?;
        let scheme = scheme_from_id(b[10]).ok_or(Error::Format(FormatError::UnknownId {
            field: "scheme",
            id: b[10].into(),
        }))?;
        if b[11] != HASH_XXH3 {
            return Err(Error::Format(FormatError::UnknownId {
                field: "hash",
                id: b[11].into(),
            }));
        }
        let conservative = match b[12] {
            0 => false,
            1 => true,
            x => {
                return Err(Error::Format(FormatError::OutOfRange {
                    field: "conservative",
                    reason: format!("must be 0 (plain) or 1 (conservative update), got {x}"),
                }));
            }
        };
        if b[13] != 0 {
            return Err(Error::Format(FormatError::NonZeroPadding {
                field: "flags",
            }));
        }
        if b[14..16] != [0, 0] {
            return Err(Error::Format(FormatError::NonZeroPadding {
                field: "reserved",
            }));
        }
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let dims = CountMinDimensions {
            width: le_u64(&b[32..40]),
            depth: u32_at(16),
            copies: u32_at(20),
        };
        check_dimensions(scheme, dims)
            .map_err(|(field, reason)| Error::Format(FormatError::OutOfRange { field, reason }))?;
        let header = Self {
            scheme,
            conservative,
            seed: le_u64(&b[24..32]),
            dims,
            total: le_u64(&b[40..48]),
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

    /// The sketch the header describes over `counters` (at least
    /// `counters()` words, the rest zero).
    fn sketch(&self, counters: AlignedWords) -> CountMinSketch {
        CountMinSketch {
            scheme: self.scheme,
            seed: self.seed,
            width: self.dims.width,
            depth: self.dims.depth,
            copies: self.dims.copies,
            conservative: self.conservative,
            total: self.total,
            // At most MAX_COUNTERS, and the storage of that many exists.
            len: self.counters() as usize,
            counters,
        }
    }

    /// [`FormatError::OutOfRange`] (`total`) for the first counter above the
    /// total (`above`: its index), see the module docs.
    fn check_total(&self, sketch: &CountMinSketch, above: Option<usize>) -> Result<(), Error> {
        let Some(i) = above else { return Ok(()) };
        let width = self.dims.width as usize;
        Err(Error::Format(FormatError::OutOfRange {
            field: "total",
            reason: format!(
                "{} is below counter {} of table {} ({}): no counter can exceed the stream's total",
                self.total,
                i % width,
                i / width,
                sketch.slots()[i],
            ),
        }))
    }

    /// Reads the payload and the checksum after this header.
    /// `trusted_len`: the input is known to hold the whole payload (a file
    /// whose length was checked), so it is allocated at once.
    fn read_body<R: Read>(
        &self,
        r: R,
        header_bytes: &[u8; HEADER_LEN],
        trusted_len: bool,
    ) -> Result<CountMinSketch, Error> {
        let blocks = read_payload(r, header_bytes, self.payload_len(), trusted_len, "width")?;
        let sketch = self.sketch(AlignedWords::from_blocks(blocks));
        self.check_total(&sketch, first_above(sketch.slots(), self.total))?;
        Ok(sketch)
    }
}

/// The index of the first counter above `total`.
fn first_above(counters: &[u64], total: u64) -> Option<usize> {
    counters.iter().position(|&c| c > total)
}

impl CountMinSketch {
    /// The length of [`to_bytes`](Self::to_bytes)' output:
    /// `72 + 8 * width * depth * copies`.
    pub fn serialized_len(&self) -> u64 {
        Header::of(self).total_len()
    }

    /// The sketch in the v1 binary format (module docs, `docs/format.md`).
    ///
    /// ```
    /// use lesshash::CountMinSketch;
    ///
    /// let mut sketch = CountMinSketch::with_error(0.01, 0.01)?;
    /// sketch.add("apple", 3);
    /// let bytes = sketch.to_bytes();
    /// assert_eq!(bytes.len() as u64, sketch.serialized_len());
    /// let loaded = CountMinSketch::from_bytes(&bytes)?;
    /// assert_eq!(loaded, sketch);
    /// assert_eq!(loaded.estimate("apple"), sketch.estimate("apple"));
    /// # Ok::<(), lesshash::Error>(())
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.serialized_len() as usize);
        self.write_to(&mut out)
            .expect("writing to a Vec cannot fail");
        out
    }

    /// Writes the sketch in the v1 binary format, streaming: the counters
    /// are written straight from the sketch (big-endian platforms convert
    /// through a small buffer), never copied whole.
    ///
    /// # Errors
    /// [`Error::Io`] if the writer fails.
    pub fn write_to<W: Write>(&self, w: W) -> Result<(), Error> {
        write_framed(w, &Header::of(self).to_bytes(), self.slots())
    }

    /// Loads a sketch from exactly one serialized sketch (no bytes before
    /// or after). The header and the length are verified before allocating
    /// (so the allocation never exceeds the input's size), the checksum
    /// during the copy; a mismatch returns an error, never the sketch.
    ///
    /// # Errors
    /// In the order checked: [`FormatError::Truncated`] (`header`),
    /// [`FormatError::BadMagic`], [`FormatError::UnsupportedVersion`],
    /// [`FormatError::ChecksumMismatch`] (`header_checksum`), [`FormatError::UnknownId`]
    /// (`scheme`, `hash`), [`FormatError::OutOfRange`] (`conservative`),
    /// [`FormatError::NonZeroPadding`] (`flags`, `reserved`),
    /// [`FormatError::OutOfRange`] (`width`, `depth`, `copies`),
    /// [`FormatError::SizeMismatch`] (`payload_len`), [`FormatError::Truncated`]
    /// (`payload`, `checksum`), [`FormatError::SizeMismatch`] (`input length`:
    /// bytes after the sketch), [`Error::Allocation`] (`width`),
    /// [`FormatError::ChecksumMismatch`] (`checksum`), [`FormatError::OutOfRange`]
    /// (`total`: a counter above it).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let header = Header::parse(bytes)?;
        check_input_len(bytes.len() as u64, header.payload_len())?;
        // `counters() * 64` bits: at most 2^46, no overflow.
        let storage = AlignedWords::zeroed(header.counters() * 64, "width")?;
        let mut sketch = header.sketch(storage);
        let total = header.total;
        let mut above = None;
        // The counters are compared with the total during the copy, while
        // each chunk is in cache, as the checksum is computed.
        load_framed(bytes, sketch.slots_mut(), |first, chunk| {
            if above.is_none() {
                above = first_above(chunk, total).map(|i| first + i);
            }
        })?;
        header.check_total(&sketch, above)?;
        Ok(sketch)
    }

    /// Reads one serialized sketch from a stream, leaving the stream just
    /// after it (so sketches can be concatenated). Payloads above
    /// 64 MiB grow as bytes arrive, so
    /// a lying header cannot make this allocate much more than what was
    /// read.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) (bytes after the sketch are not
    /// read, so not an error), plus [`Error::Io`].
    pub fn read_from<R: Read>(mut r: R) -> Result<Self, Error> {
        let header_bytes = read_header(&mut r, &MAGIC)?;
        let header = Header::parse(&header_bytes)?;
        header.read_body(r, &header_bytes, false)
    }

    /// Writes the sketch to `path` as
    /// [`BloomFilter::write_file`](crate::BloomFilter::write_file) writes a
    /// filter: a regular file (or a path where nothing is yet) atomically,
    /// through a synced temporary file in the same directory renamed over
    /// `path` (removed on error); a symbolic link's target is replaced; a
    /// FIFO or a character device is written straight through.
    ///
    /// # Errors
    /// [`Error::Io`] naming the step that failed;
    /// [`Error::UnusablePath`] if `path` has no file name or is
    /// a directory, a socket or a block device.
    pub fn write_file(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        crate::format::frame::write_file(path.as_ref(), "writing the sketch", |w| self.write_to(w))
    }

    /// Loads a sketch from a file written by [`write_file`](Self::write_file)
    /// (or any file holding exactly one serialized sketch). A regular
    /// file's length is checked against the header before the counters are
    /// allocated; a pipe, a FIFO or a device is read as a stream and must
    /// end after the sketch.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), plus [`Error::Io`].
    pub fn read_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let (mut file, len) = open_sized(path.as_ref())?;
        let header_bytes = read_header(&mut file, &MAGIC)?;
        let header = Header::parse(&header_bytes)?;
        let Some(len) = len else {
            // A stream: read with the allocation bounded by what arrives,
            // then it must end.
            let sketch = header.read_body(&mut file, &header_bytes, false)?;
            crate::format::frame::check_stream_end(file, header.total_len())?;
            return Ok(sketch);
        };
        check_input_len(len, header.payload_len())?;
        header.read_body(file, &header_bytes, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::count_min::{MAX_COUNTERS, MAX_ROWS};

    #[test]
    fn scheme_ids_are_stable_and_distinct() {
        let ids: Vec<u8> = CountMinScheme::ALL.iter().map(|&s| scheme_id(s)).collect();
        assert_eq!(ids, [1, 2]);
        for s in CountMinScheme::ALL {
            assert_eq!(scheme_from_id(scheme_id(s)), Some(s));
        }
        assert_eq!(scheme_from_id(0), None);
        assert_eq!(scheme_from_id(3), None);
    }

    #[test]
    fn header_round_trips_through_its_bytes() {
        let h = Header {
            scheme: CountMinScheme::DoubleHashing,
            conservative: true,
            seed: 0x0102_0304_0506_0708,
            dims: CountMinDimensions {
                width: 1_048_573, // prime
                depth: 4,
                copies: 3,
            },
            total: 99,
        };
        let b = h.to_bytes();
        let p = Header::parse(&b).unwrap();
        assert_eq!(
            (p.scheme, p.conservative, p.seed, p.dims, p.total),
            (h.scheme, h.conservative, h.seed, h.dims, h.total)
        );
        assert_eq!(p.payload_len(), 1_048_573 * 12 * 8);
    }

    /// The largest header the format allows parses; one more counter does
    /// not.
    #[test]
    fn the_limits_are_the_builders() {
        let h = Header {
            scheme: CountMinScheme::Independent,
            conservative: false,
            seed: 0,
            dims: CountMinDimensions {
                width: MAX_COUNTERS / u64::from(MAX_ROWS),
                depth: MAX_ROWS,
                copies: 1,
            },
            total: 0,
        };
        assert!(Header::parse(&h.to_bytes()).is_ok());
        let mut wider = h;
        wider.dims.width += 1;
        let err = Header::parse(&wider.to_bytes()).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Format(FormatError::OutOfRange { field: "width", .. })
            ),
            "{err}"
        );
    }
}
