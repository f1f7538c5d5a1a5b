//! The framing and the I/O that every lesshash binary format shares (the
//! Bloom filter's, `crate::format`, and the Count-Min sketch's,
//! `crate::count_min::format`), so that each format only says what its
//! header holds:
//!
//! * a 64-byte header: 8 bytes of magic, a little-endian u16 version, the
//!   format's fields, and at bytes 56..64 the XXH3-64 (seed 0) of bytes
//!   0..56, verified before any field is interpreted ([`check_preamble`]);
//! * a payload of little-endian u64 words ([`write_framed`],
//!   [`load_framed`], [`read_payload`]);
//! * an 8-byte trailer, the XXH3-64 (seed 0) of everything before it.
//!
//! Also the length checks of whole inputs ([`check_input_len`]) and
//! `write_file`'s choice between an atomic replace and a write-through
//! ([`write_file`]), on top of the plain-`std::io` rules of
//! [`crate::format::output_file`].

#![forbid(unsafe_code)]

use crate::FormatError;
use std::fs::File;
use std::io::{BufWriter, ErrorKind, Read, Write};
use std::path::Path;

use bytemuck::Zeroable;
use xxhash_rust::xxh3::{Xxh3, xxh3_64};

use crate::Error;
use crate::format::output_file::{create_temp_beside, is_stream, parent_dir, resolve_links};
use crate::util::bits::{AlignedWords, Block};

/// The header's length in bytes, in every lesshash format: one cache line,
/// so that the payload of a 64-byte-aligned buffer (a memory-mapped file)
/// is itself aligned.
pub const HEADER_LEN: usize = 64;

/// The trailer's length in bytes (the checksum).
pub const TRAILER_LEN: usize = 8;

/// Where the header checksum starts: it covers the bytes before it.
const HEADER_CHECKSUM_AT: usize = HEADER_LEN - 8;

/// The stream loaders (`read_from`) allocate payloads up to this size at
/// once and grow larger ones as bytes arrive (a stream cannot prove its
/// length).
pub const EAGER_LIMIT: usize = 64 << 20;

/// Bytes hashed and copied per step: small enough that a chunk is still in
/// cache when the checksum reads it after the copy.
const CHUNK: usize = 256 << 10;

/// A little-endian u64 from 8 bytes.
pub(crate) fn le_u64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(b);
    u64::from_le_bytes(a)
}

/// Copies little-endian payload bytes into native words.
pub(crate) fn load_le(words: &mut [u64], payload: &[u8]) {
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

pub(crate) fn io_err(context: &'static str) -> impl FnOnce(std::io::Error) -> Error {
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

/// [`FormatError::ChecksumMismatch`] (`checksum`) unless the stored trailer
/// equals the checksum computed over the bytes before it.
pub(crate) fn check_checksum(stored: u64, computed: u64) -> Result<(), Error> {
    if stored == computed {
        Ok(())
    } else {
        Err(Error::Format(FormatError::ChecksumMismatch {
            field: "checksum",
            stored,
            computed,
        }))
    }
}

/// The checks every header starts with, in this order: at least
/// [`HEADER_LEN`] bytes ([`FormatError::Truncated`] `header`, unless the bytes
/// there already differ from the magic: [`FormatError::BadMagic`], since a short
/// input that is not a lesshash file is better called that), the `magic`
/// ([`FormatError::BadMagic`]), the `version` ([`FormatError::UnsupportedVersion`]) and
/// the `header_checksum` ([`FormatError::ChecksumMismatch`]). Returns the header
/// bytes, whose fields are then the writer's (or a deliberate forgery's).
pub(crate) fn check_preamble<'a>(
    bytes: &'a [u8],
    magic: &[u8; 8],
    version: u16,
) -> Result<&'a [u8; HEADER_LEN], Error> {
    check_magic_prefix(bytes, magic)?;
    let b: &[u8; HEADER_LEN] = bytes
        .get(..HEADER_LEN)
        .and_then(|h| h.try_into().ok())
        .ok_or(Error::Format(FormatError::Truncated {
            field: "header",
            needed: HEADER_LEN as u64,
            got: bytes.len() as u64,
        }))?;
    let found = u16::from_le_bytes([b[8], b[9]]);
    if found != version {
        return Err(Error::Format(FormatError::UnsupportedVersion {
            found,
            supported: version,
        }));
    }
    let stored = le_u64(&b[HEADER_CHECKSUM_AT..]);
    let computed = xxh3_64(&b[..HEADER_CHECKSUM_AT]);
    if stored != computed {
        return Err(Error::Format(FormatError::ChecksumMismatch {
            field: "header_checksum",
            stored,
            computed,
        }));
    }
    Ok(b)
}

/// [`FormatError::BadMagic`] if the first bytes of `bytes` (up to 8; fewer for a
/// short input) are not `magic`'s.
fn check_magic_prefix(bytes: &[u8], magic: &[u8; 8]) -> Result<(), Error> {
    let n = bytes.len().min(8);
    if bytes[..n] == magic[..n] {
        Ok(())
    } else {
        Err(Error::Format(FormatError::BadMagic {
            found: bytes[..n].iter().map(|x| format!("{x:02x}")).collect(),
            looks_like: crate::format::looks::looks_like(&bytes[..bytes.len().min(64)]),
        }))
    }
}

/// Writes the header checksum into bytes 56..64 of a header whose other
/// fields are filled in.
pub(crate) fn seal_header(b: &mut [u8; HEADER_LEN]) {
    let checksum = xxh3_64(&b[..HEADER_CHECKSUM_AT]);
    b[HEADER_CHECKSUM_AT..].copy_from_slice(&checksum.to_le_bytes());
}

/// Checks that an input of `len` bytes is exactly one item whose payload
/// is `payload_len` bytes: [`FormatError::Truncated`] naming the part cut short
/// (`payload` or `checksum`), [`FormatError::SizeMismatch`] (`input length`) for
/// extra bytes. `payload_len` comes from a validated header (at most
/// 2^43), so the sums cannot overflow.
pub(crate) fn check_input_len(len: u64, payload_len: u64) -> Result<(), Error> {
    let payload_end = HEADER_LEN as u64 + payload_len;
    let total = payload_end + TRAILER_LEN as u64;
    if len < total {
        let (field, needed) = if len < payload_end {
            ("payload", payload_end)
        } else {
            ("checksum", total)
        };
        return Err(Error::Format(FormatError::Truncated {
            field,
            needed,
            got: len,
        }));
    }
    if len > total {
        return Err(Error::Format(FormatError::SizeMismatch {
            field: "input length",
            expected: total,
            found: len,
        }));
    }
    Ok(())
}

/// Writes `header`, `words` as the little-endian payload and the trailing
/// checksum, streaming: the words are written straight from memory
/// (big-endian platforms convert through a small buffer), never copied
/// whole.
pub(crate) fn write_framed<W: Write>(
    mut w: W,
    header: &[u8; HEADER_LEN],
    words: &[u64],
) -> Result<(), Error> {
    let mut hasher = Xxh3::new();
    hasher.update(header);
    w.write_all(header).map_err(io_err("writing the header"))?;
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

/// Loads the payload of `bytes`, one whole item whose length was checked
/// ([`check_input_len`]), into `words` (exactly the payload's length) and
/// verifies the trailing checksum. The checksum is computed during the
/// copy, chunk by chunk while each is still in cache: one pass over memory
/// instead of two. `visit(first, chunk)` sees each chunk of loaded words
/// (`first`: the index of its first word) in the same pass.
pub(crate) fn load_framed(
    bytes: &[u8],
    words: &mut [u64],
    mut visit: impl FnMut(usize, &[u64]),
) -> Result<(), Error> {
    let payload_end = HEADER_LEN + words.len() * 8;
    let payload = &bytes[HEADER_LEN..payload_end];
    let mut hasher = Xxh3::new();
    hasher.update(&bytes[..HEADER_LEN]);
    let mut first = 0;
    for (dst, src) in words.chunks_mut(CHUNK / 8).zip(payload.chunks(CHUNK)) {
        load_le(dst, src);
        hasher.update(src);
        visit(first, dst);
        first += dst.len();
    }
    check_checksum(le_u64(&bytes[payload_end..]), hasher.digest())
}

/// Reads the header at the start of a stream: [`FormatError::Truncated`]
/// (`header`) if the stream ends first, or [`FormatError::BadMagic`] if what
/// came does not start as `magic` does. The caller parses it.
pub(crate) fn read_header<R: Read>(r: &mut R, magic: &[u8; 8]) -> Result<[u8; HEADER_LEN], Error> {
    let mut header = [0u8; HEADER_LEN];
    let got = read_full(r, &mut header, "reading the header")?;
    if got < HEADER_LEN {
        check_magic_prefix(&header[..got], magic)?;
        return Err(Error::Format(FormatError::Truncated {
            field: "header",
            needed: HEADER_LEN as u64,
            got: got as u64,
        }));
    }
    Ok(header)
}

/// Reads the payload and the trailer that follow a parsed header and
/// returns the payload as native words in 64-byte blocks (the tail of the
/// last block zero). `payload_len` comes from the validated header;
/// `trusted_len`: the input is known to hold it all (a file whose length
/// was checked), so it is allocated at once whatever its size. Otherwise
/// payloads above [`EAGER_LIMIT`] grow as bytes arrive, so a header that
/// promises terabytes over a short stream fails with [`FormatError::Truncated`]
/// after allocating about what was read. `name` is the parameter an
/// [`Error::Allocation`] reports. The stream is left just after the
/// trailer.
pub(crate) fn read_payload<R: Read>(
    mut r: R,
    header: &[u8; HEADER_LEN],
    payload_len: u64,
    trusted_len: bool,
    name: &'static str,
) -> Result<Vec<Block>, Error> {
    let too_big = || Error::Allocation {
        name,
        bytes: u128::from(payload_len),
    };
    let len = usize::try_from(payload_len).map_err(|_| too_big())?;
    let total_blocks = len.div_ceil(64);
    let mut blocks: Vec<Block> = if trusted_len || len <= EAGER_LIMIT {
        // alloc_zeroed: pages are mapped as the read fills them.
        AlignedWords::zeroed(payload_len.saturating_mul(8), name)?.into_blocks()
    } else {
        Vec::new()
    };
    let mut hasher = Xxh3::new();
    hasher.update(header);
    let mut filled = 0usize;
    while filled < len {
        if filled == blocks.len() * 64 {
            // Grow geometrically, never past what the header promises.
            let target = total_blocks.min((blocks.len() * 2).max(EAGER_LIMIT / 64));
            blocks
                .try_reserve_exact(target - blocks.len())
                .map_err(|_| too_big())?;
            blocks.resize(target, Block::zeroed());
        }
        let end = (blocks.len() * 64).min(len).min(filled + CHUNK);
        let buf = &mut bytemuck::cast_slice_mut::<Block, u8>(&mut blocks)[filled..end];
        let n = read_full(&mut r, buf, "reading the payload")?;
        hasher.update(&buf[..n]);
        filled += n;
        if n < buf.len() {
            return Err(Error::Format(FormatError::Truncated {
                field: "payload",
                needed: (HEADER_LEN + len) as u64,
                got: (HEADER_LEN + filled) as u64,
            }));
        }
    }
    let mut trailer = [0u8; TRAILER_LEN];
    let got = read_full(&mut r, &mut trailer, "reading the checksum")?;
    if got < TRAILER_LEN {
        return Err(Error::Format(FormatError::Truncated {
            field: "checksum",
            needed: (HEADER_LEN + len + TRAILER_LEN) as u64,
            got: (HEADER_LEN + len + got) as u64,
        }));
    }
    check_checksum(u64::from_le_bytes(trailer), hasher.digest())?;
    if cfg!(target_endian = "big") {
        for w in bytemuck::cast_slice_mut::<Block, u64>(&mut blocks) {
            *w = u64::from_le(*w);
        }
    }
    Ok(blocks)
}

/// Reads one whole serialized item whose header (already read and parsed)
/// promises `total` bytes, into 8-byte-aligned memory: the header, then
/// whatever follows, up to `total + 1` bytes (one byte past the item is
/// enough to tell a long input), so the caller's `validate` reports a
/// short or long input as it would for the same bytes in memory. Memory is
/// bounded by what arrives: `known_len` (a file whose length matches the
/// header's total) is allocated at once, anything else grows from
/// [`EAGER_LIMIT`] as bytes arrive. Returns the words and the byte count.
#[cfg(feature = "mmap")]
pub(crate) fn read_item_aligned<R: Read>(
    mut r: R,
    header: &[u8; HEADER_LEN],
    total: u64,
    known_len: bool,
) -> Result<(Vec<u64>, usize), Error> {
    let too_big = || Error::Allocation {
        name: "file",
        bytes: u128::from(total),
    };
    let limit = usize::try_from(total.saturating_add(1)).map_err(|_| too_big())?;
    let all_words = limit.div_ceil(8);
    let mut words: Vec<u64> = Vec::new();
    let grow = |words: &mut Vec<u64>, target: usize| -> Result<(), Error> {
        words
            .try_reserve_exact(target - words.len())
            .map_err(|_| too_big())?;
        words.resize(target, 0);
        Ok(())
    };
    let first = if known_len || limit <= EAGER_LIMIT {
        all_words
    } else {
        EAGER_LIMIT / 8
    };
    grow(&mut words, first.max(HEADER_LEN / 8))?;
    bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..HEADER_LEN].copy_from_slice(header);
    let mut filled = HEADER_LEN;
    while filled < limit {
        if filled == words.len() * 8 {
            let target = all_words.min(words.len() * 2);
            grow(&mut words, target)?;
        }
        let end = (words.len() * 8).min(limit).min(filled + CHUNK);
        let buf = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut words)[filled..end];
        let n = read_full(&mut r, buf, "reading the file")?;
        filled += n;
        if n < buf.len() {
            break;
        }
    }
    Ok((words, filled))
}

/// Opens a file to load and returns it with its length, which the loader
/// checks against the header before allocating; `None` for a stream to
/// read as it comes (a pipe, a FIFO with a writer, a character device, or
/// a file that reports no length, as those under /proc do), whose length
/// is known only at its end.
pub(crate) fn open_sized(path: &Path) -> Result<(File, Option<u64>), Error> {
    let file = File::open(path).map_err(io_err("opening the file"))?;
    let meta = file
        .metadata()
        .map_err(io_err("reading the file's metadata"))?;
    let len = (meta.is_file() && meta.len() > 0).then_some(meta.len());
    Ok((file, len))
}

/// After a whole item was read from a stream (see [`open_sized`]): the
/// stream must end there, as a file must hold exactly one item.
/// [`FormatError::SizeMismatch`] (`input length`; `found` is a lower bound: one
/// byte more is enough to tell, and a stream may never end).
pub(crate) fn check_stream_end<R: Read>(mut r: R, total: u64) -> Result<(), Error> {
    let mut byte = [0u8; 1];
    loop {
        match r.read(&mut byte) {
            Ok(0) => return Ok(()),
            Ok(_) => {
                return Err(Error::Format(FormatError::SizeMismatch {
                    field: "input length",
                    expected: total,
                    found: total + 1,
                }));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err("reading past the end")(e)),
        }
    }
}

/// `write_file` of every serialized type: `write_to` writes the item to the
/// writer it is given (buffered; `what` names the final flush in errors).
///
/// A regular file (or a path where nothing is yet) is written atomically:
/// into a new temporary file in the same directory, flushed to disk
/// (`fsync`), then renamed over `path` (and, on Unix, the directory
/// synced), so readers see the old file or the new one, never a partial
/// one; on error the temporary file is removed. A symbolic link is
/// followed: its target is replaced, the link kept. A FIFO or a character
/// device (`/dev/stdout`, a pipe) is written straight through: renaming
/// over it would replace the device with a file. Anything else (a
/// directory, a socket, a block device) is [`Error::UnusablePath`].
pub(crate) fn write_file(
    path: &Path,
    what: &'static str,
    write_to: impl FnOnce(&mut dyn Write) -> Result<(), Error>,
) -> Result<(), Error> {
    let write = |file: &mut File| {
        let mut w = BufWriter::new(file);
        write_to(&mut w)?;
        w.flush().map_err(io_err(what))
    };
    let target = resolve_links(path).map_err(io_err("following the symbolic link"))?;
    match std::fs::metadata(&target) {
        Ok(m) if m.is_file() => write_file_atomic(&target, write),
        Ok(m) if is_stream(&m.file_type()) => {
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(io_err("opening the output"))?;
            write(&mut file)
        }
        Ok(_) => Err(Error::UnusablePath {
            reason: format!(
                "{} is not a regular file, a FIFO or a character device",
                target.display()
            ),
        }),
        Err(e) if e.kind() == ErrorKind::NotFound => write_file_atomic(&target, write),
        Err(e) => Err(io_err("reading the output's metadata")(e)),
    }
}

/// Writes a file atomically: `write` fills a new temporary file in the
/// target's directory, which is synced and renamed over the target.
///
/// Hand-written rather than `tempfile::NamedTempFile::persist`: it is 30
/// lines, and a library should not pull a dependency tree (rustix,
/// getrandom) into every user's build for one helper.
fn write_file_atomic(
    path: &Path,
    write: impl FnOnce(&mut File) -> Result<(), Error>,
) -> Result<(), Error> {
    let name = path.file_name().ok_or_else(|| Error::UnusablePath {
        reason: format!("{} has no file name", path.display()),
    })?;
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
    fn input_length_errors_name_the_part_cut_short() {
        // Payload of 16 bytes: the item is 64 + 16 + 8 = 88 bytes.
        assert!(check_input_len(88, 16).is_ok());
        for (len, field) in [(0, "payload"), (79, "payload"), (80, "checksum")] {
            let err = check_input_len(len, 16).unwrap_err();
            assert!(
                matches!(err, Error::Format(FormatError::Truncated { field: f, got, .. }) if f == field && got == len),
                "{len}: {err}"
            );
        }
        let err = check_input_len(89, 16).unwrap_err();
        assert!(err.to_string().contains("`input length`"), "{err}");
    }
}
