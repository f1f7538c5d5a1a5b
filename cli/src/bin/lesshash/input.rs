//! Line input: files or stdin read in large chunks of whole lines, split
//! with `memchr`, and the key of each line (the whole line, or one field).

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Where keys come from: `-i FILE`, or stdin for `-` or no `-i`.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct InputArgs {
    /// Input file, one record per line; `-` or absent: stdin.
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// Use field N (1-based) of each line as the key instead of the whole
    /// line. Lines with fewer fields have no key: `build` skips them,
    /// `filter` treats them as absent.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub field: Option<u32>,

    /// The field delimiter for --field: one byte (`\t` or `tab` for a tab).
    #[arg(long, short = 'd', value_name = "C", default_value = "\\t",
          value_parser = crate::parse_delimiter, requires = "field")]
    pub delimiter: u8,

    /// How a key's text becomes the bytes that are hashed: `text` (its
    /// bytes, the default) or `int` (a decimal 64-bit integer, hashed as
    /// the crate's u64/i64 keys and Python's int keys are: 8 little-endian
    /// bytes). A filter built from integers in Rust or Python answers only
    /// `--keys int` queries; the file does not record which was used.
    #[arg(long = "keys", value_enum, value_name = "KIND", default_value_t = KeyKind::Text)]
    pub keys: KeyKind,
}

/// How a key's text is turned into the bytes the crate hashes (`--keys`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum KeyKind {
    /// The text's bytes.
    #[default]
    Text,
    /// A decimal integer from -2^63 to 2^64 - 1, as 8 little-endian bytes
    /// (i64 if negative, else u64: the crate's integer keys, Python's int).
    Int,
}

/// The 8 bytes the crate hashes for the integer written in `text`
/// (decimal, an optional sign), as [`KeyKind::Int`] reads it; `None` if it
/// is not one or is outside -2^63 ..= 2^64 - 1.
pub(crate) fn int_key(text: &[u8]) -> Option<[u8; 8]> {
    let s = std::str::from_utf8(text).ok()?;
    match s.parse::<u64>() {
        Ok(v) => Some(v.to_le_bytes()),
        Err(_) => s.parse::<i64>().ok().map(i64::to_le_bytes),
    }
}

/// Keys encoded as `--keys` asks ([`KeySpec::encode`]).
pub(crate) enum Encoded<'a> {
    Text(&'a [&'a [u8]]),
    Int(Vec<[u8; 8]>),
}

/// Runs `$body` with `$k` bound to the keys of `$encoded` (an
/// [`Encoded`]): a slice of `&[u8]` or of `[u8; 8]`, both `lesshash::Key`.
macro_rules! with_keys {
    ($encoded:expr, |$k:ident| $body:expr) => {
        match $encoded {
            $crate::input::Encoded::Text($k) => $body,
            $crate::input::Encoded::Int(ints) => {
                let $k = &ints[..];
                $body
            }
        }
    };
}
pub(crate) use with_keys;

impl InputArgs {
    /// The input path, `None` for stdin.
    pub fn path(&self) -> Option<&Path> {
        self.input.as_deref().filter(|p| p.as_os_str() != "-")
    }

    /// How keys are cut from lines.
    pub fn key_spec(&self) -> KeySpec {
        KeySpec {
            field: self.field.map(|f| (f as usize, self.delimiter)),
            kind: self.keys,
        }
    }

    /// A name for messages.
    pub fn name(&self) -> String {
        self.path()
            .map_or_else(|| "stdin".into(), |p| p.display().to_string())
    }

    /// Opens the input. `Send`, so that the parallel paths read it on a
    /// thread of its own (stdin is locked per read: one lock a chunk).
    pub fn open(&self) -> Result<Box<dyn Read + Send>> {
        Ok(match self.path() {
            Some(p) => Box::new(
                File::open(p).with_context(|| format!("cannot open input {}", p.display()))?,
            ),
            None => Box::new(io::stdin()),
        })
    }

    /// The input's size in bytes, when it is a regular file.
    pub fn len(&self) -> Option<u64> {
        self.path()
            .and_then(|p| std::fs::metadata(p).ok())
            .filter(|m| m.is_file())
            .map(|m| m.len())
    }
}

/// The key of a line: the whole line or one delimited field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeySpec {
    field: Option<(usize, u8)>,
    kind: KeyKind,
}

impl KeySpec {
    /// Whether the key is the whole line (no `--field`).
    pub fn is_whole_line(&self) -> bool {
        self.field.is_none()
    }

    /// The key of `line` (without its line ending), `None` if the line has
    /// fewer fields than asked for.
    #[inline]
    pub fn key<'a>(&self, line: &'a [u8]) -> Option<&'a [u8]> {
        let Some((n, delim)) = self.field else {
            return Some(line);
        };
        let mut start = 0;
        for _ in 1..n {
            start += memchr::memchr(delim, &line[start..])? + 1;
        }
        let rest = &line[start..];
        Some(memchr::memchr(delim, rest).map_or(rest, |end| &rest[..end]))
    }
    /// The keys cut from lines, encoded as `--keys` asks: as they are for
    /// text, parsed for integers (an error quoting the first key that is
    /// not one).
    pub fn encode<'a>(&self, keys: &'a [&'a [u8]]) -> Result<Encoded<'a>> {
        encode_keys(self.kind, keys)
    }
}

/// [`KeySpec::encode`] for a [`KeyKind`].
pub(crate) fn encode_keys<'a>(kind: KeyKind, keys: &'a [&'a [u8]]) -> Result<Encoded<'a>> {
    match kind {
        KeyKind::Text => Ok(Encoded::Text(keys)),
        KeyKind::Int => keys
            .iter()
            .map(|k| {
                int_key(k).ok_or_else(|| {
                    anyhow::anyhow!(
                        "key {:?} is not an integer from -2^63 to 2^64 - 1 (--keys int)",
                        String::from_utf8_lossy(k)
                    )
                })
            })
            .collect::<Result<Vec<_>>>()
            .map(Encoded::Int),
    }
}

/// Strips the line ending (`\n` or `\r\n`) from a line.
#[inline]
pub(crate) fn strip_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// Calls `f` on every line of `chunk`, each with its line ending (the last
/// one may have none at the end of the input).
#[inline]
pub(crate) fn for_each_line<'a>(chunk: &'a [u8], mut f: impl FnMut(&'a [u8])) {
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', chunk) {
        f(&chunk[start..=end]);
        start = end + 1;
    }
    if start < chunk.len() {
        f(&chunk[start..]);
    }
}

/// An empty vector reusing `v`'s allocation for borrows of another chunk
/// (`collect` of a consumed `Vec` into one of the same layout reuses it in
/// place).
pub(crate) fn recycle<'a>(mut v: Vec<&[u8]>) -> Vec<&'a [u8]> {
    v.clear();
    v.into_iter()
        .map(|_| -> &'a [u8] { unreachable!() })
        .collect()
}

/// Reads an input in chunks that end at a line boundary.
pub(crate) struct Chunks<R> {
    reader: R,
    buf: Vec<u8>,
    /// Bytes of `buf` in use: `buf[..filled]`.
    filled: usize,
    /// Bytes handed out by the previous chunk, to drop before the next.
    consumed: usize,
    eof: bool,
}

/// The chunk size: large enough that a batch query amortises its set-up,
/// small enough to stay in L2/L3 while its lines are written out.
pub(crate) const CHUNK: usize = 1 << 20;

impl<R: Read> Chunks<R> {
    pub fn new(reader: R) -> Self {
        Self {
            reader,
            buf: vec![0; CHUNK],
            filled: 0,
            consumed: 0,
            eof: false,
        }
    }

    /// The next chunk of whole lines, `None` at the end of the input. A
    /// line longer than the buffer grows it.
    pub fn next_chunk(&mut self) -> io::Result<Option<&[u8]>> {
        self.buf.copy_within(self.consumed..self.filled, 0);
        self.filled -= self.consumed;
        self.consumed = 0;
        loop {
            // Read until the buffer is full or a short read (a pipe) left
            // at least one whole line: pipes then get 64 KiB batches
            // without waiting for a full buffer.
            while !self.eof && self.filled < self.buf.len() {
                let want = self.buf.len() - self.filled;
                let n = match self.reader.read(&mut self.buf[self.filled..]) {
                    Ok(n) => n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                if n == 0 {
                    self.eof = true;
                }
                self.filled += n;
                if n < want
                    && memchr::memchr(b'\n', &self.buf[self.filled - n..self.filled]).is_some()
                {
                    break;
                }
            }
            let data = &self.buf[..self.filled];
            if let Some(last) = memchr::memrchr(b'\n', data) {
                self.consumed = last + 1;
                return Ok(Some(&self.buf[..self.consumed]));
            }
            if self.eof {
                if self.filled == 0 {
                    return Ok(None);
                }
                self.consumed = self.filled;
                return Ok(Some(&self.buf[..self.filled]));
            }
            // No line end in a full buffer: one very long line.
            let len = self.buf.len();
            self.buf.resize(len * 2, 0);
        }
    }
}

/// Splits a chunk into at most `n` pieces of about equal size, in order,
/// each ending at a line end (the last one where the chunk ends): the
/// pieces of a chunk processed on several threads.
pub(crate) fn split_lines(chunk: &[u8], n: usize) -> Vec<&[u8]> {
    let mut pieces = Vec::with_capacity(n);
    let mut start = 0;
    for k in 1..n {
        // The first line end at or past an even share.
        let at = (chunk.len() * k / n).max(start);
        match memchr::memchr(b'\n', &chunk[at..]) {
            Some(i) => {
                pieces.push(&chunk[start..at + i + 1]);
                start = at + i + 1;
            }
            None => break,
        }
    }
    if start < chunk.len() {
        pieces.push(&chunk[start..]);
    }
    pieces
}

/// Counts the lines of a file (pass one of `build` without `--items`).
pub(crate) fn count_lines(mut r: impl Read) -> io::Result<u64> {
    let mut buf = vec![0u8; CHUNK];
    let (mut lines, mut last) = (0u64, b'\n');
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        last = buf[n - 1];
    }
    Ok(lines + u64::from(last != b'\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_line_endings() {
        let spec = KeySpec {
            field: Some((2, b',')),
            kind: KeyKind::Text,
        };
        assert_eq!(spec.key(b"a,b,c"), Some(&b"b"[..]));
        assert_eq!(spec.key(b"a,b"), Some(&b"b"[..]));
        assert_eq!(spec.key(b"a,"), Some(&b""[..]));
        assert_eq!(spec.key(b"a"), None);
        let first = KeySpec {
            field: Some((1, b',')),
            kind: KeyKind::Text,
        };
        assert_eq!(first.key(b"x"), Some(&b"x"[..]));
        assert_eq!(strip_eol(b"x\r\n"), b"x");
        assert_eq!(strip_eol(b"x"), b"x");
    }

    /// Chunks reassemble the input exactly, for every reader granularity.
    #[test]
    fn chunks_cover_the_input() {
        struct Dribble<'a>(&'a [u8], usize);
        impl Read for Dribble<'_> {
            fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
                let n = self.1.min(out.len()).min(self.0.len());
                out[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let mut input = Vec::new();
        for i in 0..300_000u32 {
            input.extend_from_slice(format!("line-{i}\n").as_bytes());
        }
        input.extend_from_slice(&vec![b'x'; 3 * CHUNK]); // a long last line, no newline
        for step in [1 << 16, 1000, CHUNK * 4] {
            let mut chunks = Chunks::new(Dribble(&input, step));
            let mut out = Vec::new();
            while let Some(c) = chunks.next_chunk().unwrap() {
                assert!(c.ends_with(b"\n") || out.len() + c.len() == input.len());
                out.extend_from_slice(c);
            }
            assert_eq!(out, input, "step={step}");
        }
        assert_eq!(count_lines(&input[..]).unwrap(), 300_001);
        assert_eq!(count_lines(&b"a\nb\n"[..]).unwrap(), 2);
        assert_eq!(count_lines(&b""[..]).unwrap(), 0);
    }

    /// `--keys int` reads what Python's int keys and the crate's u64/i64
    /// keys hash: 8 little-endian bytes, two's complement below zero.
    #[test]
    fn int_keys_are_the_crates_64_bit_integers() {
        assert_eq!(int_key(b"42"), Some(42u64.to_le_bytes()));
        assert_eq!(int_key(b"-7"), Some((-7i64).to_le_bytes()));
        assert_eq!(int_key(b"+5"), Some(5u64.to_le_bytes()));
        assert_eq!(
            int_key(b"18446744073709551615"),
            Some(u64::MAX.to_le_bytes())
        );
        assert_eq!(
            int_key(b"-9223372036854775808"),
            Some(i64::MIN.to_le_bytes())
        );
        for bad in [
            &b""[..],
            b"18446744073709551616",
            b"-9223372036854775809",
            b"1.0",
            b" 1",
            b"0x10",
            b"abc",
        ] {
            assert_eq!(int_key(bad), None, "{bad:?}");
        }
        let keys: Vec<&[u8]> = vec![b"1", b"x"];
        let e = encode_keys(KeyKind::Int, &keys).err().unwrap().to_string();
        assert!(e.contains("\"x\"") && e.contains("--keys int"), "{e}");
    }
}
