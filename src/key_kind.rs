//! What kind of keys built a filter, recorded in its file so that a query
//! with keys of another kind is caught instead of answering "no" to every
//! key.
//!
//! A filter hashes bytes (`Key`), so the same value reaches it as different
//! keys through different encodings: the integer 7 is 8 little-endian
//! bytes, the text "7" is one byte. A filter built from integers and
//! queried with text answers "absent" for everything, which looks exactly
//! like a correct answer. Every interface that knows its keys' type (Arrow
//! arrays, Python, the command line) records the kind when it inserts and
//! checks it when it queries; the generic `insert` of a [`Key`](crate::Key)
//! leaves it as it is, since a key type does not say how it was meant.
//!
//! The kinds, and which queries each accepts: [`KeyKind`].

#![forbid(unsafe_code)]

/// The kind of keys a filter was built from (the file's `key_kind` byte).
///
/// A filter hashes bytes, so the integer 7 (8 little-endian bytes) and the
/// text "7" (one byte) are different keys: a filter built from integers
/// and queried with text would answer "absent" for every key. Interfaces
/// that know their keys' type (Arrow arrays, Python, the command line)
/// record the kind when they insert and check it when they query.
///
/// The kinds and which queries each accepts:
///
/// | filter records | accepts queries of |
/// |---|---|
/// | `Unrecorded` (files written before kinds existed, generic inserts) | every kind |
/// | `Int64` | `Int64` |
/// | `Text` or `Bytes` | `Text`, `Bytes` (text is hashed as its UTF-8 bytes: `"7"` and `b"7"` are one key) |
/// | `Mixed` (keys of both families were inserted) | every kind |
// `KeyKind::check`, which returns the crate's error, is implemented in
// error.rs, so that this module stays below the error type it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum KeyKind {
    /// Not recorded: a filter whose keys came through the generic
    /// [`Key`](crate::Key) calls only, or a file written before kinds were
    /// recorded. Accepts queries of every kind.
    #[default]
    Unrecorded = 0,
    /// 64-bit integers: every integer type widened to 64 bits (signed
    /// types sign-extended, unsigned zero-extended) and hashed as its 8
    /// little-endian bytes: Rust's `i64`/`u64`, Python's `int`, Arrow's
    /// integer and temporal types, the command line's `--keys int`.
    Int64 = 1,
    /// Text, hashed as its UTF-8 bytes.
    Text = 2,
    /// Byte strings, hashed as they are.
    Bytes = 3,
    /// Integers and text or bytes were both inserted. Accepts queries of
    /// every kind (each family's keys are in it).
    Mixed = 4,
}

impl KeyKind {
    /// Every kind, in id order.
    pub const ALL: [KeyKind; 5] = [
        KeyKind::Unrecorded,
        KeyKind::Int64,
        KeyKind::Text,
        KeyKind::Bytes,
        KeyKind::Mixed,
    ];

    /// The kind's name in messages and on the command line: `unrecorded`,
    /// `int64`, `text`, `bytes`, `mixed`.
    pub fn name(self) -> &'static str {
        match self {
            KeyKind::Unrecorded => "unrecorded",
            KeyKind::Int64 => "int64",
            KeyKind::Text => "text",
            KeyKind::Bytes => "bytes",
            KeyKind::Mixed => "mixed",
        }
    }

    /// The kind of a format id (the header's byte 14), if it is one.
    pub fn from_id(id: u8) -> Option<KeyKind> {
        KeyKind::ALL.into_iter().find(|&k| k as u8 == id)
    }

    /// The family a kind hashes as: integers, or byte strings (text is its
    /// UTF-8 bytes); `None` for the kinds that accept everything.
    fn family(self) -> Option<bool> {
        match self {
            KeyKind::Int64 => Some(true),
            KeyKind::Text | KeyKind::Bytes => Some(false),
            KeyKind::Unrecorded | KeyKind::Mixed => None,
        }
    }

    /// The kind a filter records after keys of kind `keys` are inserted
    /// into a filter of this kind: the same kind stays; `Unrecorded` takes
    /// the keys' kind; text and bytes make bytes; integers with text or
    /// bytes make `Mixed`. Also the kind of a union.
    #[must_use]
    pub fn combine(self, keys: KeyKind) -> KeyKind {
        match (self, keys) {
            (a, b) if a == b => a,
            (KeyKind::Unrecorded, b) => b,
            (a, KeyKind::Unrecorded) => a,
            (KeyKind::Mixed, _) | (_, KeyKind::Mixed) => KeyKind::Mixed,
            (a, b) if a.family() == b.family() => KeyKind::Bytes,
            _ => KeyKind::Mixed,
        }
    }

    /// Whether a filter of this kind answers queries with keys of kind
    /// `keys` (the table above).
    pub fn accepts(self, keys: KeyKind) -> bool {
        match (self.family(), keys.family()) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
    }
}

impl std::fmt::Display for KeyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::KeyKind::{self, *};

    #[test]
    fn ids_round_trip_and_are_fixed() {
        for k in KeyKind::ALL {
            assert_eq!(KeyKind::from_id(k as u8), Some(k));
        }
        assert_eq!(
            KeyKind::ALL.map(|k| k as u8),
            [0, 1, 2, 3, 4],
            "the ids are the file format's"
        );
        assert_eq!(KeyKind::from_id(5), None);
    }

    #[test]
    fn combine_and_accepts_follow_the_table() {
        assert_eq!(Unrecorded.combine(Int64), Int64);
        assert_eq!(Int64.combine(Unrecorded), Int64);
        assert_eq!(Text.combine(Text), Text);
        assert_eq!(Text.combine(Bytes), Bytes);
        assert_eq!(Bytes.combine(Text), Bytes);
        assert_eq!(Int64.combine(Text), Mixed);
        assert_eq!(Bytes.combine(Int64), Mixed);
        assert_eq!(Mixed.combine(Int64), Mixed);
        for a in KeyKind::ALL {
            for b in KeyKind::ALL {
                assert_eq!(a.combine(b), b.combine(a), "{a} {b}");
                // A filter accepts whatever was inserted into it.
                assert!(a.combine(b).accepts(b), "{a} + {b}");
            }
        }
        assert!(!Int64.accepts(Text) && !Int64.accepts(Bytes));
        assert!(!Text.accepts(Int64) && !Bytes.accepts(Int64));
        assert!(Text.accepts(Bytes) && Bytes.accepts(Text));
        assert!(Unrecorded.accepts(Int64) && Mixed.accepts(Text));
        assert!(KeyKind::check(Int64, Text).is_err());
        assert!(KeyKind::check(Text, Bytes).is_ok());
    }
}
