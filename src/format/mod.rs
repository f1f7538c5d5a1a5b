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
//!     12     1  hash             1 = XXH3 (XXH3-128 for two-hash schemes, seeded XXH3-64 for independent)
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
//! [`EAGER_LIMIT`] bytes up front and grows with the data actually read, so a
//! header promising terabytes over a short stream fails with
//! [`Error::Truncated`] after allocating about what was read.

#![forbid(unsafe_code)]

mod header;

use header::le_u64;
pub use header::{Header, layout_from_id, scheme_from_id, scheme_id};

use std::io::{ErrorKind, Read, Write};
use std::path::Path;

use crate::output_file::{create_temp_beside, is_stream, parent_dir, resolve_links};

use bytemuck::Zeroable;
use xxhash_rust::xxh3::{Xxh3, xxh3_64};

use crate::Error;
use crate::bits::{AlignedWords, Block};
use crate::filter::BloomFilter;

/// The first 8 bytes of every serialized filter: a non-ASCII byte (catches
/// 7-bit transfers), `LHBF`, CR LF (catches newline translation) and
/// Ctrl-Z, as PNG does.
pub const MAGIC: [u8; 8] = *b"\x89LHBF\r\n\x1a";

/// The format version this library writes (and the newest it reads).
pub const VERSION: u16 = 1;

/// The header's length in bytes.
pub const HEADER_LEN: usize = 64;

/// The trailer's length in bytes (the checksum).
pub const TRAILER_LEN: usize = 8;

/// The hash algorithm id of XXH3 (the only one in v1): keys are hashed with
/// XXH3-128 (two-hash schemes) or seeded XXH3-64 (`Independent`), as
/// [`crate::hash`] specifies.
pub const HASH_XXH3: u8 = 1;

/// [`BloomFilter::read_from`] allocates payloads up to this size at once and
/// grows larger ones as bytes arrive (a stream cannot prove its length).
pub const EAGER_LIMIT: usize = 64 << 20;

/// Bytes hashed and copied per step: small enough that a chunk is still in
/// cache when the checksum reads it after the copy.
const CHUNK: usize = 256 << 10;

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
        return Err(Error::NonZeroPadding {
            field: "payload padding bits",
        });
    }
    Ok(())
}

/// Copies little-endian payload bytes into native words.
fn load_le(words: &mut [u64], payload: &[u8]) {
    if cfg!(target_endian = "little") {
        bytemuck::cast_slice_mut::<u64, u8>(words).copy_from_slice(payload);
    } else {
        load_le_portable(words, payload);
    }
}

/// [`load_le`] word by word: the big-endian path, tested on every platform.
fn load_le_portable(words: &mut [u64], payload: &[u8]) {
    for (w, b) in words.iter_mut().zip(payload.chunks_exact(8)) {
        *w = le_u64(b);
    }
}

/// Writes native words as little-endian bytes into `out`.
fn store_le_portable(words: &[u64], out: &mut [u8]) {
    for (w, b) in words.iter().zip(out.chunks_exact_mut(8)) {
        b.copy_from_slice(&w.to_le_bytes());
    }
}

fn io_err(context: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { context, source }
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_full<R: Read>(r: &mut R, buf: &mut [u8], context: &'static str) -> Result<usize, Error> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(got) => n += got,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(context)(e)),
        }
    }
    Ok(n)
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
    pub fn write_to<W: Write>(&self, mut w: W) -> Result<(), Error> {
        let header = Header::of(self).to_bytes();
        let mut hasher = Xxh3::new();
        hasher.update(&header);
        w.write_all(&header).map_err(io_err("writing the header"))?;
        let words = &self.words()[..self.num_bits().div_ceil(64) as usize];
        let mut buf = Vec::new();
        for chunk in words.chunks(CHUNK / 8) {
            let bytes: &[u8] = if cfg!(target_endian = "little") {
                bytemuck::cast_slice(chunk)
            } else {
                buf.resize(chunk.len() * 8, 0);
                store_le_portable(chunk, &mut buf);
                &buf
            };
            hasher.update(bytes);
            w.write_all(bytes).map_err(io_err("writing the payload"))?;
        }
        w.write_all(&hasher.digest().to_le_bytes())
            .map_err(io_err("writing the checksum"))?;
        Ok(())
    }

    /// Loads a filter from exactly one serialized filter (no bytes before
    /// or after). The header and the length are verified before allocating
    /// (so the allocation never exceeds the input's size), the checksum
    /// during the copy; a mismatch returns an error, never the filter.
    ///
    /// # Errors
    /// Any of the format errors (see [`Header::parse`]), plus
    /// [`Error::Truncated`] (`payload`, `checksum`), [`Error::SizeMismatch`]
    /// (`input length`: bytes after the filter), [`Error::ChecksumMismatch`]
    /// (`checksum`), [`Error::NonZeroPadding`] (`payload padding bits`).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        // The allocation is bounded by the input's length (checked here), so
        // the checksum can be verified during the copy: each chunk is hashed
        // while it is still in cache, one pass over memory instead of two.
        let (header, payload) = validate(bytes, false)?;
        let mut filter = BloomFilter::from_geometry(header.geometry())?;
        let mut hasher = Xxh3::new();
        hasher.update(&bytes[..HEADER_LEN]);
        let words = &mut filter.words_mut()[..payload.len() / 8];
        for (dst, src) in words.chunks_mut(CHUNK / 8).zip(payload.chunks(CHUNK)) {
            load_le(dst, src);
            hasher.update(src);
        }
        check_checksum(
            le_u64(&bytes[HEADER_LEN + payload.len()..]),
            hasher.digest(),
        )?;
        filter.set_insert_calls(header.insert_calls);
        Ok(filter)
    }

    /// Reads one serialized filter from a stream, leaving the stream just
    /// after it (so filters can be concatenated). Reads in chunks directly
    /// into the filter's bits; payloads above [`EAGER_LIMIT`] grow as bytes
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
        let (header, parsed) = read_header(&mut r)?;
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
    /// [`Error::InvalidParameter`] (`path`) if `path` has no file name or is
    /// a directory, a socket or a block device.
    pub fn write_file(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let write = |file: &mut std::fs::File| {
            let mut w = std::io::BufWriter::new(file);
            self.write_to(&mut w)?;
            w.flush().map_err(io_err("writing the filter"))
        };
        let target = resolve_links(path.as_ref()).map_err(io_err("following the symbolic link"))?;
        match std::fs::metadata(&target) {
            Ok(m) if m.is_file() => write_file_atomic(&target, write),
            Ok(m) if is_stream(&m.file_type()) => {
                let mut file = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&target)
                    .map_err(io_err("opening the output"))?;
                write(&mut file)
            }
            Ok(_) => Err(Error::invalid(
                "path",
                format!(
                    "{} is not a regular file, a FIFO or a character device",
                    target.display()
                ),
            )),
            Err(e) if e.kind() == ErrorKind::NotFound => write_file_atomic(&target, write),
            Err(e) => Err(io_err("reading the output's metadata")(e)),
        }
    }

    /// Loads a filter from a file written by [`write_file`](Self::write_file)
    /// (or any file holding exactly one serialized filter). The file's
    /// length is checked against the header before the bits are allocated.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), plus [`Error::Io`].
    pub fn read_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let mut file = std::fs::File::open(path).map_err(io_err("opening the file"))?;
        let len = file
            .metadata()
            .map_err(io_err("reading the file's metadata"))?
            .len();
        let (header, parsed) = read_header(&mut file)?;
        parsed.check_len(len)?;
        read_body(file, &parsed, &header, true)
    }
}

/// [`Error::ChecksumMismatch`] (`checksum`) unless the stored trailer
/// equals the checksum computed over the bytes before it.
fn check_checksum(stored: u64, computed: u64) -> Result<(), Error> {
    if stored == computed {
        Ok(())
    } else {
        Err(Error::ChecksumMismatch {
            field: "checksum",
            stored,
            computed,
        })
    }
}

/// Reads and parses the 64-byte header at the start of a stream:
/// [`Error::Truncated`] (`header`) if the stream ends first.
fn read_header<R: Read>(r: &mut R) -> Result<([u8; HEADER_LEN], Header), Error> {
    let mut header = [0u8; HEADER_LEN];
    let got = read_full(r, &mut header, "reading the header")?;
    if got < HEADER_LEN {
        return Err(Error::Truncated {
            field: "header",
            needed: HEADER_LEN as u64,
            got: got as u64,
        });
    }
    let parsed = Header::parse(&header)?;
    Ok((header, parsed))
}

/// Reads the payload and the checksum after a parsed header. `trusted_len`:
/// the input is known to hold the whole payload (a file whose length was
/// checked), so the bits are allocated at once whatever their size.
fn read_body<R: Read>(
    mut r: R,
    header: &Header,
    header_bytes: &[u8; HEADER_LEN],
    trusted_len: bool,
) -> Result<BloomFilter, Error> {
    let geometry = header.geometry();
    let too_big = || Error::Allocation {
        name: "m",
        bytes: u128::from(header.payload_len()),
    };
    let payload_len = usize::try_from(header.payload_len()).map_err(|_| too_big())?;
    // m <= MAX_BITS, so this neither overflows nor exceeds usize once
    // payload_len fits.
    let total_blocks = header.num_bits.div_ceil(Block::BITS) as usize;
    let mut blocks: Vec<Block> = if trusted_len || payload_len <= EAGER_LIMIT {
        // alloc_zeroed: pages are mapped as the read fills them.
        AlignedWords::zeroed(header.num_bits, "m")?.into_blocks()
    } else {
        Vec::new()
    };
    let mut hasher = Xxh3::new();
    hasher.update(header_bytes);
    let mut filled = 0usize;
    while filled < payload_len {
        if filled == blocks.len() * 64 {
            // Grow geometrically, never past what the header promises.
            let target = total_blocks.min((blocks.len() * 2).max(EAGER_LIMIT / 64));
            blocks
                .try_reserve_exact(target - blocks.len())
                .map_err(|_| too_big())?;
            blocks.resize(target, Block::zeroed());
        }
        let end = (blocks.len() * 64).min(payload_len).min(filled + CHUNK);
        let buf = &mut bytemuck::cast_slice_mut::<Block, u8>(&mut blocks)[filled..end];
        let n = read_full(&mut r, buf, "reading the payload")?;
        hasher.update(&buf[..n]);
        filled += n;
        if n < buf.len() {
            return Err(Error::Truncated {
                field: "payload",
                needed: (HEADER_LEN + payload_len) as u64,
                got: (HEADER_LEN + filled) as u64,
            });
        }
    }
    let mut trailer = [0u8; TRAILER_LEN];
    let got = read_full(&mut r, &mut trailer, "reading the checksum")?;
    if got < TRAILER_LEN {
        return Err(Error::Truncated {
            field: "checksum",
            needed: header.total_len(),
            got: (HEADER_LEN + payload_len + got) as u64,
        });
    }
    check_checksum(u64::from_le_bytes(trailer), hasher.digest())?;
    let words: &mut [u64] = bytemuck::cast_slice_mut(&mut blocks);
    if cfg!(target_endian = "big") {
        for w in words.iter_mut() {
            *w = u64::from_le(*w);
        }
    }
    check_padding(header, words[payload_len / 8 - 1])?;
    Ok(BloomFilter::from_parts(
        geometry,
        AlignedWords::from_blocks(blocks),
        header.insert_calls,
    ))
}

/// Writes a file atomically: `write` fills a new temporary file in the
/// target's directory, which is synced and renamed over the target.
///
/// Hand-written rather than `tempfile::NamedTempFile::persist`: it is 30
/// lines, and a library should not pull a dependency tree (rustix,
/// getrandom) into every user's build for one helper.
fn write_file_atomic(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> Result<(), Error>,
) -> Result<(), Error> {
    let name = path
        .file_name()
        .ok_or_else(|| Error::invalid("path", format!("{} has no file name", path.display())))?;
    let dir = parent_dir(path);
    let (tmp, mut file) =
        create_temp_beside(path, name).map_err(io_err("creating the temporary file"))?;
    let result = (|| {
        write(&mut file)?;
        file.sync_all()
            .map_err(io_err("syncing the temporary file"))?;
        drop(file);
        std::fs::rename(&tmp, path).map_err(io_err("renaming the temporary file"))?;
        // The rename is durable once the directory entry is.
        #[cfg(unix)]
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io_err("syncing the directory"))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Layout;
    use crate::rates::MAX_BITS;
    use crate::scheme::Scheme;

    #[test]
    fn portable_endian_paths_equal_the_native_ones() {
        let words: Vec<u64> = (0..100u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let mut le = vec![0u8; 800];
        store_le_portable(&words, &mut le);
        // Byte-level expectation: word 1 = 0x9e3779b97f4a7c15, low byte first.
        assert_eq!(le[8..16], [0x15, 0x7c, 0x4a, 0x7f, 0xb9, 0x79, 0x37, 0x9e]);
        let mut back = vec![0u64; 100];
        load_le_portable(&mut back, &le);
        assert_eq!(back, words);
        let mut native = vec![0u64; 100];
        load_le(&mut native, &le);
        assert_eq!(native, words);
    }

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
            seed: 1,
            num_bits: MAX_BITS,
            num_hashes: 3,
            block_bits: 0,
            insert_calls: 0,
        };
        let mut bytes = h.to_bytes().to_vec();
        bytes.extend_from_slice(&[0xff; 1000]);
        let err = BloomFilter::read_from(&bytes[..]).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Truncated {
                    field: "payload",
                    got: 1064,
                    ..
                }
            ),
            "{err}"
        );
    }
}
