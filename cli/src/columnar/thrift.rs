//! A reader of Thrift's compact protocol, for checking the Parquet
//! structures the decoder would otherwise take on trust (the footer, page
//! headers). It reads what it is asked for and skips the rest, and every
//! length it meets is checked against the bytes that are there, so a
//! walk of a whole structure proves that its lists and strings exist.

use std::fmt;

/// Thrift's compact type ids.
pub(crate) mod ty {
    pub const TRUE: u8 = 1;
    pub const FALSE: u8 = 2;
    pub const I8: u8 = 3;
    pub const I16: u8 = 4;
    pub const I32: u8 = 5;
    pub const I64: u8 = 6;
    pub const DOUBLE: u8 = 7;
    pub const BINARY: u8 = 8;
    pub const LIST: u8 = 9;
    pub const SET: u8 = 10;
    pub const MAP: u8 = 11;
    pub const STRUCT: u8 = 12;
    pub const UUID: u8 = 13;
}

/// Nesting deeper than this is refused: Parquet's own structures nest a
/// handful of levels, and a walk must not recurse as deep as a file says.
const MAX_DEPTH: usize = 32;

/// Why a Thrift structure could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ThriftError {
    /// The bytes ended inside it.
    Truncated,
    /// Not Thrift's compact encoding (the text says where).
    Invalid(String),
}

impl fmt::Display for ThriftError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThriftError::Truncated => f.write_str("it ends inside a Thrift structure"),
            ThriftError::Invalid(what) => write!(f, "invalid Thrift: {what}"),
        }
    }
}

/// The result of a read.
pub(crate) type ThriftResult<T> = Result<T, ThriftError>;

/// A cursor over compact-protocol bytes.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader of `buf` from its start.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// The bytes read so far.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    fn byte(&mut self) -> ThriftResult<u8> {
        let b = *self.buf.get(self.pos).ok_or(ThriftError::Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    fn take(&mut self, n: u64) -> ThriftResult<&'a [u8]> {
        let left = (self.buf.len() - self.pos) as u64;
        if n > left {
            return Err(ThriftError::Truncated);
        }
        let out = &self.buf[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(out)
    }

    fn varint(&mut self) -> ThriftResult<u64> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err(ThriftError::Invalid("a varint longer than 64 bits".into()));
            }
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(ThriftError::Invalid("a varint longer than 64 bits".into()))
    }

    fn zigzag(&mut self) -> ThriftResult<i64> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    /// An integer field's value of type `t` (i8 to i64).
    pub(crate) fn int(&mut self, t: u8) -> ThriftResult<i64> {
        match t {
            ty::I8 => Ok(i64::from(self.byte()? as i8)),
            ty::I16 | ty::I32 | ty::I64 => self.zigzag(),
            other => Err(ThriftError::Invalid(format!(
                "type {other} where an integer is expected"
            ))),
        }
    }

    /// A list's (or set's) header: its element type and length, the length
    /// checked against the bytes left (every element takes at least one
    /// byte, a bool's included).
    pub(crate) fn list_header(&mut self) -> ThriftResult<(u8, u64)> {
        let b = self.byte()?;
        let elem = b & 0x0f;
        let len = match b >> 4 {
            15 => self.varint()?,
            n => u64::from(n),
        };
        if len > (self.buf.len() - self.pos) as u64 {
            return Err(ThriftError::Truncated);
        }
        Ok((elem, len))
    }

    /// Reads a struct's fields, calling `field(reader, id, type)` for each:
    /// it reads the value and returns true, or returns false to have it
    /// skipped.
    pub(crate) fn read_struct(
        &mut self,
        depth: usize,
        mut field: impl FnMut(&mut Self, i16, u8) -> ThriftResult<bool>,
    ) -> ThriftResult<()> {
        if depth > MAX_DEPTH {
            return Err(ThriftError::Invalid(format!(
                "nested more than {MAX_DEPTH} levels deep"
            )));
        }
        let mut last = 0i16;
        loop {
            let b = self.byte()?;
            let t = b & 0x0f;
            if t == 0 {
                return Ok(());
            }
            let id = match b >> 4 {
                0 => i16::try_from(self.zigzag()?)
                    .map_err(|_| ThriftError::Invalid("a field id beyond i16".into()))?,
                delta => last.wrapping_add(i16::from(delta)),
            };
            last = id;
            if !field(self, id, t)? {
                self.skip(t, depth + 1)?;
            }
        }
    }

    /// Skips a value of type `t`, checking every length in it.
    pub(crate) fn skip(&mut self, t: u8, depth: usize) -> ThriftResult<()> {
        if depth > MAX_DEPTH {
            return Err(ThriftError::Invalid(format!(
                "nested more than {MAX_DEPTH} levels deep"
            )));
        }
        match t {
            ty::TRUE | ty::FALSE => Ok(()),
            ty::I8 => self.byte().map(drop),
            ty::I16 | ty::I32 | ty::I64 => self.varint().map(drop),
            ty::DOUBLE => self.take(8).map(drop),
            ty::UUID => self.take(16).map(drop),
            ty::BINARY => {
                let n = self.varint()?;
                self.take(n).map(drop)
            }
            ty::LIST | ty::SET => {
                let (elem, len) = self.list_header()?;
                for _ in 0..len {
                    match elem {
                        // A bool in a list is a byte of its own.
                        ty::TRUE | ty::FALSE => self.byte().map(drop)?,
                        _ => self.skip(elem, depth + 1)?,
                    }
                }
                Ok(())
            }
            ty::MAP => {
                let len = self.varint()?;
                if len == 0 {
                    return Ok(());
                }
                if len > (self.buf.len() - self.pos) as u64 {
                    return Err(ThriftError::Truncated);
                }
                let kv = self.byte()?;
                for _ in 0..len {
                    self.skip(kv >> 4, depth + 1)?;
                    self.skip(kv & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            ty::STRUCT => self.read_struct(depth, |_, _, _| Ok(false)),
            other => Err(ThriftError::Invalid(format!("unknown type {other}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A struct { 1: i32 = -3, 2: list<i64> [1, 2], 3: binary "ab",
    /// 4: struct { 1: bool true } }, as Parquet's writers encode it.
    const SAMPLE: &[u8] = &[
        0x15, 0x05, // field 1, i32, zigzag(-3) = 5
        0x19, 0x26, 0x02, 0x04, // field 2, list of 2 i64: 1, 2
        0x18, 0x02, b'a', b'b', // field 3, binary of 2
        0x1c, 0x11, 0x00, // field 4, struct { field 1: true }
        0x00,
    ];

    #[test]
    fn reads_and_skips_every_field() {
        let mut r = Reader::new(SAMPLE);
        let mut seen = Vec::new();
        r.read_struct(0, |r, id, t| {
            seen.push(id);
            if id == 1 {
                assert_eq!(r.int(t)?, -3);
                return Ok(true);
            }
            Ok(false)
        })
        .unwrap();
        assert_eq!(seen, [1, 2, 3, 4]);
        assert_eq!(r.position(), SAMPLE.len());
    }

    #[test]
    fn every_cut_is_an_error_and_lengths_are_checked() {
        for cut in 0..SAMPLE.len() {
            let mut r = Reader::new(&SAMPLE[..cut]);
            assert_eq!(
                r.skip(ty::STRUCT, 0),
                Err(ThriftError::Truncated),
                "cut {cut}"
            );
        }
        // A list claiming 2^31 elements in a few bytes.
        let mut r = Reader::new(&[0x19, 0xf6, 0x80, 0x80, 0x80, 0x80, 0x08, 0x00]);
        assert_eq!(r.skip(ty::STRUCT, 0), Err(ThriftError::Truncated));
        // Structs nested past the limit.
        let deep = [0x1c; 100];
        let mut r = Reader::new(&deep);
        assert!(matches!(
            r.skip(ty::STRUCT, 0),
            Err(ThriftError::Invalid(_))
        ));
    }
}
