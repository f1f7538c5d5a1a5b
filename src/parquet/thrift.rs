//! The Thrift compact encoding of Parquet's `BloomFilterHeader`: written
//! for filters lesshash puts into Parquet files, parsed (every field
//! checked, nothing trusted) for filters read from them.

#![forbid(unsafe_code)]

use super::BLOCK_BYTES;
use crate::Error;
use crate::FormatError;

/// The Thrift compact encoding of a `BloomFilterHeader` for a bitset of
/// `num_bytes` bytes: `numBytes`, `algorithm` = BLOCK, `hash` = XXHASH,
/// `compression` = UNCOMPRESSED, in field order, as Parquet writers emit it.
///
/// # Errors
/// [`Error::InvalidParameter`] (`num_bytes`) if it does not fit Thrift's
/// `i32`.
pub fn parquet_header(num_bytes: usize) -> Result<Vec<u8>, Error> {
    let n = i32::try_from(num_bytes).map_err(|_| {
        Error::invalid(
            "num_bytes",
            format!(
                "a Parquet header holds at most {} bytes, got {num_bytes}",
                i32::MAX
            ),
        )
    })?;
    // Field 1, type i32 (5): header byte 0x15, then the zigzag varint.
    let mut out = vec![0x15];
    let mut v = ((n << 1) ^ (n >> 31)) as u32;
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
    // Fields 2, 3, 4: a struct (0x1c, delta 1) holding the union's member 1,
    // an empty struct (0x1c, stop 0x00), then the union's stop.
    for _ in 0..3 {
        out.extend_from_slice(&[0x1c, 0x1c, 0x00, 0x00]);
    }
    out.push(0x00); // the header's stop
    Ok(out)
}

/// A parsed `BloomFilterHeader` (only the split-block algorithm, XXHASH and
/// no compression exist in the format; anything else is an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParquetHeader {
    /// `numBytes`: the bitset's length in bytes.
    pub num_bytes: usize,
    /// The header's own length in bytes: the bitset starts there.
    pub header_len: usize,
}

/// Parses the Thrift compact `BloomFilterHeader` at the start of `bytes`
/// (which may go on past it). Unknown fields are skipped, as Thrift readers
/// do; the four known ones are required and checked.
///
/// # Errors
/// [`FormatError::Truncated`] (`header`) if the input ends inside it;
/// [`FormatError::Malformed`] naming the field (`numBytes`, `algorithm`, `hash`,
/// `compression`, or `header` for the structure) for a wrong type, a missing
/// field or a bad varint; [`FormatError::UnknownId`] for an algorithm, hash or
/// compression that is not BLOCK / XXHASH / UNCOMPRESSED;
/// [`FormatError::OutOfRange`] (`numBytes`) unless it is a positive multiple of
/// 32.
pub fn parse_parquet_header(bytes: &[u8]) -> Result<ParquetHeader, Error> {
    let mut r = Thrift { bytes, pos: 0 };
    let mut num_bytes = None;
    let mut seen = [false; 3];
    let mut last_id = 0i16;
    while let Some((id, ty)) = r.field_header(&mut last_id, "header")? {
        match id {
            1 => {
                if ty != T_I32 {
                    return Err(wrong_type("numBytes", ty));
                }
                let v = r.varint("numBytes")?;
                let v = ((v >> 1) as i64) ^ -((v & 1) as i64);
                num_bytes = Some(v);
            }
            2..=4 => {
                let (field, member) = [
                    ("algorithm", "BLOCK"),
                    ("hash", "XXHASH"),
                    ("compression", "UNCOMPRESSED"),
                ][(id - 2) as usize];
                if ty != T_STRUCT {
                    return Err(wrong_type(field, ty));
                }
                r.known_union(field, member)?;
                seen[(id - 2) as usize] = true;
            }
            _ => r.skip(ty, 0)?,
        }
    }
    let missing = |field| {
        Error::Format(FormatError::Malformed {
            field,
            reason: "required field missing".into(),
        })
    };
    let num_bytes = num_bytes.ok_or_else(|| missing("numBytes"))?;
    for (i, field) in ["algorithm", "hash", "compression"].into_iter().enumerate() {
        if !seen[i] {
            return Err(missing(field));
        }
    }
    if num_bytes <= 0 || num_bytes % BLOCK_BYTES as i64 != 0 || num_bytes > i64::from(i32::MAX) {
        return Err(Error::Format(FormatError::OutOfRange {
            field: "numBytes",
            reason: format!(
                "a split-block bitset is a positive multiple of {BLOCK_BYTES} bytes, got {num_bytes}"
            ),
        }));
    }
    Ok(ParquetHeader {
        num_bytes: num_bytes as usize,
        header_len: r.pos,
    })
}

const T_I32: u8 = 5;
const T_STRUCT: u8 = 12;
/// Nesting limit when skipping unknown fields (the header has depth 3).
const MAX_DEPTH: u32 = 16;

fn wrong_type(field: &'static str, ty: u8) -> Error {
    Error::Format(FormatError::Malformed {
        field,
        reason: format!("unexpected Thrift compact type {ty}"),
    })
}

/// A minimal Thrift compact protocol reader: what a `BloomFilterHeader`
/// needs, plus skipping any field a newer writer may add.
struct Thrift<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Thrift<'_> {
    fn byte(&mut self, field: &'static str) -> Result<u8, Error> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or(Error::Format(FormatError::Truncated {
                field,
                needed: self.pos as u64 + 1,
                got: self.bytes.len() as u64,
            }))?;
        self.pos += 1;
        Ok(b)
    }

    fn take(&mut self, n: u64, field: &'static str) -> Result<(), Error> {
        let end = (self.pos as u64).saturating_add(n);
        if end > self.bytes.len() as u64 {
            return Err(Error::Format(FormatError::Truncated {
                field,
                needed: end,
                got: self.bytes.len() as u64,
            }));
        }
        self.pos = end as usize;
        Ok(())
    }

    /// An unsigned LEB128 varint of at most 10 bytes.
    fn varint(&mut self, field: &'static str) -> Result<u64, Error> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.byte(field)?;
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Error::Format(FormatError::Malformed {
            field,
            reason: "varint longer than 10 bytes".into(),
        }))
    }

    /// The next field's (id, type), or `None` at the struct's stop byte.
    fn field_header(
        &mut self,
        last_id: &mut i16,
        field: &'static str,
    ) -> Result<Option<(i16, u8)>, Error> {
        let b = self.byte(field)?;
        if b == 0 {
            return Ok(None);
        }
        let (delta, ty) = (b >> 4, b & 0x0f);
        let id = if delta == 0 {
            let v = self.varint(field)?;
            ((v >> 1) as i16) ^ -((v & 1) as i16)
        } else {
            last_id.wrapping_add(i16::from(delta))
        };
        *last_id = id;
        Ok(Some((id, ty)))
    }

    /// A union that must hold its member 1 (an empty struct, named
    /// `member`); other members are unknown algorithms, hashes or
    /// compressions.
    fn known_union(&mut self, field: &'static str, member: &str) -> Result<(), Error> {
        let mut last_id = 0i16;
        let mut found = false;
        while let Some((id, ty)) = self.field_header(&mut last_id, field)? {
            if id != 1 {
                return Err(Error::Format(FormatError::UnknownId {
                    field,
                    id: id as u16 as u64,
                }));
            }
            if ty != T_STRUCT {
                return Err(wrong_type(field, ty));
            }
            self.skip(T_STRUCT, 1)?;
            found = true;
        }
        if found {
            Ok(())
        } else {
            Err(Error::Format(FormatError::Malformed {
                field,
                reason: format!("empty union (expected {member})"),
            }))
        }
    }

    /// Skips one value of compact type `ty`.
    fn skip(&mut self, ty: u8, depth: u32) -> Result<(), Error> {
        const F: &str = "header";
        if depth > MAX_DEPTH {
            return Err(Error::Format(FormatError::Malformed {
                field: F,
                reason: format!("nested deeper than {MAX_DEPTH}"),
            }));
        }
        match ty {
            1 | 2 => {}                     // bool, in the type nibble
            3 => self.take(1, F)?,          // i8
            4..=6 => drop(self.varint(F)?), // i16, i32, i64
            7 => self.take(8, F)?,          // double
            8 => {
                // binary / string
                let n = self.varint(F)?;
                self.take(n, F)?;
            }
            9 | 10 => {
                // list, set
                let b = self.byte(F)?;
                let n = match b >> 4 {
                    15 => self.varint(F)?,
                    n => u64::from(n),
                };
                let elem = b & 0x0f;
                for _ in 0..n {
                    if elem == 1 || elem == 2 {
                        self.take(1, F)?; // a bool element is one byte
                    } else {
                        self.skip(elem, depth + 1)?;
                    }
                }
            }
            11 => {
                // map
                let n = self.varint(F)?;
                if n > 0 {
                    let kv = self.byte(F)?;
                    for _ in 0..n {
                        for t in [kv >> 4, kv & 0x0f] {
                            if t == 1 || t == 2 {
                                self.take(1, F)?;
                            } else {
                                self.skip(t, depth + 1)?;
                            }
                        }
                    }
                }
            }
            12 => {
                let mut last_id = 0;
                while let Some((_, t)) = self.field_header(&mut last_id, F)? {
                    self.skip(t, depth + 1)?;
                }
            }
            _ => return Err(wrong_type(F, ty)),
        }
        Ok(())
    }
}
