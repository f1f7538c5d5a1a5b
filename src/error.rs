//! The crate's error types.
//!
//! Every fallible operation in lesshash returns [`Error`]; a file or byte
//! buffer that does not parse says why in its [`FormatError`] variant, and
//! a name that is not a layout, scheme, kernel or key kind is a
//! [`ParseNameError`]. Each variant's
//! message names the parameter or field at fault, so that a message printed by a
//! pipeline is enough to find the cause without a debugger.

#![forbid(unsafe_code)]

use crate::key_kind::KeyKind;

/// Errors returned by lesshash.
///
/// The enum is `#[non_exhaustive]`: later versions may add variants (for
/// example for new file-format fields) without a breaking change.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A construction parameter is out of range (NaN, zero, negative, too
    /// large, or inconsistent with another parameter).
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter {
        /// The parameter's name as it appears in the API (`fpr`, `bits`, ...).
        name: &'static str,
        /// Why the value was rejected, including the value itself.
        reason: String,
    },

    /// The requested filter is larger than this platform can address or
    /// than the allocator could provide.
    #[error("cannot allocate {bytes} bytes for `{name}`")]
    Allocation {
        /// The parameter that determined the size.
        name: &'static str,
        /// The number of bytes requested.
        bytes: u128,
    },

    /// Two slices passed to one batch call have different lengths.
    #[error("length mismatch: `{name}` has length {got}, expected {expected}")]
    LengthMismatch {
        /// The argument whose length is wrong (usually the output slice).
        name: &'static str,
        /// The length that was required.
        expected: usize,
        /// The length that was passed.
        got: usize,
    },

    /// A pre-hashed insert or query was made on a filter whose scheme needs
    /// the key's bytes (the `Independent` scheme hashes them k times).
    #[error(
        "pre-hashed keys need a two-hash scheme: the `{scheme}` scheme hashes the key's bytes k times"
    )]
    PrehashedUnsupported {
        /// The filter's scheme.
        scheme: &'static str,
    },

    /// Two filters (or sketches) that were to be combined differ in a
    /// parameter that must be equal.
    #[error("incompatible `{parameter}`: {left} vs {right}")]
    Incompatible {
        /// The first parameter found to differ (`layout`, `seed`, `bits`, ...).
        parameter: &'static str,
        /// The value on the left-hand side.
        left: String,
        /// The value on the right-hand side.
        right: String,
    },

    /// A byte slice given to a zero-copy view is not aligned as required.
    #[error(
        "`{field}` must be {align}-byte aligned; its address is {offset} bytes past a multiple"
    )]
    Misaligned {
        /// The argument.
        field: &'static str,
        /// The required alignment.
        align: usize,
        /// The address modulo `align`.
        offset: usize,
    },

    /// Keys of one kind were given to a filter that records another: an
    /// integer and its decimal text are different keys (the integer 7 is
    /// hashed as 8 little-endian bytes, the text "7" as one byte), so such
    /// a query would answer "absent" for every key ([`KeyKind`](crate::KeyKind)).
    #[error(
        "the filter was built from {filter} keys but these keys are {keys}: the integer 7 and the text \"7\" are different keys, so every answer would be \"absent\"; give keys of the filter's kind, or, if the bytes really are the same, query it as a `mixed` filter (`set_key_kind(KeyKind::Mixed)`, `view().with_key_kind(KeyKind::Mixed)`; on the command line `--any-keys`)"
    )]
    KeyKindMismatch {
        /// The kind the filter records.
        filter: KeyKind,
        /// The kind of the keys given.
        keys: KeyKind,
    },

    /// An array of a type that has no key encoding (floats, booleans,
    /// nested types): the type is named.
    #[error("unsupported key type {data_type}: {reason}")]
    UnsupportedKeyType {
        /// The type, as its library prints it (`Float64`, `List(Int64)`).
        data_type: String,
        /// Which types are keys.
        reason: &'static str,
    },

    /// The input is not a valid serialized filter or sketch (or Parquet
    /// Bloom filter header): the [`FormatError`] names the field at fault.
    #[error(transparent)]
    Format(#[from] FormatError),

    /// A path names nothing the operation can use: a directory or a socket
    /// to write or map, a path with no file name. Bindings raise their I/O
    /// exception for it, as for the operating system's own refusals
    /// ([`io_kind`](Error::io_kind)).
    #[error("unusable `path`: {reason}")]
    UnusablePath {
        /// What the path names, and what the operation needs.
        reason: String,
    },

    /// Reading or writing failed.
    #[error("I/O error while {context}: {source}")]
    Io {
        /// What was being done (`reading the payload`, `renaming the temporary file`, ...).
        context: &'static str,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}

/// Why an input is not a valid serialized filter or sketch (docs/format.md),
/// or a valid Parquet Bloom filter header: [`Error::Format`]. Each variant
/// names the field at fault.
///
/// `#[non_exhaustive]`: later versions may add variants for new fields.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// The input does not start with the magic bytes of the type being
    /// loaded: it is not a serialized lesshash filter (or sketch, for
    /// `CountMinSketch`'s loaders), or it was mangled in transfer.
    #[error(
        "bad `magic` bytes {found}: it looks like {looks_like}, not a lesshash file of the type being loaded"
    )]
    BadMagic {
        /// The first bytes of the input, in hex.
        found: String,
        /// What the input looks like, in words
        /// ([`format::looks::looks_like`](crate::format::looks::looks_like)):
        /// "a Parquet file", "text (its first line: ...)".
        looks_like: String,
    },

    /// The format `version` is not one this library reads.
    #[error("unsupported format `version` {found}: this library reads version {supported}")]
    UnsupportedVersion {
        /// The version in the header.
        found: u16,
        /// The newest version this library reads.
        supported: u16,
    },

    /// A header field holds an id this library does not know (`layout`,
    /// `scheme`, `hash`).
    #[error("unknown `{field}` id {id}")]
    UnknownId {
        /// The header field.
        field: &'static str,
        /// The id found.
        id: u64,
    },

    /// A size field disagrees with what the other fields imply, or the input
    /// is longer than the filter it holds.
    #[error("size mismatch in `{field}`: expected {expected}, found {found}")]
    SizeMismatch {
        /// The field (or `input length`).
        field: &'static str,
        /// The size implied by the other fields.
        expected: u64,
        /// The size found.
        found: u64,
    },

    /// A header field is outside the range this library accepts (`k`,
    /// `m`, `block_bits`; a sketch's `width`, `depth`, `copies`,
    /// `conservative`, or `total` below a counter).
    #[error("`{field}` out of range: {reason}")]
    OutOfRange {
        /// The header field.
        field: &'static str,
        /// The value and the accepted range.
        reason: String,
    },

    /// Bits that must be zero are not: reserved header bytes, flags, or the
    /// padding bits after the filter's last bit.
    #[error("`{field}` must be zero")]
    NonZeroPadding {
        /// The field.
        field: &'static str,
    },

    /// A stored checksum does not match the data: the input is corrupt.
    #[error("`{field}` mismatch: stored {stored:#018x}, computed {computed:#018x} (corrupt input)")]
    ChecksumMismatch {
        /// `header_checksum` or `checksum`.
        field: &'static str,
        /// The checksum stored in the input.
        stored: u64,
        /// The checksum of the bytes read.
        computed: u64,
    },

    /// The input ended inside a field.
    #[error(
        "input truncated in `{field}`: needed {needed} bytes, got {got}{empty}",
        empty = if *.got == 0 { " (the input is empty)" } else { "" }
    )]
    Truncated {
        /// The part being read (`header`, `payload`, `checksum`).
        field: &'static str,
        /// Bytes needed up to the end of that part.
        needed: u64,
        /// Bytes available.
        got: u64,
    },

    /// A structure inside the input is malformed: a Thrift field of the
    /// wrong type, a required field missing, a varint too long (Parquet
    /// Bloom filter headers).
    #[error("malformed `{field}`: {reason}")]
    Malformed {
        /// The field or structure.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}

/// A name that none of a type's values has: the error of parsing a
/// [`Layout`](crate::Layout), [`Scheme`](crate::Scheme),
/// [`Kernel`](crate::Kernel) or [`CountMinScheme`](crate::CountMinScheme)
/// from a string (`"blocked".parse::<Layout>()`). Its message lists the
/// valid names, so a command line or a binding can show it as is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} {name:?}: expected one of {}", quoted(.choices))]
pub struct ParseNameError {
    what: &'static str,
    name: String,
    choices: Vec<&'static str>,
}

impl ParseNameError {
    /// What was being parsed (`layout`, `scheme`, `kernel`).
    pub fn what(&self) -> &'static str {
        self.what
    }

    /// The name that matched nothing.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The valid names, in the type's `ALL` order.
    pub fn choices(&self) -> &[&'static str] {
        &self.choices
    }
}

fn quoted(choices: &[&str]) -> String {
    let quoted: Vec<String> = choices.iter().map(|c| format!("'{c}'")).collect();
    quoted.join(", ")
}

/// `Display` (the type's `name()`) and `FromStr` (a `name()` of `ALL`, or
/// one of the `aliases`) for a public enum with `ALL` and `name`, so that
/// the command line and the bindings parse names with the type's own rules.
macro_rules! named_enum {
    ($ty:ty, $what:literal) => {
        $crate::error::named_enum!($ty, $what, aliases = &[]);
    };
    ($ty:ty, $what:literal, aliases = $aliases:expr) => {
        impl core::fmt::Display for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.pad(self.name())
            }
        }

        impl core::str::FromStr for $ty {
            type Err = $crate::error::ParseNameError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                let aliases: &[(&str, $ty)] = $aliases;
                <$ty>::ALL
                    .into_iter()
                    .find(|v| v.name() == s)
                    .or_else(|| aliases.iter().find(|(a, _)| *a == s).map(|&(_, v)| v))
                    .ok_or_else(|| {
                        $crate::error::ParseNameError::new($what, s, <$ty>::ALL.map(|v| v.name()))
                    })
            }
        }
    };
}
pub(crate) use named_enum;

impl ParseNameError {
    pub(crate) fn new(
        what: &'static str,
        name: &str,
        choices: impl Into<Vec<&'static str>>,
    ) -> Self {
        ParseNameError {
            what,
            name: name.to_owned(),
            choices: choices.into(),
        }
    }
}

impl Error {
    /// `Ok` if slice `name` has the `expected` length, else
    /// [`Error::LengthMismatch`].
    pub(crate) fn check_len(name: &'static str, expected: usize, got: usize) -> Result<(), Self> {
        if expected == got {
            Ok(())
        } else {
            Err(Error::LengthMismatch {
                name,
                expected,
                got,
            })
        }
    }

    /// The kind of I/O error this is, for the errors that are the file
    /// system's: the source's kind for [`Error::Io`], and
    /// [`InvalidInput`](std::io::ErrorKind::InvalidInput) for
    /// [`Error::UnusablePath`] (a directory or a socket to write or map, a
    /// path with no file name). `None` for every other error (parameters, sizes,
    /// formats, allocation). Bindings raise their I/O exception for these,
    /// as they would for the operating system's own refusals.
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        match self {
            Error::Io { source, .. } => Some(source.kind()),
            Error::UnusablePath { .. } => Some(std::io::ErrorKind::InvalidInput),
            _ => None,
        }
    }

    /// Shorthand for [`Error::InvalidParameter`].
    pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidParameter {
            name,
            reason: reason.into(),
        }
    }
}

/// The check of [`Error::KeyKindMismatch`], here beside the error it
/// returns (`key_kind` sits below `error` in the module graph).
impl KeyKind {
    /// `Ok` if a filter of kind `filter` answers keys of kind `keys`.
    ///
    /// # Errors
    /// [`Error::KeyKindMismatch`] naming both kinds.
    pub fn check(filter: KeyKind, keys: KeyKind) -> Result<(), Error> {
        if filter.accepts(keys) {
            Ok(())
        } else {
            Err(Error::KeyKindMismatch { filter, keys })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::ErrorKind;

    use super::{Error, FormatError};

    #[test]
    fn io_kind_marks_the_file_systems_errors() {
        let io = Error::Io {
            context: "opening the file",
            source: std::io::Error::from(ErrorKind::NotFound),
        };
        assert_eq!(io.io_kind(), Some(ErrorKind::NotFound));
        // What writing to (or mapping) a directory returns.
        let dir = std::env::temp_dir();
        let write = crate::BloomFilter::with_fpr(10, 0.01)
            .unwrap()
            .write_file(&dir)
            .unwrap_err();
        assert_eq!(write.io_kind(), Some(ErrorKind::InvalidInput), "{write}");
        #[cfg(feature = "mmap")]
        {
            let map = crate::MappedFilter::open(&dir).unwrap_err();
            assert_eq!(map.io_kind(), Some(ErrorKind::InvalidInput), "{map}");
        }
        for other in [
            Error::invalid("fpr", "must be in (0, 1)"),
            Error::invalid("bits", "too large"),
            Error::Allocation {
                name: "bits",
                bytes: 1 << 70,
            },
            Error::LengthMismatch {
                name: "out",
                expected: 1,
                got: 2,
            },
            Error::Format(FormatError::NonZeroPadding { field: "reserved" }),
        ] {
            assert_eq!(other.io_kind(), None, "{other}");
        }
    }
}
