//! Arbitrary bytes into every loader: `Header::parse`, `from_bytes`,
//! `read_from` (whole and in short reads), `FilterView::new` and
//! `new_unverified`, and serde (the bytes as a CBOR byte string and as a JSON
//! array of u8). Never a panic; when a loader accepts the bytes, the filter
//! round-trips to the same bytes and every loader agrees. An unverified
//! view that accepts the bytes answers as the filter loaded from them with
//! the payload checksum recomputed (the one check it skips).
//! The same bytes go into the Parquet loaders
//! (`ParquetFilter::from_parquet_bitset`, `from_parquet_bytes`): `Ok`
//! only for inputs they can represent, and then they round-trip.
//!
//! The seed corpus (fuzz/seeds/from_bytes) holds valid filters of every
//! layout and scheme (k up to 11, m not a multiple of 64), so the mutations
//! start from inputs that get past the magic and the version; each input
//! is also checked with both checksums recomputed, so mutated fields reach
//! the field checks rather than stopping at a checksum mismatch.

#![no_main]

#[path = "common.rs"]
mod common;

use std::io::Read;

use lesshash::format::{HEADER_LEN, Header};
use lesshash::{BloomFilter, FilterView};
use libfuzzer_sys::fuzz_target;

/// A reader that hands out at most `max` bytes per call.
struct Trickle<'a> {
    data: &'a [u8],
    max: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.max).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// `data` as one CBOR byte string (major type 2, definite length).
fn cbor_bytes(data: &[u8]) -> Vec<u8> {
    let len = data.len();
    let mut out = Vec::with_capacity(len + 9);
    if len < 24 {
        out.push(0x40 | len as u8);
    } else if len <= 0xff {
        out.extend([0x58, len as u8]);
    } else if len <= 0xffff {
        out.push(0x59);
        out.extend((len as u16).to_be_bytes());
    } else {
        out.push(0x5a);
        out.extend((len as u32).to_be_bytes());
    }
    out.extend_from_slice(data);
    out
}

/// Keys to compare the answers of loaded filters and views.
fn probe_keys() -> impl Iterator<Item = [u8; 8]> {
    (0u64..64).map(u64::to_le_bytes)
}

/// The Parquet split-block loaders: never a panic; an accepted input is
/// the filter's own encoding, and bitset and header+bitset forms agree.
fn parquet(data: &[u8]) {
    use lesshash::internals::parquet::parse_parquet_header;
    use lesshash::parquet::ParquetFilter;
    if let Ok(f) = ParquetFilter::from_parquet_bitset(data) {
        assert_eq!(f.to_parquet_bitset(), data, "bitset does not round-trip");
        assert_eq!(f.num_bytes(), data.len());
        let whole = f.to_parquet_bytes().unwrap();
        let g = ParquetFilter::from_parquet_bytes(&whole).unwrap();
        assert!(g == f, "header + bitset form differs");
        for key in probe_keys() {
            assert_eq!(f.contains(&key[..]), g.contains(&key[..]));
        }
    }
    let header = parse_parquet_header(data);
    if let Ok(f) = ParquetFilter::from_parquet_bytes(data) {
        let header = header.expect("from_parquet_bytes took a header parse rejects");
        assert_eq!(header.header_len + f.num_bytes(), data.len());
        // The header may be encoded differently (field order, varint
        // widths); the bitset must be the input's.
        assert_eq!(f.to_parquet_bitset(), &data[header.header_len..]);
    }
}

fn check(data: &[u8]) {
    parquet(data);
    let header = Header::parse(data);
    let loaded = BloomFilter::from_bytes(data);
    let streamed = BloomFilter::read_from(data);
    let trickled = BloomFilter::read_from(Trickle {
        data,
        max: 1 + usize::from(data.first().copied().unwrap_or(0) % 13),
    });
    let aligned = common::Aligned::new(data);
    let view = FilterView::new(aligned.bytes());
    let unverified = FilterView::new_unverified(aligned.bytes());

    // serde agrees with from_bytes: same verdict, same filter.
    let from_cbor: Result<BloomFilter, _> = ciborium::from_reader(&cbor_bytes(data)[..]);
    let json = serde_json::to_vec(data).unwrap();
    let from_json: Result<BloomFilter, _> = serde_json::from_slice(&json);
    match &loaded {
        Ok(f) => {
            assert!(from_cbor.as_ref().is_ok_and(|g| g == f), "CBOR differs");
            assert!(from_json.as_ref().is_ok_and(|g| g == f), "JSON differs");
        }
        Err(_) => {
            assert!(from_cbor.is_err(), "CBOR accepted what from_bytes rejected");
            assert!(from_json.is_err(), "JSON accepted what from_bytes rejected");
        }
    }

    // Every error names what it rejected.
    for e in [&loaded, &streamed, &trickled]
        .into_iter()
        .filter_map(|r| r.as_ref().err())
    {
        assert!(!e.to_string().is_empty());
    }

    // The streaming reader stops after one filter; short reads change nothing.
    match (&streamed, &trickled) {
        (Ok(a), Ok(b)) => assert!(a == b && a.insert_calls() == b.insert_calls()),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("read_from answers depend on read sizes: {a:?} vs {b:?}"),
    }

    if let Ok(filter) = &loaded {
        // Accepted: the header parsed, the stream and the views agree, and
        // the bytes are the canonical encoding of the filter.
        assert!(header.is_ok(), "from_bytes accepted a header parse rejects");
        assert_eq!(
            filter.to_bytes(),
            data,
            "from_bytes accepted a non-canonical encoding"
        );
        let streamed = streamed
            .as_ref()
            .expect("read_from rejected what from_bytes took");
        assert!(streamed == filter);
        let view = view
            .as_ref()
            .expect("the view rejected what from_bytes took");
        assert!(view.to_filter().unwrap() == *filter);
        for key in probe_keys() {
            assert_eq!(view.contains(&key), filter.contains(&key));
        }
    } else if data.len() >= HEADER_LEN {
        // Rejected whole: the verified view must reject too.
        assert!(view.is_err(), "the view accepted what from_bytes rejected");
    }

    if let Ok(filter) = &streamed {
        // The streaming reader took a prefix: it must be a valid filter on
        // its own.
        let len = filter.serialized_len() as usize;
        let again = BloomFilter::from_bytes(&data[..len]).expect("prefix read_from took");
        assert!(again == *filter);
    }

    if let Ok(view) = &unverified {
        // Unverified views skip only the payload checksum. So the same
        // bytes with that checksum recomputed must load, as the filter the
        // view copies out, and answer every query as the view does.
        let Ok(copy) = view.to_filter() else {
            return; // allocation failure only
        };
        let len = copy.serialized_len() as usize;
        assert!(len <= data.len(), "the view accepted a truncated input");
        let mut fixed = data[..len].to_vec();
        let sum = xxhash_rust::xxh3::xxh3_64(&fixed[..len - 8]);
        fixed[len - 8..].copy_from_slice(&sum.to_le_bytes());
        let loaded = BloomFilter::from_bytes(&fixed)
            .expect("an unverified view accepted what only the payload checksum rejects");
        assert!(loaded == copy, "the unverified view's filter differs");
        assert_eq!(loaded.insert_calls(), copy.insert_calls());
        for key in probe_keys() {
            assert_eq!(view.contains(&key), loaded.contains(&key));
        }
    }
}

/// The input as it is, then with both checksums recomputed (the header's
/// over bytes 0..56, the trailer's over everything before the last 8
/// bytes): a mutated header or payload then reaches the field checks and
/// the loaders' agreement instead of stopping at a checksum mismatch.
fn run(data: &[u8]) {
    check(data);
    if data.len() >= HEADER_LEN + 8 {
        let mut fixed = data.to_vec();
        let header_sum = xxhash_rust::xxh3::xxh3_64(&fixed[..56]);
        fixed[56..64].copy_from_slice(&header_sum.to_le_bytes());
        let end = fixed.len() - 8;
        let sum = xxhash_rust::xxh3::xxh3_64(&fixed[..end]);
        fixed[end..].copy_from_slice(&sum.to_le_bytes());
        check(&fixed);
    }
}

fuzz_target!(|data: &[u8]| run(data));
