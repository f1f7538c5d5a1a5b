//! What an input's first bytes say it is: a columnar file the command line
//! reads (Parquet, Arrow IPC), a binary format it refuses to cut into lines
//! (a lesshash filter, a compressed file, anything with a NUL byte), or
//! text.

/// How many bytes of an input are looked at: a NUL byte among them makes
/// it binary (as `grep` and `diff` decide).
pub(crate) const SNIFF_LEN: usize = 8 << 10;

/// What an input's first bytes look like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Content {
    /// `PAR1`: a Parquet file.
    Parquet,
    /// `ARROW1`: an Arrow IPC file (Feather v2).
    ArrowFile,
    /// `FF FF FF FF` and a metadata length: an Arrow IPC stream.
    ArrowStream,
    /// A binary format the command line does not read as keys: what it
    /// looks like, for the message.
    Binary(&'static str),
    /// Nothing: an empty input.
    Empty,
    /// Text (no NUL byte, no known magic).
    Text,
}

impl Content {
    /// What `head` (an input's first bytes, up to [`SNIFF_LEN`] or all of
    /// it) looks like.
    pub(crate) fn of(head: &[u8]) -> Content {
        if head.is_empty() {
            return Content::Empty;
        }
        if head.starts_with(b"PAR1") {
            return Content::Parquet;
        }
        if head.starts_with(b"ARROW1") {
            return Content::ArrowFile;
        }
        // The stream format's continuation marker, then the schema
        // message's length (little-endian, positive).
        if head.len() >= 8 && head.starts_with(&[0xff; 4]) {
            let len = i32::from_le_bytes(head[4..8].try_into().expect("4 bytes"));
            if len > 0 {
                return Content::ArrowStream;
            }
        }
        // The library's table of formats (the one its own load errors
        // use): compressed files, archives, lesshash files, NUL bytes.
        if let Some(name) = lesshash::format::looks::known_binary(head) {
            return Content::Binary(name);
        }
        Content::Text
    }

    /// What it looks like, for messages: "it looks like text".
    pub(crate) fn looks(self) -> String {
        let what = match self {
            Content::Parquet => "a Parquet file",
            Content::ArrowFile => "an Arrow IPC file",
            Content::ArrowStream => "an Arrow IPC stream",
            Content::Binary(what) => what,
            Content::Empty => return "it is empty".into(),
            Content::Text => "text",
        };
        format!("it looks like {what}")
    }
}

#[cfg(test)]
mod tests {
    use super::Content;

    #[test]
    fn magics_and_text() {
        assert_eq!(Content::of(b"PAR1\x15\x04"), Content::Parquet);
        assert_eq!(Content::of(b"ARROW1\0\0"), Content::ArrowFile);
        assert_eq!(
            Content::of(b"\xff\xff\xff\xff\x10\x01\0\0rest"),
            Content::ArrowStream
        );
        assert_eq!(Content::of(b""), Content::Empty);
        assert_eq!(Content::of(b"alice\nbob\n"), Content::Text);
        assert_eq!(Content::of("zoë\n".as_bytes()), Content::Text);
        assert!(matches!(Content::of(b"a\0b"), Content::Binary(w) if w.contains("NUL")));
        assert!(matches!(Content::of(b"\x1f\x8b\x08"), Content::Binary(w) if w.contains("gzip")));
        assert!(
            matches!(Content::of(b"\x89LHBF\r\n\x1a\x01"), Content::Binary(w) if w.contains("lesshash filter"))
        );
        // A short text that starts like nothing known.
        assert_eq!(Content::of(b"PA"), Content::Text);
    }
}
