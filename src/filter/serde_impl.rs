//! serde support (feature `serde`): a filter serializes as one byte string
//! holding its v1 binary format (`docs/format.md`), not field by field, so
//! the representation is versioned, checksummed and validated on load
//! exactly as [`BloomFilter::from_bytes`] does, in every serde format.
//!
//! Serializing builds the bytes in memory first (serde's `serialize_bytes`
//! takes one slice); for large filters prefer
//! [`write_to`](BloomFilter::write_to), which streams.

#![forbid(unsafe_code)]

use serde::de::{Error as _, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::filter::BloomFilter;

impl Serialize for BloomFilter {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(&self.to_bytes())
    }
}

impl<'de> Deserialize<'de> for BloomFilter {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `byte_buf`, not `bytes`: the bytes are copied into the filter
        // anyway, and some formats serve `deserialize_bytes` only from a
        // fixed scratch buffer (ciborium 0.2: 4 KiB, so every filter above
        // ~32k bits failed with "invalid type: bytes, expected bytes";
        // found by the ops_vs_hashset fuzz target).
        deserializer.deserialize_byte_buf(FilterVisitor)
    }
}

struct FilterVisitor;

impl<'de> Visitor<'de> for FilterVisitor {
    type Value = BloomFilter;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the bytes of a lesshash filter in the v1 binary format")
    }

    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<BloomFilter, E> {
        BloomFilter::from_bytes(v).map_err(E::custom)
    }

    // Formats without a native byte string (JSON) give a sequence of u8.
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<BloomFilter, A::Error> {
        // The size hint is untrusted: cap the pre-allocation.
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 20));
        while let Some(b) = seq.next_element::<u8>()? {
            bytes.push(b);
        }
        BloomFilter::from_bytes(&bytes).map_err(A::Error::custom)
    }
}
