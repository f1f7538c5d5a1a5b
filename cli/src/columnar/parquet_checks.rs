//! A Parquet file's claims, checked before the parquet crate acts on them.
//!
//! The decoder sizes allocations by what the footer and page headers say
//! (a schema element's child count, a page's uncompressed size, a
//! dictionary's value count) and trusts the footer's row counts. Here the
//! footer is walked whole before it is decoded (every list and string it
//! declares must be there, every child count within the schema), each
//! column chunk must lie between the magic and the footer, and the page
//! headers of the columns read are walked before a row group is decoded:
//! sizes within the chunk, a dictionary no larger than its page can hold,
//! level lengths within their page, and the rows the pages hold equal to
//! the rows the row group claims. The cost on an honest file is a read of
//! each page's header (tens of bytes per page of about a megabyte).

use std::fs::File;

use anyhow::{Result, anyhow, bail};
use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::ParquetMetaData;

use super::read_at;
use super::thrift::{Reader, ThriftError, ty};

/// The bytes of a page header read at first; a header with large
/// statistics is read again with more, up to [`MAX_PAGE_HEADER`].
const FIRST_READ: usize = 256;

/// The largest page header read: statistics of long strings make headers
/// of kilobytes, never megabytes.
const MAX_PAGE_HEADER: usize = 16 << 20;

/// Where a Parquet file's column data ends: the footer's start.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Footer {
    /// The byte where the footer begins (column chunks end before it).
    pub data_end: u64,
}

/// Checks the footer of the Parquet file `file` (`len` bytes) before it is
/// decoded: its length within the file, its Thrift structure whole, and
/// every schema element's child count within the schema (the decoder
/// reserves room for that many children before it reads one).
pub(crate) fn check_footer(file: &File, len: u64) -> Result<Footer> {
    if len < 12 {
        bail!("it is {len} bytes, too short to be Parquet (12 bytes at least)");
    }
    let mut tail = [0u8; 8];
    read_at(file, len - 8, &mut tail)?;
    if &tail[4..] != b"PAR1" {
        // An encrypted footer ("PARE") or not Parquet: the decoder's error.
        return Ok(Footer { data_end: len - 8 });
    }
    let footer_len = u64::from(u32::from_le_bytes(tail[..4].try_into().expect("4 bytes")));
    if footer_len > len - 12 {
        bail!(
            "its footer claims {footer_len} bytes, but the file has {} before the footer's \
             length",
            len - 12
        );
    }
    let data_end = len - 8 - footer_len;
    let mut footer = vec![0u8; footer_len as usize];
    read_at(file, data_end, &mut footer)?;
    let mut children = Vec::new();
    let mut r = Reader::new(&footer);
    r.read_struct(0, |r, id, t| {
        if id != 2 || t != ty::LIST {
            return Ok(false);
        }
        let (elem, n) = r.list_header()?;
        if elem != ty::STRUCT {
            return Err(ThriftError::Invalid(
                "a schema that is not a list of structs".into(),
            ));
        }
        for _ in 0..n {
            let mut count = None;
            r.read_struct(1, |r, id, t| {
                if id == 5 {
                    count = Some(r.int(t)?);
                    return Ok(true);
                }
                Ok(false)
            })?;
            children.push(count);
        }
        Ok(true)
    })
    .map_err(|e| anyhow!("its footer is damaged ({e})"))?;
    let elements = children.len() as i64;
    for (i, count) in children.iter().enumerate() {
        let after = elements - i as i64 - 1;
        match *count {
            Some(n) if n < 0 || n > after => bail!(
                "its footer is damaged (schema element {i} claims {n} children; {after} \
                 elements follow it)"
            ),
            _ => {}
        }
    }
    Ok(Footer { data_end })
}

/// Checks the footer's row counts: the file's is the sum of its row
/// groups', none negative.
pub(crate) fn check_rows(meta: &ParquetMetaData) -> Result<()> {
    let mut sum = 0i64;
    for (g, rg) in meta.row_groups().iter().enumerate() {
        if rg.num_rows() < 0 {
            bail!(
                "its footer is damaged (row group {g} claims {} rows)",
                rg.num_rows()
            );
        }
        sum = sum.saturating_add(rg.num_rows());
    }
    let claimed = meta.file_metadata().num_rows();
    if claimed != sum {
        bail!(
            "its footer claims {claimed} rows, but its row groups claim {sum}: the file is \
             damaged"
        );
    }
    Ok(())
}

/// What a walk of one column chunk's page headers found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pages {
    /// The rows its data pages hold (`None` for a repeated column, whose
    /// pages count values, not rows).
    pub rows: Option<u64>,
}

/// Checks the column chunks of `leaves` (leaf column indices) in row group
/// `group`: each chunk between the magic and the footer, each page header
/// whole and within its chunk, and the rows each flat column's pages hold
/// equal to the row group's claim.
pub(crate) fn check_row_group(
    file: &File,
    footer: Footer,
    meta: &ParquetMetaData,
    group: usize,
    leaves: &[usize],
) -> Result<()> {
    let rg = meta.row_group(group);
    for &leaf in leaves {
        let column = rg.column(leaf);
        let path = column.column_path().string();
        let at = || format!("row group {group}, column {path}");
        let pages = check_chunk(file, footer, meta, group, leaf)
            .map_err(|e| anyhow!("{}: {e}: the file is damaged", at()))?;
        if let Some(rows) = pages.rows
            && rows != rg.num_rows() as u64
        {
            bail!(
                "{}: the row group claims {} rows, but the column's pages hold {rows}: the \
                 file is damaged",
                at(),
                rg.num_rows()
            );
        }
    }
    Ok(())
}

/// Walks the page headers of one column chunk.
fn check_chunk(
    file: &File,
    footer: Footer,
    meta: &ParquetMetaData,
    group: usize,
    leaf: usize,
) -> Result<Pages> {
    let column = meta.row_group(group).column(leaf);
    if column.file_path().is_some_and(|p| !p.is_empty()) {
        bail!("its data is in another file, which is not read");
    }
    let descr = meta.file_metadata().schema_descr().column(leaf);
    let flat = descr.max_rep_level() == 0;
    let start = column
        .dictionary_page_offset()
        .unwrap_or(column.data_page_offset());
    let size = column.compressed_size();
    if size == 0 {
        // No pages (pyarrow's empty row group writes offset 0 and size 0):
        // nothing is read, and the row group must claim no rows.
        return Ok(Pages {
            rows: flat.then_some(0),
        });
    }
    if start < 4 || size < 0 || (start as u64).saturating_add(size as u64) > footer.data_end {
        bail!(
            "its chunk claims bytes {start} to {start} + {size}, outside the file's data (4 \
             to {})",
            footer.data_end
        );
    }
    // The fewest bytes a dictionary value takes, PLAIN-encoded: a bound on
    // the values a dictionary page of a given size can hold.
    let value_bits: u64 = match descr.physical_type() {
        PhysicalType::BOOLEAN => 1,
        PhysicalType::INT32 | PhysicalType::FLOAT | PhysicalType::BYTE_ARRAY => 32,
        PhysicalType::INT64 | PhysicalType::DOUBLE => 64,
        PhysicalType::INT96 => 96,
        PhysicalType::FIXED_LEN_BYTE_ARRAY => 8 * descr.type_length().max(1) as u64,
    };
    let (mut pos, end) = (start as u64, start as u64 + size as u64);
    let mut rows = 0u64;
    let mut delta_lengths = false;
    let mut window = vec![0u8; FIRST_READ];
    while pos < end {
        let header = loop {
            let n = window.len().min((end - pos) as usize);
            read_at(file, pos, &mut window[..n])?;
            match page_header(&window[..n]) {
                Ok(h) => break h,
                Err(ThriftError::Truncated) if n == window.len() && n < MAX_PAGE_HEADER => {
                    window.resize((2 * n).min(MAX_PAGE_HEADER), 0);
                }
                Err(ThriftError::Truncated) if n == MAX_PAGE_HEADER => {
                    bail!("the page header at byte {pos} is longer than 16 MiB")
                }
                Err(ThriftError::Truncated) => {
                    bail!("the page header at byte {pos} runs past its chunk")
                }
                Err(e) => bail!("the page header at byte {pos} is damaged ({e})"),
            }
        };
        let at = |what: String| anyhow!("the page at byte {pos} {what}");
        let (Some(page_type), Some(raw), Some(packed)) =
            (header.page_type, header.uncompressed, header.compressed)
        else {
            return Err(at("lacks its type or sizes".into()));
        };
        if raw < 0 || packed < 0 {
            return Err(at(format!("claims sizes {raw} and {packed}")));
        }
        let next = pos + header.len as u64 + packed as u64;
        if next > end {
            return Err(at(format!(
                "claims {packed} bytes, past its chunk's end at byte {end}"
            )));
        }
        let values = |v: Option<i64>| {
            v.filter(|&v| v >= 0)
                .ok_or_else(|| at("lacks a count of its values, or has a negative one".into()))
        };
        match page_type {
            // DATA_PAGE
            0 => {
                let n = values(header.data_values)?;
                rows += n as u64;
                delta_lengths |= matches!(header.encoding, Some(DELTA_LENGTH | DELTA_STRINGS));
            }
            // DICTIONARY_PAGE
            2 => {
                let n = values(header.dictionary_values)? as u64;
                if n.saturating_mul(value_bits) > 8 * raw as u64 {
                    return Err(at(format!("claims {n} dictionary values in {raw} bytes")));
                }
            }
            // DATA_PAGE_V2
            3 => {
                let v2 = header.v2.ok_or_else(|| at("lacks its header".into()))?;
                let levels = v2.definition_bytes.saturating_add(v2.repetition_bytes);
                if v2.values < 0
                    || v2.rows < 0
                    || v2.nulls < 0
                    || v2.nulls > v2.values
                    || v2.definition_bytes < 0
                    || v2.repetition_bytes < 0
                    || levels > raw.min(packed)
                {
                    return Err(at(format!(
                        "claims {} values, {} nulls, {} rows and {levels} bytes of levels in \
                         {packed} bytes",
                        v2.values, v2.nulls, v2.rows
                    )));
                }
                rows += v2.rows as u64;
                delta_lengths |= matches!(header.encoding, Some(DELTA_LENGTH | DELTA_STRINGS));
            }
            // INDEX_PAGE, and types newer than this reader: skipped, as the
            // decoder skips them.
            _ => {}
        }
        pos = next;
    }
    if delta_lengths {
        check_delta_lengths(file, meta, group, leaf)?;
    }
    Ok(Pages {
        rows: flat.then_some(rows),
    })
}

/// The fields of a `PageHeader` that are checked.
#[derive(Debug, Default)]
struct PageHeader {
    /// The header's length in bytes.
    len: usize,
    page_type: Option<i64>,
    uncompressed: Option<i64>,
    compressed: Option<i64>,
    /// `DataPageHeader.num_values`.
    data_values: Option<i64>,
    /// The data page's encoding (v1 or v2).
    encoding: Option<i64>,
    /// `DictionaryPageHeader.num_values`.
    dictionary_values: Option<i64>,
    v2: Option<V2>,
}

/// The fields of a `DataPageHeaderV2` that are checked.
#[derive(Debug, Default, Clone, Copy)]
struct V2 {
    values: i64,
    nulls: i64,
    rows: i64,
    definition_bytes: i64,
    repetition_bytes: i64,
}

/// Parses a `PageHeader` at the start of `bytes`.
fn page_header(bytes: &[u8]) -> Result<PageHeader, ThriftError> {
    let mut h = PageHeader::default();
    let mut r = Reader::new(bytes);
    r.read_struct(0, |r, id, t| {
        match (id, t) {
            (1, _) if t != ty::STRUCT => h.page_type = Some(r.int(t)?),
            (2, _) if t != ty::STRUCT => h.uncompressed = Some(r.int(t)?),
            (3, _) if t != ty::STRUCT => h.compressed = Some(r.int(t)?),
            (5, ty::STRUCT) => r.read_struct(1, |r, id, t| {
                match id {
                    1 => h.data_values = Some(r.int(t)?),
                    2 => h.encoding = Some(r.int(t)?),
                    _ => return Ok(false),
                }
                Ok(true)
            })?,
            (7, ty::STRUCT) => r.read_struct(1, |r, id, t| {
                if id == 1 {
                    h.dictionary_values = Some(r.int(t)?);
                    return Ok(true);
                }
                Ok(false)
            })?,
            (8, ty::STRUCT) => {
                let mut v2 = V2::default();
                r.read_struct(1, |r, id, t| {
                    let slot = match id {
                        1 => &mut v2.values,
                        2 => &mut v2.nulls,
                        3 => &mut v2.rows,
                        4 => {
                            h.encoding = Some(r.int(t)?);
                            return Ok(true);
                        }
                        5 => &mut v2.definition_bytes,
                        6 => &mut v2.repetition_bytes,
                        _ => return Ok(false),
                    };
                    *slot = r.int(t)?;
                    Ok(true)
                })?;
                h.v2 = Some(v2);
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    h.len = r.position();
    Ok(h)
}

/// Parquet's `DELTA_LENGTH_BYTE_ARRAY` encoding id.
const DELTA_LENGTH: i64 = 6;
/// Parquet's `DELTA_BYTE_ARRAY` encoding id.
const DELTA_STRINGS: i64 = 7;

/// Checks the value counts in the delta-encoded lengths of one column
/// chunk's string pages: the decoder allocates a length for each value
/// the encoding's header counts before it decodes one, so a count beyond
/// the page's values is refused here. The pages are read (and
/// decompressed) once more for it: this costs a second decompression of
/// such columns only.
fn check_delta_lengths(
    file: &File,
    meta: &ParquetMetaData,
    group: usize,
    leaf: usize,
) -> Result<()> {
    use parquet::column::page::Page;
    use parquet::file::serialized_reader::SerializedPageReader;

    let rg = meta.row_group(group);
    let descr = meta.file_metadata().schema_descr().column(leaf);
    let pages = SerializedPageReader::new(
        std::sync::Arc::new(file.try_clone()?),
        rg.column(leaf),
        rg.num_rows() as usize,
        None,
    )?;
    for (index, page) in pages.enumerate() {
        let (values, count, encoding) = match page? {
            Page::DataPage {
                buf,
                num_values,
                encoding,
                def_level_encoding,
                rep_level_encoding,
                ..
            } => {
                let levels = [
                    (descr.max_rep_level(), rep_level_encoding),
                    (descr.max_def_level(), def_level_encoding),
                ];
                let mut at = 0usize;
                for (max, encoding) in levels {
                    if max > 0 {
                        at = at.saturating_add(levels_len(
                            &buf[at.min(buf.len())..],
                            max,
                            num_values,
                            encoding,
                        ));
                    }
                }
                (buf.slice(at.min(buf.len())..), num_values, encoding)
            }
            Page::DataPageV2 {
                buf,
                num_values,
                encoding,
                def_levels_byte_len,
                rep_levels_byte_len,
                ..
            } => {
                let at =
                    (def_levels_byte_len as usize + rep_levels_byte_len as usize).min(buf.len());
                (buf.slice(at..), num_values, encoding)
            }
            _ => continue,
        };
        use parquet::basic::Encoding;
        let headers = match encoding {
            Encoding::DELTA_LENGTH_BYTE_ARRAY => 1,
            Encoding::DELTA_BYTE_ARRAY => 2,
            _ => continue,
        };
        // DELTA_BYTE_ARRAY: the prefix lengths, then the suffixes' lengths.
        let mut at = 0;
        for _ in 0..headers {
            at += delta_run(&values[at.min(values.len())..], u64::from(count))
                .map_err(|e| anyhow!("data page {index} {e}"))?;
        }
    }
    Ok(())
}

/// The bytes of a v1 page's levels of maximum `max` (RLE: a 4-byte length
/// before them; the old BIT_PACKED: `values` levels of the bits `max`
/// needs).
fn levels_len(buf: &[u8], max: i16, values: u32, encoding: parquet::basic::Encoding) -> usize {
    // Deprecated for writing, still read.
    #[allow(deprecated)]
    if encoding == parquet::basic::Encoding::BIT_PACKED {
        let bits = 16 - (max as u16).leading_zeros() as usize;
        return (values as usize * bits).div_ceil(8);
    }
    match buf.get(..4) {
        Some(len) => 4 + u32::from_le_bytes(len.try_into().expect("4 bytes")) as usize,
        None => buf.len(),
    }
}

/// Checks the `DELTA_BINARY_PACKED` run at the start of `bytes`: the
/// values its header counts at most `values` (the page's), then its
/// blocks skipped as the decoder reads them (a block's mini blocks past
/// the last value take no bytes); returns where it ends.
fn delta_run(bytes: &[u8], values: u64) -> Result<usize, String> {
    const TRUNCATED: &str = "ends inside its delta-encoded lengths";
    let mut pos = 0usize;
    let varint = |pos: &mut usize| -> Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = *bytes.get(*pos).ok_or(TRUNCATED)?;
            *pos += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err("has a varint longer than 64 bits in its delta-encoded lengths".into())
    };
    let block = varint(&mut pos)?;
    let minis = varint(&mut pos)?;
    let total = varint(&mut pos)?;
    varint(&mut pos)?; // The first value.
    if total > values {
        return Err(format!(
            "holds {values} values, but its delta-encoded lengths count {total}"
        ));
    }
    if block == 0 || minis == 0 || block % minis != 0 || block > 1 << 20 {
        return Err(format!(
            "has delta-encoded lengths in blocks of {block} values in {minis} mini blocks"
        ));
    }
    let per_mini = block / minis;
    let mut left = total.saturating_sub(1);
    while left > 0 {
        varint(&mut pos)?; // The block's smallest delta.
        let widths = bytes
            .get(pos..pos.saturating_add(minis as usize))
            .ok_or(TRUNCATED)?;
        pos += minis as usize;
        for &width in widths {
            if left == 0 {
                break;
            }
            pos = pos.saturating_add((u64::from(width) * per_mini / 8) as usize);
            left = left.saturating_sub(per_mini);
        }
        if pos > bytes.len() {
            return Err(TRUNCATED.into());
        }
    }
    Ok(pos)
}
