//! CSV input (RFC 4180, through `csv-core`, the csv crate's parser): quoted
//! fields (`"Smith, John"` is one field, `""` a quote in it, a quoted field
//! may span lines), a header row whose names `--column` takes, `\n` or
//! `\r\n` line ends. Each record comes with its raw bytes, so that `filter`
//! writes the records it keeps exactly as they were.

use std::io::{self, Read, Write};

use anyhow::{Context, Result, bail};

use crate::input::{BadKey, InputArgs};

/// Records per batch of keys: one batch query or insert each.
pub(crate) const BATCH_RECORDS: usize = 64 << 10;

/// The longest record read: 64 MiB. A record is held whole (its raw bytes
/// and its fields), so an unmatched quote, which makes the rest of the
/// input one field, must not take the input's size in memory.
pub(crate) const MAX_RECORD_BYTES: usize = 64 << 20;

/// Records of a CSV input, one at a time, each with its raw bytes.
pub(crate) struct Records<R> {
    reader: R,
    core: csv_core::Reader,
    /// Input bytes: `buf[start..filled]` are not handed out yet; `pos` is
    /// where the parser is.
    buf: Vec<u8>,
    start: usize,
    pos: usize,
    filled: usize,
    eof: bool,
    /// The current record's unescaped fields and their ends.
    fields: Vec<u8>,
    ends: Vec<usize>,
    /// Bytes read before `buf[0]`.
    consumed: u64,
    /// Lines before `buf[start]` (line ends counted).
    lines: u64,
}

/// One record: its fields, and its raw bytes (from its first byte through
/// its line end; the input's last record may have none).
pub(crate) struct Record<'a> {
    /// The record as it is in the input.
    pub raw: &'a [u8],
    /// The line it starts on, 1-based.
    pub line: u64,
    /// The fields' unescaped bytes, end to end.
    fields: &'a [u8],
    /// Where each field ends in `fields`.
    ends: &'a [usize],
}

impl<'a> Record<'a> {
    /// Field `i` (0-based), `None` if the record has fewer.
    pub(crate) fn field(&self, i: usize) -> Option<&'a [u8]> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        let field = &self.fields[start..end];
        // A `\r\n` line end leaves its `\r` on the last field: records end
        // at `\n` only, so that a record's raw bytes include its line end.
        // A `\r` inside quotes (`"abc\r"` then `\n`) is the field's own.
        let crlf = self.raw.ends_with(b"\r\n") || self.raw.ends_with(b"\r");
        Some(if crlf && i + 1 == self.ends.len() {
            field.strip_suffix(b"\r").unwrap_or(field)
        } else {
            field
        })
    }

    /// The number of fields.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }
}

impl<R: Read> Records<R> {
    /// Records of `reader`, fields separated by `delimiter`.
    pub(crate) fn new(reader: R, delimiter: u8) -> Self {
        let core = csv_core::ReaderBuilder::new()
            .delimiter(delimiter)
            .terminator(csv_core::Terminator::Any(b'\n'))
            .build();
        Records {
            reader,
            core,
            buf: vec![0; 1 << 20],
            start: 0,
            pos: 0,
            filled: 0,
            eof: false,
            fields: vec![0; 4 << 10],
            ends: vec![0; 64],
            consumed: 0,
            lines: 0,
        }
    }

    /// Bytes of the input parsed so far (for progress).
    pub(crate) fn bytes_read(&self) -> u64 {
        self.consumed + self.pos as u64
    }

    /// Reads more input, keeping `buf[start..]`.
    fn refill(&mut self) -> io::Result<()> {
        // Blank lines the parser has passed belong to no record: they do
        // not count toward the next record's size.
        let blank = self.buf[self.start..self.pos]
            .iter()
            .take_while(|&&b| b == b'\n')
            .count();
        self.start += blank;
        self.lines += blank as u64;
        if self.start > 0 {
            self.consumed += self.start as u64;
            self.buf.copy_within(self.start..self.filled, 0);
            self.pos -= self.start;
            self.filled -= self.start;
            self.start = 0;
        }
        if self.filled == self.buf.len() {
            // One record longer than the buffer.
            let len = self.buf.len();
            if len >= MAX_RECORD_BYTES {
                let line = self.lines + 1;
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "the record on line {line} is longer than {} MiB, the most a record \
                         may be{}",
                        MAX_RECORD_BYTES >> 20,
                        if memchr::memchr(b'"', &self.buf[..]).is_some() {
                            ": a quote (\") opened there and never closed makes the rest of the \
                             input one field"
                        } else {
                            ""
                        }
                    ),
                ));
            }
            self.buf.resize((len * 2).min(MAX_RECORD_BYTES), 0);
        }
        loop {
            match self.reader.read(&mut self.buf[self.filled..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.filled += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The next record, `None` at the end of the input. Blank lines are
    /// skipped (their bytes are not part of any record).
    pub(crate) fn next_record(&mut self) -> io::Result<Option<Record<'_>>> {
        let Some((raw_start, nout, nend, line)) = self.parse_record()? else {
            return Ok(None);
        };
        Ok(Some(Record {
            line,
            raw: &self.buf[raw_start..self.pos],
            fields: &self.fields[..nout],
            ends: &self.ends[..nend],
        }))
    }

    /// Parses the next record: where its raw bytes start (they end at
    /// `pos`), the lengths of its fields and ends, and its first line.
    fn parse_record(&mut self) -> io::Result<Option<(usize, usize, usize, u64)>> {
        use csv_core::ReadRecordResult as R;
        loop {
            let (mut nout, mut nend) = (0, 0);
            let result = loop {
                if self.pos == self.filled && !self.eof {
                    self.refill()?;
                    continue;
                }
                // An empty input (at the end) ends the last record.
                let (result, nin, o, e) = self.core.read_record(
                    &self.buf[self.pos..self.filled],
                    &mut self.fields[nout..],
                    &mut self.ends[nend..],
                );
                self.pos += nin;
                nout += o;
                nend += e;
                match result {
                    R::InputEmpty => {}
                    R::OutputFull => {
                        let len = self.fields.len();
                        self.fields.resize(len * 2, 0);
                    }
                    R::OutputEndsFull => {
                        let len = self.ends.len();
                        self.ends.resize(len * 2, 0);
                    }
                    R::Record | R::End => break result,
                }
            };
            if matches!(result, R::End) {
                return Ok(None);
            }
            // The blank lines the parser skipped before the record are not
            // part of it.
            let mut raw_start = self.start;
            while raw_start < self.pos && self.buf[raw_start] == b'\n' {
                raw_start += 1;
            }
            let line = self.lines + 1 + (raw_start - self.start) as u64;
            self.lines +=
                memchr::memchr_iter(b'\n', &self.buf[self.start..self.pos]).count() as u64;
            self.start = self.pos;
            let raw = &self.buf[raw_start..self.pos];
            if raw == b"\r\n" || raw == b"\r" {
                // A blank line of a `\r\n` file.
                continue;
            }
            return Ok(Some((raw_start, nout, nend, line)));
        }
    }
}

/// Where the key is in each record: a 0-based field index.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KeyField {
    /// The field's index.
    pub index: usize,
}

/// A CSV input's reader, delimiter, and its header's raw bytes (when it
/// has one).
pub(crate) struct Csv<R> {
    /// The records after the header.
    pub records: Records<R>,
    /// The header record's raw bytes (`None` with `--no-header`, or for an
    /// empty input).
    pub header: Option<Vec<u8>>,
    /// Where the key is.
    pub key: KeyField,
    /// The key's name in messages: `user_id` or `field 3`.
    pub key_name: String,
}

/// The delimiter for CSV: `-d`, a comma if absent.
pub(crate) fn delimiter(input: &InputArgs) -> u8 {
    input.delimiter.unwrap_or(b',')
}

/// Opens CSV `reader`: reads the header (unless `--no-header`) and finds
/// the key field (`--column NAME` in the header, `--field N`, or the only
/// field of the first record).
pub(crate) fn open<R: Read>(reader: R, input: &InputArgs) -> Result<Csv<R>> {
    let name = input.name();
    let mut records = Records::new(reader, delimiter(input));
    let header = if input.no_header {
        None
    } else {
        records
            .next_record()
            .with_context(|| format!("cannot read input {name}"))?
            .map(|h| {
                let names: Vec<Vec<u8>> = (0..h.len())
                    .map(|i| h.field(i).unwrap_or_default().to_vec())
                    .collect();
                (h.raw.to_vec(), names)
            })
    };
    let names = header.as_ref().map(|(_, names)| names);
    let listing = |names: &[Vec<u8>]| {
        names
            .iter()
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (index, key_name) = if let Some(column) = &input.column {
        let Some(names) = names else {
            bail!("{name} is empty: it has no header row with a column {column:?}");
        };
        // A UTF-8 byte order mark (Excel's CSV) is not part of the name.
        let first = |i: usize, n: &[u8]| {
            if i == 0 {
                n.strip_prefix(b"\xef\xbb\xbf").unwrap_or(n).to_vec()
            } else {
                n.to_vec()
            }
        };
        let found = names
            .iter()
            .enumerate()
            .position(|(i, n)| first(i, n) == column.as_bytes());
        match found {
            Some(i) => (i, column.clone()),
            None => bail!(
                "{name} has no column {column:?} in its header row; its columns: {}",
                listing(names)
            ),
        }
    } else if let Some(n) = input.field {
        (n as usize - 1, format!("field {n}"))
    } else {
        match names {
            Some(names) if names.len() == 1 => (0, "field 1".to_string()),
            Some(names) => bail!(
                "{name} has {} columns: name the key column with --column NAME (or --field N); \
                 its columns: {}",
                names.len(),
                listing(names)
            ),
            // No header: the whole first field, as lines without --field.
            None => (0, "field 1".to_string()),
        }
    };
    Ok(Csv {
        records,
        header: header.map(|(raw, _)| raw),
        key: KeyField { index },
        key_name,
    })
}

/// A batch of CSV records' keys (and, for `filter`, their raw bytes),
/// copied out of the reader's buffer.
#[derive(Default)]
pub(crate) struct Batch {
    /// The records' raw bytes, end to end, and where each ends.
    raw: Vec<u8>,
    raw_ends: Vec<usize>,
    /// The keys' bytes, end to end, and where each ends.
    keys: Vec<u8>,
    key_ends: Vec<usize>,
    /// Per record: whether it has the key field.
    has_key: Vec<bool>,
    /// The line each key's record starts on (for messages).
    key_lines: Vec<u64>,
    /// Whether the raw bytes are kept (`filter` writes them).
    keep_raw: bool,
}

impl Batch {
    /// An empty batch; `keep_raw`: keep the records' raw bytes.
    pub(crate) fn new(keep_raw: bool) -> Self {
        Batch {
            keep_raw,
            ..Batch::default()
        }
    }

    /// Empties the batch, keeping its allocations.
    pub(crate) fn clear(&mut self) {
        self.raw.clear();
        self.raw_ends.clear();
        self.keys.clear();
        self.key_ends.clear();
        self.has_key.clear();
        self.key_lines.clear();
    }

    /// The records in the batch.
    pub(crate) fn len(&self) -> usize {
        self.has_key.len()
    }

    /// Adds a record.
    pub(crate) fn push(&mut self, record: &Record<'_>, key: KeyField) {
        if self.keep_raw {
            self.raw.extend_from_slice(record.raw);
            self.raw_ends.push(self.raw.len());
        }
        match record.field(key.index) {
            Some(k) => {
                self.keys.extend_from_slice(k);
                self.key_ends.push(self.keys.len());
                self.has_key.push(true);
                self.key_lines.push(record.line);
            }
            None => self.has_key.push(false),
        }
    }

    /// The keys, in record order (records without one left out).
    pub(crate) fn keys(&self) -> Vec<&[u8]> {
        let mut start = 0;
        self.key_ends
            .iter()
            .map(|&end| {
                let k = &self.keys[start..end];
                start = end;
                k
            })
            .collect()
    }

    /// `err` with the file and the line of its key in front when it is a
    /// [`BadKey`] (`index`: among [`Batch::keys`]); any other error as it
    /// is.
    pub(crate) fn at_line(&self, err: anyhow::Error, name: &str) -> anyhow::Error {
        match err.downcast_ref::<BadKey>() {
            Some(bad) => anyhow::anyhow!("{name}, line {}: {bad}", self.key_lines[bad.index]),
            None => err.context(format!("cannot read the keys of {name}")),
        }
    }

    /// The records without a key.
    pub(crate) fn keyless(&self) -> u64 {
        (self.has_key.len() - self.key_ends.len()) as u64
    }

    /// Writes the records whose key was found (`found`: one answer per
    /// key, in order) or, with `invert`, the others; a record without the
    /// key is absent. The input's last record gets a line end. Returns the
    /// records written.
    pub(crate) fn write_selected(
        &self,
        found: &[bool],
        invert: bool,
        out: &mut (impl Write + ?Sized),
    ) -> io::Result<u64> {
        let mut answers = found.iter();
        let (mut start, mut written) = (0, 0u64);
        for (&end, &keyed) in self.raw_ends.iter().zip(&self.has_key) {
            let present = keyed && *answers.next().expect("an answer per key");
            if present != invert {
                let raw = &self.raw[start..end];
                out.write_all(raw)?;
                if !raw.ends_with(b"\n") {
                    out.write_all(b"\n")?;
                }
                written += 1;
            }
            start = end;
        }
        Ok(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::Dribble;

    fn all(input: &[u8], step: usize) -> Vec<(Vec<u8>, Vec<Vec<u8>>)> {
        let mut r = Records::new(Dribble(input, step), b',');
        let mut out = Vec::new();
        while let Some(rec) = r.next_record().unwrap() {
            let fields = (0..rec.len())
                .map(|i| rec.field(i).unwrap().to_vec())
                .collect();
            out.push((rec.raw.to_vec(), fields));
        }
        out
    }

    #[test]
    fn quotes_line_ends_and_raw_bytes() {
        let input = b"name,id\r\n\"Smith, John\",1\r\n\r\n\"a \"\"b\"\"\nc\",2\nlast,3";
        for step in [1, 2, 7, 1 << 20] {
            let recs = all(input, step);
            let raws: Vec<&[u8]> = recs.iter().map(|r| &r.0[..]).collect();
            assert_eq!(
                raws,
                [
                    &b"name,id\r\n"[..],
                    b"\"Smith, John\",1\r\n",
                    b"\"a \"\"b\"\"\nc\",2\n",
                    b"last,3"
                ],
                "step {step}"
            );
            assert_eq!(recs[1].1, [b"Smith, John".to_vec(), b"1".to_vec()]);
            assert_eq!(recs[2].1, [b"a \"b\"\nc".to_vec(), b"2".to_vec()]);
            assert_eq!(recs[0].1, [b"name".to_vec(), b"id".to_vec()]);
            assert_eq!(recs[3].1, [b"last".to_vec(), b"3".to_vec()]);
        }
        assert!(all(b"", 3).is_empty());
        assert!(all(b"\n\n", 3).is_empty());
    }
}
