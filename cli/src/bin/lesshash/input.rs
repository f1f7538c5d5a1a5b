//! Line input: files or stdin read in large chunks of whole lines, split
//! with `memchr`, and the key of each line (the whole line, or one field).

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result, bail};

use crate::sniff::{Content, SNIFF_LEN};

/// Where keys come from: `-i FILE`, or stdin for `-` or no `-i`, in which
/// format, and which part of each record is the key.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct InputArgs {
    /// Input file: lines, CSV, Parquet or Arrow IPC (see --format); `-` or
    /// absent: stdin.
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// The input's format. `auto` (the default) reads the first bytes:
    /// a Parquet file (`PAR1`) or an Arrow IPC file or stream is read as
    /// such, other binary content (a filter file, gzip, zstd, NUL bytes)
    /// is refused, and text is CSV when the file name ends in `.csv`, lines
    /// otherwise. `lines` and `csv` read the input as that, whatever it
    /// holds.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = FormatArg::Auto)]
    pub format: FormatArg,

    /// The key column, by name: a Parquet or Arrow column (its type decides
    /// how keys are hashed) or a CSV header's field. A file of one column
    /// needs none.
    #[arg(long, value_name = "NAME", conflicts_with = "field")]
    pub column: Option<String>,

    /// Use field N (1-based) of each line or CSV record (the Nth column of
    /// a Parquet or Arrow file) as the key instead of the whole line. Lines
    /// with fewer fields have no key: `build` skips them, `filter` treats
    /// them as absent.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub field: Option<u32>,

    /// The field delimiter: one byte (`\t` or `tab`, `comma`, `semicolon`,
    /// `pipe`, `space`, or the character); for lines with --field (default
    /// tab) and CSV (default comma).
    #[arg(long, short = 'd', value_name = "C", value_parser = crate::parse_delimiter)]
    pub delimiter: Option<u8>,

    /// CSV: the first record is data, not a header (then --column cannot
    /// name a column; use --field).
    #[arg(long)]
    pub no_header: bool,

    /// How a key's text becomes the bytes that are hashed: `text` (its
    /// bytes, the default) or `int` (a decimal 64-bit integer, hashed as
    /// the crate's u64/i64 keys and Python's int keys are: 8 little-endian
    /// bytes). The filter records which (docs/format.md), and `filter` and
    /// `query` refuse keys of the other kind. Parquet and Arrow keys are
    /// hashed by their column's type; `--keys` must then agree with it.
    #[arg(long = "keys", value_enum, value_name = "KIND")]
    pub keys: Option<Keys>,

    /// A stream (stdin, a pipe or FIFO given with -i) whose first bytes
    /// were read to decide its format: those bytes, then the rest.
    #[arg(skip)]
    stream: Pending,
}

/// The reader of a stream that [`InputArgs::detect`] started reading, for
/// [`InputArgs::open`] to hand out (once: a stream cannot be read again).
#[derive(Clone, Default)]
pub(crate) struct Pending(Arc<Mutex<Option<Box<dyn Read + Send>>>>);

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pending")
    }
}

/// `--format`: what the input holds.
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum FormatArg {
    /// Decided from the content (and `.csv` names).
    #[default]
    Auto,
    /// One record per line.
    Lines,
    /// CSV (RFC 4180: quoted fields, a header row unless --no-header).
    Csv,
    /// Apache Parquet.
    Parquet,
    /// Arrow IPC: a file (Feather v2) or a stream.
    Arrow,
}

/// The format an input is read in, once decided ([`InputArgs::detect`]).
pub(crate) use lesshash_cli::input_format::Format;

/// How a key's text is turned into the bytes the crate hashes (`--keys`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Keys {
    /// The text's bytes.
    #[default]
    Text,
    /// A decimal integer from -2^63 to 2^64 - 1, as 8 little-endian bytes
    /// (i64 if negative, else u64: the crate's integer keys, Python's int).
    Int,
}

impl Keys {
    /// The option's value: `text` or `int`.
    pub(crate) fn kind_arg(self) -> &'static str {
        match self {
            Keys::Text => "text",
            Keys::Int => "int",
        }
    }

    /// The kind a filter records for keys read this way.
    pub(crate) fn kind(self) -> lesshash::KeyKind {
        match self {
            Keys::Text => lesshash::KeyKind::Text,
            Keys::Int => lesshash::KeyKind::Int64,
        }
    }
}

/// Refuses to query a filter that records keys of kind `filter` with keys
/// of kind `keys` (integers against text or bytes: every answer would be
/// "absent"), naming both, whose keys they are (`subject`, with its verb:
/// "these keys (--keys text) are"), what to do (`hint`) and `--any-keys`,
/// which queries anyway.
pub(crate) fn check_kinds(
    filter_name: &str,
    filter: lesshash::KeyKind,
    keys: lesshash::KeyKind,
    subject: &str,
    hint: &str,
) -> Result<()> {
    if filter.accepts(keys) {
        return Ok(());
    }
    bail!(
        "filter {filter_name} was built from {filter} keys, but {subject} {keys} keys: the \
         integer 7 and the text \"7\" are different keys, so every answer would be \"absent\"; \
         {hint}, or give --any-keys to query anyway"
    )
}

/// The 8 bytes the crate hashes for the integer written in `text`
/// (decimal, an optional sign), as [`Keys::Int`] reads it; `None` if it
/// is not one or is outside -2^63 ..= 2^64 - 1.
///
/// Parsing is most of the work of a `--keys int` filter, so the common
/// shapes (up to 19 digits, or `-` and up to 18) are read in one pass
/// without the UTF-8 check; the rest go to [`int_key_std`], the oracle.
#[inline]
pub(crate) fn int_key(text: &[u8]) -> Option<[u8; 8]> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    // 19 digits stay below 2^64 and 18 below 2^63: no overflow to test.
    if digits.is_empty() || digits.len() > 19 - usize::from(negative) {
        return int_key_std(text);
    }
    let mut v = 0u64;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return int_key_std(text);
        }
        v = v * 10 + u64::from(d);
    }
    Some(if negative {
        // Below 2^63 (18 digits), so the negation cannot overflow.
        (v as i64).wrapping_neg().to_le_bytes()
    } else {
        v.to_le_bytes()
    })
}

/// [`int_key`] by the standard library's parsers: the definition.
fn int_key_std(text: &[u8]) -> Option<[u8; 8]> {
    let s = std::str::from_utf8(text).ok()?;
    match s.parse::<u64>() {
        Ok(v) => Some(v.to_le_bytes()),
        Err(_) => s.parse::<i64>().ok().map(i64::to_le_bytes),
    }
}

/// Keys encoded as `--keys` asks ([`KeySpec::encode`]).
pub(crate) enum Encoded<'a> {
    Text(&'a [&'a [u8]]),
    /// Parsed into the caller's buffer, reused from chunk to chunk: a
    /// fresh vector per chunk touches fresh pages every time.
    Int(&'a [[u8; 8]]),
}

/// Runs `$body` with `$k` bound to the keys of `$encoded` (an
/// [`Encoded`]): a slice of `&[u8]` or of `[u8; 8]`, both `lesshash::Key`.
macro_rules! with_encoded {
    ($encoded:expr, |$k:ident| $body:expr) => {
        match $encoded {
            $crate::input::Encoded::Text($k) => $body,
            $crate::input::Encoded::Int($k) => $body,
        }
    };
}
pub(crate) use with_encoded;

impl InputArgs {
    /// The input path, `None` for stdin.
    pub fn path(&self) -> Option<&Path> {
        self.input.as_deref().filter(|p| p.as_os_str() != "-")
    }

    /// `--keys`, text if absent.
    pub fn keys(&self) -> Keys {
        self.keys.unwrap_or_default()
    }

    /// The delimiter of `--field` in lines: `-d`, tab if absent.
    pub fn line_delimiter(&self) -> u8 {
        self.delimiter.unwrap_or(b'\t')
    }

    /// How keys are cut from lines.
    pub fn key_spec(&self) -> KeySpec {
        KeySpec {
            field: self.field.map(|f| (f as usize, self.line_delimiter())),
            kind: self.keys(),
        }
    }

    /// A name for messages.
    pub fn name(&self) -> String {
        self.path()
            .map_or_else(|| "stdin".into(), |p| p.display().to_string())
    }

    /// Decides the input's format (`--format`, else its first bytes and
    /// name: [`Content`]) and checks the options against it. Reads the
    /// first bytes of a stream, which [`InputArgs::open`] then reads again.
    pub fn detect(&mut self) -> Result<Format> {
        let name = self.name();
        let format = match self.format {
            FormatArg::Lines => Format::Lines,
            FormatArg::Csv => Format::Csv,
            FormatArg::Parquet | FormatArg::Arrow | FormatArg::Auto => {
                let content = Content::of(&self.head()?);
                self.format_of(content, &name)?
            }
        };
        self.check_options(format)?;
        Ok(format)
    }

    /// The input's first bytes: up to [`SNIFF_LEN`] of a regular file;
    /// of a stream (stdin, a pipe or FIFO), one read's worth (a pipe's
    /// first lines are not held back waiting for more), which
    /// [`InputArgs::open`] then hands out again before the rest.
    fn head(&mut self) -> Result<Vec<u8>> {
        let name = self.name();
        let mut head = vec![0u8; SNIFF_LEN];
        let context = || format!("cannot read input {name}");
        let mut reader: Box<dyn Read + Send> = match self.path() {
            Some(p) => Box::new(
                File::open(p).with_context(|| format!("cannot open input {}", p.display()))?,
            ),
            None => Box::new(io::stdin()),
        };
        if self.len().is_some() {
            let n = read_up_to(reader, &mut head).with_context(context)?;
            head.truncate(n);
            return Ok(head);
        }
        let n = loop {
            match reader.read(&mut head) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e).with_context(context),
            }
        };
        head.truncate(n);
        let again = io::Cursor::new(head.clone()).chain(reader);
        *self.stream.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(again));
        Ok(head)
    }

    /// The format for `--format parquet`, `arrow` or `auto` and content
    /// that looks like `content`.
    fn format_of(&self, content: Content, name: &str) -> Result<Format> {
        let ext = self
            .path()
            .and_then(|p| p.extension())
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        let wanted = match self.format {
            FormatArg::Parquet => Some(Format::Parquet),
            FormatArg::Arrow => None,
            _ => match ext.as_deref() {
                Some("parquet" | "parq" | "pq") => Some(Format::Parquet),
                Some("arrow" | "feather" | "ipc" | "arrows") => None,
                _ => {
                    // No columnar name: the content decides.
                    return match content {
                        Content::Parquet => Ok(Format::Parquet),
                        Content::ArrowFile => Ok(Format::ArrowFile),
                        Content::ArrowStream => Ok(Format::ArrowStream),
                        Content::Binary(what) => bail!(
                            "input {name} looks like {what}, not lines of keys: give a \
                             Parquet, Arrow IPC, CSV or text file (or --format lines to cut \
                             it into lines anyway)"
                        ),
                        Content::Text | Content::Empty => Ok(if ext.as_deref() == Some("csv") {
                            Format::Csv
                        } else {
                            Format::Lines
                        }),
                    };
                }
            },
        };
        // A Parquet or Arrow file by --format or by name: its content must
        // say so.
        match (wanted, content) {
            (Some(Format::Parquet), Content::Parquet) => Ok(Format::Parquet),
            (None, Content::ArrowFile) => Ok(Format::ArrowFile),
            (None, Content::ArrowStream) => Ok(Format::ArrowStream),
            (wanted, content) => {
                let what = if wanted.is_some() {
                    "a Parquet file (no PAR1 magic)"
                } else {
                    "an Arrow IPC file or stream (no ARROW1 magic or stream header)"
                };
                bail!("input {name} is not {what}: {}", content.looks())
            }
        }
    }

    /// Refuses options that do not apply to `format`.
    fn check_options(&self, format: Format) -> Result<()> {
        let name = self.name();
        match format {
            Format::Lines => {
                if self.column.is_some() {
                    bail!(
                        "--column names a column of a CSV, Parquet or Arrow file, and {name} is \
                         read as lines: give --format csv (its first line a header), or --field N"
                    );
                }
                if self.no_header {
                    bail!("--no-header is for CSV input, and {name} is read as lines");
                }
                if self.delimiter.is_some() && self.field.is_none() {
                    bail!(
                        "-d (--delimiter) needs --field N for lines (or CSV input: --format csv)"
                    );
                }
            }
            Format::Csv => {
                if self.no_header && self.column.is_some() {
                    bail!(
                        "--column needs a header row, and --no-header says there is none: use --field N"
                    );
                }
            }
            _ => {
                if self.delimiter.is_some() || self.no_header {
                    bail!(
                        "-d and --no-header are for lines and CSV, and {name} is {}",
                        format.name()
                    );
                }
            }
        }
        Ok(())
    }

    /// Opens the input. `Send`, so that the parallel paths read it on a
    /// thread of its own (stdin is locked per read: one lock a chunk). On
    /// stdin, the bytes [`InputArgs::detect`] read come first.
    pub fn open(&self) -> Result<Box<dyn Read + Send>> {
        if let Some(stream) = self
            .stream
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            return Ok(stream);
        }
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

/// Reads until `buf` is full or the input ends; the bytes read.
fn read_up_to(mut r: impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// The key of a line: the whole line or one delimited field.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeySpec {
    field: Option<(usize, u8)>,
    kind: Keys,
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
    /// text, parsed into `ints` for integers (an error quoting the first
    /// key that is not one).
    pub fn encode<'a>(
        &self,
        keys: &'a [&'a [u8]],
        ints: &'a mut Vec<[u8; 8]>,
    ) -> Result<Encoded<'a>> {
        encode_keys(self.kind, keys, ints)
    }

    /// `--keys`.
    pub fn keys(&self) -> Keys {
        self.kind
    }
}

/// [`KeySpec::encode`] for a [`Keys`].
pub(crate) fn encode_keys<'a>(
    kind: Keys,
    keys: &'a [&'a [u8]],
    ints: &'a mut Vec<[u8; 8]>,
) -> Result<Encoded<'a>> {
    match kind {
        Keys::Text => Ok(Encoded::Text(keys)),
        Keys::Int => {
            ints.clear();
            ints.reserve(keys.len());
            for (index, k) in keys.iter().enumerate() {
                ints.push(int_key(k).ok_or_else(|| BadKey {
                    index,
                    text: String::from_utf8_lossy(k).into_owned(),
                })?);
            }
            Ok(Encoded::Int(ints))
        }
    }
}

/// A key that `--keys int` cannot read: its index among the keys encoded
/// together, for the caller to turn into a line number ([`at_line`]).
#[derive(Debug)]
pub(crate) struct BadKey {
    pub index: usize,
    pub text: String,
}

impl std::fmt::Display for BadKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "key {:?} is not an integer from -2^63 to 2^64 - 1 (--keys int)",
            self.text
        )
    }
}

impl std::error::Error for BadKey {}

/// The 1-based line, within `chunk` (whole lines), of the `index`-th key
/// that `spec` cuts from its lines (lines without a key skipped): read
/// again only when a key turned out bad.
pub(crate) fn line_of_key(chunk: &[u8], spec: KeySpec, index: usize) -> usize {
    let (mut line, mut keys) = (0, 0);
    let mut found = None;
    for_each_line(chunk, |l| {
        line += 1;
        if found.is_none() && spec.key(strip_eol(l)).is_some() {
            if keys == index {
                found = Some(line);
            }
            keys += 1;
        }
    });
    found.unwrap_or(line)
}

/// `err` (a [`BadKey`] among keys cut from `chunk`, whose first line is
/// line `first` of `name`, 1-based) with the file and line in front;
/// any other error unchanged.
pub(crate) fn at_line(
    err: anyhow::Error,
    name: &str,
    chunk: &[u8],
    first: u64,
    spec: KeySpec,
) -> anyhow::Error {
    match err.downcast_ref::<BadKey>() {
        Some(bad) => {
            let line = first + line_of_key(chunk, spec, bad.index) as u64 - 1;
            anyhow::anyhow!("{name}, line {line}: {bad}")
        }
        None => err,
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

/// A reader that hands out at most `.1` bytes of `.0` a read (the tests'
/// reader granularity).
#[cfg(test)]
pub(crate) struct Dribble<'a>(pub &'a [u8], pub usize);

#[cfg(test)]
impl Read for Dribble<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.1.min(out.len()).min(self.0.len());
        out[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_line_endings() {
        let spec = KeySpec {
            field: Some((2, b',')),
            kind: Keys::Text,
        };
        assert_eq!(spec.key(b"a,b,c"), Some(&b"b"[..]));
        assert_eq!(spec.key(b"a,b"), Some(&b"b"[..]));
        assert_eq!(spec.key(b"a,"), Some(&b""[..]));
        assert_eq!(spec.key(b"a"), None);
        let first = KeySpec {
            field: Some((1, b',')),
            kind: Keys::Text,
        };
        assert_eq!(first.key(b"x"), Some(&b"x"[..]));
        assert_eq!(strip_eol(b"x\r\n"), b"x");
        assert_eq!(strip_eol(b"x"), b"x");
    }

    /// Chunks reassemble the input exactly, for every reader granularity.
    #[test]
    fn chunks_cover_the_input() {
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
        // The fast path against the definition: every shape near its
        // limits, and random strings over the characters that matter.
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for digits in 0..=21 {
            for lead in ["", "-", "+", "--", "-+", "0", "-0"] {
                for fill in [b'0', b'1', b'9'] {
                    let mut c = lead.as_bytes().to_vec();
                    c.resize(lead.len() + digits, fill);
                    cases.push(c);
                }
            }
        }
        for limit in [u64::MAX as i128, i64::MAX as i128, i64::MIN as i128] {
            for d in -2..=2 {
                cases.push((limit + d).to_string().into_bytes());
            }
        }
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) as usize
        };
        let alphabet = b"0123456789-+ x\xff9";
        for _ in 0..100_000 {
            let len = next() % 23;
            cases.push(
                (0..len)
                    .map(|_| alphabet[next() % alphabet.len()])
                    .collect(),
            );
        }
        for c in &cases {
            assert_eq!(
                int_key(c),
                int_key_std(c),
                "{:?}",
                String::from_utf8_lossy(c)
            );
        }
        let keys: Vec<&[u8]> = vec![b"1", b"x"];
        let e = encode_keys(Keys::Int, &keys, &mut Vec::new())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("\"x\"") && e.contains("--keys int"), "{e}");
    }
}
