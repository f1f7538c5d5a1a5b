//! What an input that is not the file expected looks like, in words, for
//! the messages that refuse it ("it looks like a Parquet file"): the
//! command line and Python name the mistake instead of showing hex.

#![forbid(unsafe_code)]

/// Binary formats known by their first bytes, and their names.
const MAGICS: &[(&[u8], &str)] = &[
    (b"\x89LHBF\r\n\x1a", "a lesshash filter file"),
    (b"\x89LHCM\r\n\x1a", "a lesshash Count-Min sketch file"),
    (b"PAR1", "a Parquet file"),
    (b"ARROW1", "an Arrow IPC file"),
    (b"\x1f\x8b", "a gzip-compressed file"),
    (b"\x28\xb5\x2f\xfd", "a Zstandard-compressed file"),
    (b"\xfd7zXZ\x00", "an xz-compressed file"),
    (b"\x04\x22\x4d\x18", "an LZ4-compressed file"),
    (b"PK\x03\x04", "a zip archive"),
    (b"Obj\x01", "an Avro file"),
    (b"SQLite format 3\x00", "an SQLite database"),
];

/// The name of the binary format `head` (an input's first bytes) starts
/// like, if it is one: a known magic, an Arrow IPC stream, bzip2, or
/// anything with a NUL byte (as `grep` decides); `None` for text and for
/// an empty input.
pub fn known_binary(head: &[u8]) -> Option<&'static str> {
    if let Some((_, name)) = MAGICS.iter().find(|(m, _)| head.starts_with(m)) {
        return Some(name);
    }
    // The stream format's continuation marker, then the schema message's
    // length (little-endian, positive).
    if head.len() >= 8 && head.starts_with(&[0xff; 4]) {
        let len = i32::from_le_bytes(head[4..8].try_into().expect("4 bytes"));
        if len > 0 {
            return Some("an Arrow IPC stream");
        }
    }
    // bzip2: `BZh`, the block size digit, the first block's magic.
    if head.len() >= 10 && head.starts_with(b"BZh") && &head[4..10] == b"1AY&SY" {
        return Some("a bzip2-compressed file");
    }
    head.contains(&0)
        .then_some("a binary file of an unknown format (it has NUL bytes)")
}

/// A Spark Bloom filter's header (`lesshash::spark`): version 1 or 2, a
/// plausible k and a positive word count, big-endian.
fn spark_filter(head: &[u8]) -> Option<String> {
    let int = |at: usize| Some(i32::from_be_bytes(head.get(at..at + 4)?.try_into().ok()?));
    let version = int(0)?;
    let words_at = match version {
        1 => 8,
        2 => 12,
        _ => return None,
    };
    let (k, words) = (int(4)?, int(words_at)?);
    ((1..=1024).contains(&k) && words > 0).then(|| {
        format!("a Spark Bloom filter (version {version}, k = {k}, {words} words; lesshash.spark and lesshash::spark read it)")
    })
}

/// What `head` looks like, for a message: a known binary format, "an empty
/// file", or text with its first line quoted (up to 40 characters).
pub fn looks_like(head: &[u8]) -> String {
    if head.is_empty() {
        return "an empty file".into();
    }
    if let Some(spark) = spark_filter(head) {
        return spark;
    }
    if let Some(name) = known_binary(head) {
        return name.into();
    }
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let line = line.trim_end_matches('\r');
    let shown: String = line.chars().take(40).collect();
    let more = if line.chars().count() > 40 { "..." } else { "" };
    format!("text (its first line: {shown:?}{more})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_input_in_words() {
        assert_eq!(looks_like(b""), "an empty file");
        assert_eq!(looks_like(b"PAR1\x15\x04"), "a Parquet file");
        assert_eq!(looks_like(b"ARROW1\0\0"), "an Arrow IPC file");
        assert_eq!(
            looks_like(b"\xff\xff\xff\xff\x10\x01\0\0"),
            "an Arrow IPC stream"
        );
        assert_eq!(looks_like(b"\x1f\x8b\x08\0"), "a gzip-compressed file");
        assert_eq!(
            looks_like(b"\x28\xb5\x2f\xfd\x00"),
            "a Zstandard-compressed file"
        );
        assert_eq!(
            looks_like(b"\x89LHCM\r\n\x1a\x01"),
            "a lesshash Count-Min sketch file"
        );
        assert_eq!(looks_like(b"BZh91AY&SY"), "a bzip2-compressed file");
        assert!(looks_like(b"a\0b").contains("NUL"));
        assert_eq!(
            looks_like(b"user1\nuser2\n"),
            "text (its first line: \"user1\")"
        );
        assert_eq!(
            looks_like(b"id,name\r\n1,a\r\n"),
            "text (its first line: \"id,name\")"
        );
        let long = looks_like(&[b'x'; 100]);
        assert!(long.ends_with("...)") && long.len() < 70, "{long}");
        assert_eq!(
            looks_like(b"\0\0\0\x02\0\0\0\x07\0\0\x30\x39\0\0\0\x18"),
            "a Spark Bloom filter (version 2, k = 7, 24 words; lesshash.spark and lesshash::spark read it)"
        );
        assert!(
            looks_like(b"\0\0\0\x01\0\0\0\x05\0\0\0\x03").contains("Spark Bloom filter (version 1")
        );
        assert!(looks_like(b"\0\0\0\x02\0\0\0\x00\0\0\0\0\0\0\0\x18").contains("NUL"));
        // Short inputs that start like a magic are text.
        assert_eq!(known_binary(b"PA"), None);
    }
}
