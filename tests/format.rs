//! The v1 binary format: byte-level encoder expectations, round trips over
//! every layout x scheme x size and every load path, corruption (every
//! single-byte flip, every truncation, appended bytes, random mutations),
//! one distinct error per header field, golden files, atomic file writes.

mod common;

use lesshash::FormatError;
use std::io::Read;

use lesshash::format::{HEADER_LEN, Header, MAGIC};
use lesshash::internals::format::scheme_id;
use lesshash::{
    Block, BloomFilter, DEFAULT_SEED, Error, FilterView, HashFamily, Layout, Scheme, hash_key,
};
use proptest::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

/// A 64-byte-aligned copy of `bytes` (as a memory map would be).
struct Aligned {
    blocks: Vec<Block>,
    len: usize,
}

impl Aligned {
    fn new(bytes: &[u8]) -> Self {
        let mut blocks = vec![Block([0; 8]); bytes.len().div_ceil(64) + 1];
        bytemuck::cast_slice_mut::<Block, u8>(&mut blocks)[..bytes.len()].copy_from_slice(bytes);
        Self {
            blocks,
            len: bytes.len(),
        }
    }
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<Block, u8>(&self.blocks)[..self.len]
    }
    /// The same bytes starting `shift` bytes past the alignment.
    fn shifted(bytes: &[u8], shift: usize) -> (Vec<Block>, usize) {
        let mut blocks = vec![Block([0; 8]); (bytes.len() + shift).div_ceil(64)];
        bytemuck::cast_slice_mut::<Block, u8>(&mut blocks)[shift..shift + bytes.len()]
            .copy_from_slice(bytes);
        (blocks, shift)
    }
}

fn filter(layout: Layout, scheme: Scheme, m: u64, k: u32, n: u64, seed: u64) -> BloomFilter {
    let mut f = common::build(layout, scheme, m, k, seed);
    for i in 0..n {
        f.insert(&format!("key-{i}"));
    }
    f
}

/// Answers for keys in and out of the set (4n probes, at least 64).
fn answers(query: impl Fn(&str) -> bool, n: u64) -> Vec<bool> {
    (0..(4 * n).max(64))
        .map(|i| query(&format!("key-{i}")))
        .collect()
}

/// Every way to load a serialized filter must agree.
fn load_all_ways(bytes: &[u8]) -> Vec<Result<BloomFilter, Error>> {
    let aligned = Aligned::new(bytes);
    vec![
        BloomFilter::from_bytes(bytes),
        BloomFilter::read_from(bytes),
        FilterView::new(aligned.bytes()).and_then(|v| v.to_filter()),
    ]
}

fn all_configs() -> Vec<(Layout, Scheme)> {
    Layout::ALL
        .into_iter()
        .flat_map(|l| Scheme::ALL.into_iter().map(move |s| (l, s)))
        .collect()
}

// ---------------------------------------------------------------- encoder --

#[test]
fn encoder_writes_the_documented_bytes() {
    let seed = 0x0102_0304_0506_0708;
    let mut f = BloomFilter::builder()
        .layout(Layout::Partitioned)
        .scheme(Scheme::DoubleHashing)
        .bits(1011) // 3 prime sub-arrays of 337 bits: kept as given
        .hashes(3)
        .seed(seed)
        .build()
        .unwrap();
    f.insert("a");
    f.insert("b");
    let bytes = f.to_bytes();
    assert_eq!(bytes.len() as u64, f.serialized_len());
    // m = 1011 -> 16 words -> 128 payload bytes.
    assert_eq!(bytes.len(), 64 + 128 + 8);

    #[rustfmt::skip]
    let expected_header_without_checksum: [u8; 56] = [
        0x89, b'L', b'H', b'B', b'F', b'\r', b'\n', 0x1a, // magic
        1, 0,                                             // version 1
        2,                                                // layout: partitioned
        2,                                                // scheme: double hashing
        1,                                                // hash: XXH3
        0,                                                // flags
        0,                                                // key_kind: unrecorded
        0,                                                // reserved
        3, 0, 0, 0,                                       // k = 3
        0, 0, 0, 0,                                       // block_bits = 0 (flat)
        8, 7, 6, 5, 4, 3, 2, 1,                           // seed, little-endian
        0xf3, 0x03, 0, 0, 0, 0, 0, 0,                     // m = 1011
        2, 0, 0, 0, 0, 0, 0, 0,                           // insert_calls = 2
        128, 0, 0, 0, 0, 0, 0, 0,                         // payload_len = 128
    ];
    assert_eq!(bytes[..56], expected_header_without_checksum);
    assert_eq!(bytes[56..64], xxh3_64(&bytes[..56]).to_le_bytes());
    assert_eq!(bytes[..8], MAGIC);

    // Payload: bit p is bit p % 8 of byte 64 + p / 8, nothing else set.
    let mut expected_payload = [0u8; 128];
    for key in ["a", "b"] {
        for p in f.positions(key) {
            expected_payload[(p / 8) as usize] |= 1 << (p % 8);
        }
    }
    assert_eq!(bytes[64..192], expected_payload);
    assert_eq!(bytes[192..], xxh3_64(&bytes[..192]).to_le_bytes());

    // The header parses back to the same fields.
    let h = Header::parse(&bytes).unwrap();
    assert_eq!(h, Header::of(&f));
    assert_eq!(
        (
            h.layout,
            h.scheme,
            h.seed,
            h.num_bits,
            h.num_hashes,
            h.block_bits,
            h.insert_calls
        ),
        (
            Layout::Partitioned,
            Scheme::DoubleHashing,
            seed,
            1011,
            3,
            0,
            2
        )
    );
    assert_eq!(h.payload_len(), 128);
}

#[test]
fn scheme_and_layout_ids_are_the_documented_ones() {
    use lesshash::Enhancement::{Cube, Square};
    assert_eq!(scheme_id(Scheme::Independent), 1);
    assert_eq!(scheme_id(Scheme::DoubleHashing), 2);
    assert_eq!(scheme_id(Scheme::EnhancedDoubleHashing(Square)), 3);
    assert_eq!(scheme_id(Scheme::EnhancedDoubleHashing(Cube)), 4);
    assert_eq!(Layout::Classic as u8, 1);
    assert_eq!(Layout::Partitioned as u8, 2);
    assert_eq!(Layout::Blocked as u8, 3);
    assert_eq!(Layout::SplitBlock as u8, 4);
}

// ------------------------------------------------------------ round trips --

#[test]
fn round_trip_every_layout_scheme_and_size() {
    for (layout, scheme) in all_configs() {
        for (m, k) in [
            (1u64, 1u32),
            (63, 1),
            (64, 2),
            (65, 5),
            (1000, 4),
            (4103, 7),
            (100_000, 7),
        ] {
            let m = if layout == Layout::Partitioned {
                (m / u64::from(k)).max(1) * u64::from(k)
            } else {
                m
            };
            let n = m / 10 + 1;
            let f = filter(layout, scheme, m, k, n, m ^ 0xabc);
            let expected = answers(|key| f.contains(key), n);
            let bytes = f.to_bytes();
            let ctx = format!("{layout:?} {scheme:?} m={m} k={k}");
            for (way, loaded) in load_all_ways(&bytes).into_iter().enumerate() {
                let g = loaded.unwrap_or_else(|e| panic!("{ctx} way {way}: {e}"));
                assert_eq!(g, f, "{ctx} way {way}");
                assert_eq!(g.insert_calls(), n, "{ctx} way {way}");
                assert_eq!(g.to_bytes(), bytes, "{ctx} way {way}");
                assert_eq!(
                    answers(|key| g.contains(key), n),
                    expected,
                    "{ctx} way {way}"
                );
            }
            let aligned = Aligned::new(&bytes);
            // Oracles that do not go through a view: the payload's popcount
            // from the bytes, the keyed one-key answers, and the rate of the
            // filter's bytes read as little-endian words.
            let payload = &bytes[64..bytes.len() - 8];
            let ones: u64 = payload.iter().map(|b| u64::from(b.count_ones())).sum();
            let fpr_of_bytes = FilterView::new(aligned.bytes()).unwrap().expected_fpr();
            // The owned filter's own view (native words) and views of its
            // bytes (little-endian words) are one type and answer alike.
            for view in [
                f.view(),
                FilterView::new(aligned.bytes()).unwrap(),
                FilterView::new_unverified(aligned.bytes()).unwrap(),
            ] {
                assert_eq!(answers(|key| view.contains(key), n), expected, "{ctx} view");
                assert_eq!(view.insert_calls(), n);
                assert_eq!(view.header(), &Header::of(&f), "{ctx} view");
                assert_eq!(view.to_filter().unwrap(), f, "{ctx} view");
                assert_eq!(view.count_ones(), ones, "{ctx} view");
                assert_eq!(view.expected_fpr(), fpr_of_bytes, "{ctx} view");
                let keys: Vec<String> = (0..2 * n).map(|i| format!("key-{i}")).collect();
                let mut batch = vec![false; keys.len()];
                view.contains_batch(&keys, &mut batch).unwrap();
                let single: Vec<bool> = keys.iter().map(|k| f.contains(k.as_str())).collect();
                assert_eq!(batch, single, "{ctx} view batch");
                let mut bitmap = vec![0u64; keys.len().div_ceil(64)];
                for (i, _) in single.iter().enumerate().filter(|(_, hit)| **hit) {
                    bitmap[i / 64] |= 1 << (i % 64);
                }
                assert_eq!(
                    view.contains_batch_bitmap(&keys),
                    bitmap,
                    "{ctx} view bitmap"
                );
                assert_eq!(
                    (
                        view.layout(),
                        view.scheme(),
                        view.num_bits(),
                        view.num_hashes()
                    ),
                    (layout, scheme, f.num_bits(), k)
                );
                if scheme.is_two_hash() {
                    let h = lesshash::hash_key("key-0", view.seed());
                    let by_hash = view.prehashed().unwrap();
                    assert!(by_hash.contains(h));
                    // Every key's one-key and batch pre-hashed answers are
                    // the keyed one-key answers.
                    let hashes: Vec<u128> = keys
                        .iter()
                        .map(|k| lesshash::hash_key(k.as_str(), view.seed()))
                        .collect();
                    let one: Vec<bool> = hashes.iter().map(|&h| by_hash.contains(h)).collect();
                    assert_eq!(one, single, "{ctx} view pre-hashed");
                    let mut batch = vec![false; hashes.len()];
                    by_hash.contains_batch(&hashes, &mut batch).unwrap();
                    assert_eq!(batch, single, "{ctx} view pre-hashed batch");
                    let miss = lesshash::hash_key("not-a-key", view.seed());
                    assert_eq!(by_hash.contains(miss), f.contains("not-a-key"));
                } else {
                    assert!(view.prehashed().is_err());
                }
            }
        }
    }
}

#[test]
fn read_from_leaves_the_stream_after_the_filter() {
    let a = filter(Layout::Classic, Scheme::default(), 1000, 3, 50, 1);
    let b = filter(Layout::Partitioned, Scheme::DoubleHashing, 999, 3, 70, 2);
    let mut stream = a.to_bytes();
    b.write_to(&mut stream).unwrap();
    stream.extend_from_slice(b"tail");
    let mut r = &stream[..];
    assert_eq!(BloomFilter::read_from(&mut r).unwrap(), a);
    assert_eq!(BloomFilter::read_from(&mut r).unwrap(), b);
    assert_eq!(r, b"tail");
}

/// A reader that returns at most `step` bytes per call (and sometimes
/// `Interrupted`), as sockets and pipes do.
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
    calls: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(7) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        let n = buf.len().min(self.step).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn read_from_a_trickling_stream() {
    let f = filter(Layout::Classic, Scheme::default(), 100_003, 5, 5000, 3);
    let bytes = f.to_bytes();
    for step in [1, 7, 4096, 1 << 20] {
        let g = BloomFilter::read_from(Trickle {
            data: &bytes,
            step,
            calls: 0,
        })
        .unwrap();
        assert_eq!(g, f, "step {step}");
    }
}

/// Payloads above EAGER_LIMIT take the growing path of `read_from`; the
/// result must equal the eager paths' bit for bit.
#[test]
fn large_payload_grows_and_round_trips() {
    let m = (lesshash::internals::format::EAGER_LIMIT as u64 * 8) * 2 + 12_345;
    let f = filter(Layout::Classic, Scheme::default(), m, 3, 20_000, 4);
    let bytes = f.to_bytes();
    let g = BloomFilter::read_from(Trickle {
        data: &bytes,
        step: 3 << 20,
        calls: 0,
    })
    .unwrap();
    assert!(g == f);
    let mut truncated = Trickle {
        data: &bytes[..bytes.len() / 2],
        step: 1 << 20,
        calls: 0,
    };
    let err = BloomFilter::read_from(&mut truncated).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Format(FormatError::Truncated {
                field: "payload",
                ..
            })
        ),
        "{err}"
    );
}

// ------------------------------------------------------------- corruption --

/// A small filter of every layout x scheme at k = 3 and at k = 11 (probes
/// past the eighth salt; m = 1001 is a multiple of neither 64 nor 512).
fn small_filters() -> Vec<BloomFilter> {
    all_configs()
        .into_iter()
        .flat_map(|(layout, scheme)| {
            [
                filter(layout, scheme, 300, 3, 20, 9),
                filter(layout, scheme, 1001, 11, 30, 5),
            ]
        })
        .collect()
}

/// Every load path rejects `bytes` (never panics, never returns a filter).
fn assert_rejected(bytes: &[u8], ctx: &str) {
    for (way, r) in load_all_ways(bytes).into_iter().enumerate() {
        assert!(r.is_err(), "{ctx}: way {way} accepted corrupt input");
    }
    let aligned = Aligned::new(bytes);
    assert!(
        FilterView::new(aligned.bytes()).is_err(),
        "{ctx}: view accepted"
    );
}

#[test]
fn every_single_byte_flip_is_rejected() {
    for f in small_filters() {
        let bytes = f.to_bytes();
        for i in 0..bytes.len() {
            for x in [0x01u8, 0x80, 0xff] {
                let mut c = bytes.clone();
                c[i] ^= x;
                assert_rejected(
                    &c,
                    &format!("{:?} {:?} byte {i} ^ {x:#x}", f.layout(), f.scheme()),
                );
            }
        }
    }
}

/// The two parts (header and payload, for a transport's frames) carry no
/// checksum and skip nothing else: with the checksum recomputed after each
/// single-byte flip, `from_header_and_payload` accepts exactly what
/// `from_bytes` accepts, and gives that filter; the payload read at any
/// alignment; a part of the wrong length named.
#[test]
fn header_and_payload_parts_skip_only_the_payload_checksum() {
    for f in small_filters() {
        let header = Header::of(&f).to_bytes();
        let payload = f.payload_bytes();
        let whole = f.to_bytes();
        assert_eq!(&whole[..HEADER_LEN], &header[..]);
        assert_eq!(&whole[HEADER_LEN..whole.len() - 8], &payload[..]);
        for shift in 0..8 {
            let (blocks, at) = Aligned::shifted(&payload, shift);
            let shifted = &bytemuck::cast_slice::<Block, u8>(&blocks)[at..at + payload.len()];
            let got = BloomFilter::from_header_and_payload(&header, shifted).unwrap();
            assert!(got == f && got.to_bytes() == whole, "shift {shift}");
        }
        let end = whole.len() - 8;
        for i in 0..end {
            for x in [0x01u8, 0x80] {
                let mut c = whole.clone();
                c[i] ^= x;
                let sum = xxh3_64(&c[..end]);
                c[end..].copy_from_slice(&sum.to_le_bytes());
                let parts =
                    BloomFilter::from_header_and_payload(&c[..HEADER_LEN], &c[HEADER_LEN..end]);
                let ctx = format!("{:?} {:?} byte {i} ^ {x:#x}", f.layout(), f.scheme());
                match (BloomFilter::from_bytes(&c), parts) {
                    (Ok(a), Ok(b)) => assert!(a.to_bytes() == b.to_bytes(), "{ctx}"),
                    (Err(_), Err(_)) => {}
                    (a, b) => panic!("{ctx}: from_bytes {:?}, parts {:?}", a.is_ok(), b.is_ok()),
                }
            }
        }
        let short = BloomFilter::from_header_and_payload(&header, &payload[..payload.len() - 8]);
        assert!(matches!(
            short,
            Err(Error::Format(FormatError::SizeMismatch {
                field: "payload",
                ..
            }))
        ));
        let mut long = header.to_vec();
        long.push(0);
        let long = BloomFilter::from_header_and_payload(&long, &payload);
        assert!(matches!(
            long,
            Err(Error::Format(FormatError::SizeMismatch {
                field: "header",
                ..
            }))
        ));
        let cut = BloomFilter::from_header_and_payload(&header[..63], &payload);
        assert!(
            matches!(
                cut,
                Err(Error::Format(FormatError::Truncated {
                    field: "header",
                    ..
                }))
            ),
            "{cut:?}"
        );
    }
}

/// The unverified view skips the payload checksum and nothing else: with
/// the checksum recomputed after each single-byte flip, it accepts exactly
/// what `from_bytes` accepts, and then answers as that filter (a padding or
/// size check skipped on the unverified path fails here).
#[test]
fn the_unverified_view_skips_only_the_payload_checksum() {
    use xxhash_rust::xxh3::xxh3_64;
    for f in small_filters() {
        let bytes = f.to_bytes();
        let end = bytes.len() - 8;
        for i in 0..end {
            for x in [0x01u8, 0x80, 0xff] {
                let mut c = bytes.clone();
                c[i] ^= x;
                let sum = xxh3_64(&c[..end]);
                c[end..].copy_from_slice(&sum.to_le_bytes());
                let ctx = format!("{:?} {:?} byte {i} ^ {x:#x}", f.layout(), f.scheme());
                let aligned = Aligned::new(&c);
                let view = FilterView::new_unverified(aligned.bytes());
                match BloomFilter::from_bytes(&c) {
                    Ok(loaded) => {
                        let view = view.unwrap_or_else(|e| panic!("{ctx}: view rejected: {e}"));
                        assert!(view.to_filter().unwrap() == loaded, "{ctx}");
                        for key in 0u64..200 {
                            assert_eq!(view.contains(&key), loaded.contains(&key), "{ctx}");
                        }
                    }
                    Err(e) => assert!(view.is_err(), "{ctx}: view accepted what fails with {e}"),
                }
            }
        }
    }
}

#[test]
fn every_truncation_is_rejected() {
    for f in small_filters() {
        let bytes = f.to_bytes();
        for len in 0..bytes.len() {
            assert_rejected(
                &bytes[..len],
                &format!("{:?} {:?} len {len}", f.layout(), f.scheme()),
            );
            let err = BloomFilter::from_bytes(&bytes[..len]).unwrap_err();
            assert!(
                matches!(err, Error::Format(FormatError::Truncated { .. })),
                "len {len}: {err}"
            );
            let err = BloomFilter::read_from(&bytes[..len]).unwrap_err();
            assert!(
                matches!(err, Error::Format(FormatError::Truncated { .. })),
                "len {len}: {err}"
            );
        }
    }
}

#[test]
fn appended_bytes_are_rejected_by_whole_input_loaders() {
    for f in small_filters() {
        let mut bytes = f.to_bytes();
        for extra in [&[0u8][..], b"x", &[0u8; 64]] {
            let mut c = bytes.clone();
            c.extend_from_slice(extra);
            let err = BloomFilter::from_bytes(&c).unwrap_err();
            assert!(err.to_string().contains("`input length`"), "{err}");
            let aligned = Aligned::new(&c);
            assert!(FilterView::new(aligned.bytes()).is_err());
            assert!(FilterView::new_unverified(aligned.bytes()).is_err());
        }
        bytes.push(0);
        // A stream may hold more than one filter: read_from stops after it.
        assert_eq!(BloomFilter::read_from(&bytes[..]).unwrap(), f);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any set of random mutations (byte changes, then an optional
    /// truncation or extension) gives an error on every path, or (only if
    /// the mutations cancelled out) the original filter.
    #[test]
    fn random_mutations_never_give_a_different_filter(
        which in 0..small_filters().len(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        resize in prop_oneof![Just(None), (0usize..400).prop_map(Some)],
    ) {
        let f = &small_filters()[which];
        let original = f.to_bytes();
        let mut c = original.clone();
        for (at, value) in &edits {
            let i = at.index(c.len());
            c[i] = *value;
        }
        if let Some(len) = resize {
            c.resize(len, 0xa5);
        }
        for (way, r) in load_all_ways(&c).into_iter().enumerate() {
            if let Ok(g) = r {
                // Only the mutations cancelling out may load, and then only
                // as the original filter. The streaming reader (way 1) stops
                // after the trailer, so bytes appended after an intact
                // filter are the next item of the stream, not corruption.
                let intact = if way == 1 {
                    c.len() >= original.len() && c[..original.len()] == original[..]
                } else {
                    c == original
                };
                prop_assert!(intact, "loader {} accepted a corrupted input", way);
                prop_assert!(g == *f);
            }
        }
    }
}

// ----------------------------------------------- one error per field -----

/// Serialized bytes with header field bytes replaced, the header checksum
/// (and the trailer) recomputed so that the field check itself is reached.
fn patched(bytes: &[u8], at: usize, new: &[u8]) -> Vec<u8> {
    let mut c = bytes.to_vec();
    c[at..at + new.len()].copy_from_slice(new);
    resign(&mut c);
    c
}

fn resign(c: &mut [u8]) {
    let h = xxh3_64(&c[..56]);
    c[56..64].copy_from_slice(&h.to_le_bytes());
    let end = c.len() - 8;
    let t = xxh3_64(&c[..end]);
    c[end..].copy_from_slice(&t.to_le_bytes());
}

#[test]
fn each_bad_field_gives_its_own_error_naming_it() {
    let f = filter(Layout::Partitioned, Scheme::DoubleHashing, 999, 3, 10, 5);
    let b = f.to_bytes();
    let independent = filter(Layout::Partitioned, Scheme::Independent, 999, 3, 10, 5).to_bytes();
    type Case = (Vec<u8>, fn(&Error) -> bool, &'static str);
    let cases: Vec<Case> = vec![
        (
            patched(&b, 0, b"NOTLHBF!"),
            |e| matches!(e, Error::Format(FormatError::BadMagic { .. })),
            "`magic`",
        ),
        (
            patched(&b, 8, &2u16.to_le_bytes()),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::UnsupportedVersion { found: 2, .. })
                )
            },
            "`version` 2",
        ),
        (
            patched(&b, 8, &0u16.to_le_bytes()),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::UnsupportedVersion { found: 0, .. })
                )
            },
            "`version`",
        ),
        (
            patched(&b, 10, &[9]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::UnknownId {
                        field: "layout",
                        id: 9
                    })
                )
            },
            "`layout` id 9",
        ),
        (
            patched(&b, 10, &[0]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::UnknownId {
                        field: "layout",
                        ..
                    })
                )
            },
            "`layout`",
        ),
        (
            patched(&b, 11, &[5]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::UnknownId {
                        field: "scheme",
                        id: 5
                    })
                )
            },
            "`scheme` id 5",
        ),
        (
            patched(&b, 12, &[3]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::UnknownId {
                        field: "hash",
                        id: 3
                    })
                )
            },
            "`hash` id 3",
        ),
        (
            patched(&b, 12, &[0]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::UnknownId {
                        field: "hash",
                        id: 0
                    })
                )
            },
            "`hash` id 0",
        ),
        // The folded multiply (id 2) with the independent scheme, which
        // hashes by seeded XXH3-64 only.
        (
            patched(&independent, 12, &[2]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange { field: "hash", .. })
                )
            },
            "`hash`",
        ),
        (
            patched(&b, 13, &[1]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::NonZeroPadding { field: "flags" })
                )
            },
            "`flags`",
        ),
        (
            patched(&b, 14, &[5]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::UnknownId {
                        field: "key_kind",
                        id: 5
                    })
                )
            },
            "`key_kind` id 5",
        ),
        (
            patched(&b, 15, &[1]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::NonZeroPadding { field: "reserved" })
                )
            },
            "`reserved`",
        ),
        (
            patched(&b, 16, &0u32.to_le_bytes()),
            |e| matches!(e, Error::Format(FormatError::OutOfRange { field: "k", .. })),
            "`k`",
        ),
        (
            patched(&b, 16, &65u32.to_le_bytes()),
            |e| matches!(e, Error::Format(FormatError::OutOfRange { field: "k", .. })),
            "`k`",
        ),
        (
            patched(&b, 20, &512u32.to_le_bytes()),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange {
                        field: "block_bits",
                        ..
                    })
                )
            },
            "`block_bits`",
        ),
        (
            patched(&b, 32, &0u64.to_le_bytes()),
            |e| matches!(e, Error::Format(FormatError::OutOfRange { field: "m", .. })),
            "`m`",
        ),
        (
            patched(&b, 32, &(1u64 << 47).to_le_bytes()),
            |e| matches!(e, Error::Format(FormatError::OutOfRange { field: "m", .. })),
            "`m`",
        ),
        // Partitioned needs m to be a multiple of k.
        (
            patched(&b, 32, &998u64.to_le_bytes()),
            |e| matches!(e, Error::Format(FormatError::OutOfRange { field: "m", .. })),
            "partitioned",
        ),
        (
            patched(&b, 48, &120u64.to_le_bytes()),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::SizeMismatch {
                        field: "payload_len",
                        expected: 128,
                        found: 120
                    })
                )
            },
            "`payload_len`",
        ),
        // m = 960 = 3 * 320 is a valid partitioned size of 15 words, so the
        // stored payload_len (16 words) no longer matches it.
        (
            patched(&b, 32, &960u64.to_le_bytes()),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::SizeMismatch {
                        field: "payload_len",
                        expected: 120,
                        found: 128
                    })
                )
            },
            "`payload_len`",
        ),
        (
            {
                let mut c = b.clone();
                c[60] ^= 1;
                c
            },
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::ChecksumMismatch {
                        field: "header_checksum",
                        ..
                    })
                )
            },
            "`header_checksum`",
        ),
        (
            {
                let mut c = b.clone();
                c[100] ^= 1;
                c
            },
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::ChecksumMismatch {
                        field: "checksum",
                        ..
                    })
                )
            },
            "`checksum`",
        ),
        (
            b[..10].to_vec(),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::Truncated {
                        field: "header",
                        needed: 64,
                        got: 10
                    })
                )
            },
            "`header`",
        ),
        (
            b[..100].to_vec(),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::Truncated {
                        field: "payload",
                        needed: 192,
                        got: 100
                    })
                )
            },
            "`payload`",
        ),
        (
            b[..195].to_vec(),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::Truncated {
                        field: "checksum",
                        needed: 200,
                        got: 195
                    })
                )
            },
            "`checksum`",
        ),
    ];
    for (bytes, is_expected, needle) in cases {
        for (way, r) in load_all_ways(&bytes).into_iter().enumerate() {
            let err = r.unwrap_err();
            assert!(is_expected(&err), "way {way}, {needle}: got {err:?}");
            assert!(
                err.to_string().contains(needle),
                "way {way}: {err} lacks {needle}"
            );
        }
    }
}

#[test]
fn nonzero_padding_bits_are_rejected() {
    // m = 1000: bits 1000..1024 of the last word are padding.
    let f = filter(Layout::Classic, Scheme::default(), 1000, 3, 30, 6);
    let mut b = f.to_bytes();
    // Byte 64 + 127, bit 7 is bit 1023 of the array: padding.
    b[64 + 127] |= 0x80;
    resign(&mut b);
    for r in load_all_ways(&b) {
        let err = r.unwrap_err();
        assert!(
            matches!(
                err,
                Error::Format(FormatError::NonZeroPadding {
                    field: "payload padding bits"
                })
            ),
            "{err}"
        );
    }
    // Shrinking m over set bits turns them into padding.
    // (999 bits asked, 1011 built: three prime sub-arrays of 337.)
    let g = filter(Layout::Partitioned, Scheme::DoubleHashing, 999, 3, 400, 5);
    assert_eq!(g.num_bits(), 1011);
    let b = g.to_bytes();
    let padding_set = (993..1011).any(|p| b[64 + p / 8] >> (p % 8) & 1 == 1);
    assert!(padding_set, "the test needs a set bit in 993..1011");
    let err = BloomFilter::from_bytes(&patched(&b, 32, &993u64.to_le_bytes())).unwrap_err();
    assert!(
        matches!(err, Error::Format(FormatError::NonZeroPadding { .. })),
        "{err}"
    );
}

#[test]
fn misaligned_view_is_an_error_naming_it() {
    let bytes = filter(Layout::Classic, Scheme::default(), 1000, 3, 30, 6).to_bytes();
    for shift in [1usize, 8, 32, 63] {
        let (blocks, shift) = Aligned::shifted(&bytes, shift);
        let buf = &bytemuck::cast_slice::<Block, u8>(&blocks)[shift..shift + bytes.len()];
        let err = FilterView::new(buf).unwrap_err();
        assert!(
            matches!(err, Error::Misaligned { field: "bytes", align: 64, offset } if offset == shift),
            "{err}"
        );
        assert!(err.to_string().contains("`bytes`"), "{err}");
    }
}

#[test]
fn view_reads_the_borrowed_bytes_in_place() {
    // Changing a payload bit of the borrowed buffer changes the answer of a
    // view opened without verification: it reads the caller's memory.
    let f = filter(Layout::Classic, Scheme::DoubleHashing, 4096, 1, 0, 6);
    let mut bytes = f.to_bytes();
    let p = f.positions("x")[0] as usize;
    bytes[64 + p / 8] |= 1 << (p % 8);
    let aligned = Aligned::new(&bytes);
    let view = FilterView::new_unverified(aligned.bytes()).unwrap();
    assert!(view.contains("x"));
    assert!(
        FilterView::new(aligned.bytes()).is_err(),
        "checksum no longer matches"
    );
    let debug = format!("{view:?}");
    assert!(debug.len() < 400, "{debug}");
}

// ------------------------------------------------------------------ files --

#[test]
fn write_file_is_atomic_and_read_file_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.lhbf");
    let a = filter(Layout::Classic, Scheme::default(), 10_000, 4, 500, 7);
    let b = filter(Layout::Partitioned, Scheme::Independent, 9_999, 3, 300, 8);
    a.write_file(&path).unwrap();
    assert_eq!(BloomFilter::read_file(&path).unwrap(), a);
    assert_eq!(std::fs::read(&path).unwrap(), a.to_bytes());
    b.write_file(&path).unwrap(); // replaces
    assert_eq!(BloomFilter::read_file(&path).unwrap(), b);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["f.lhbf"], "no temporary file left behind");

    // A directory that does not exist: an I/O error, nothing written.
    let err = a.write_file(dir.path().join("missing/f.lhbf")).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Io {
                context: "creating the temporary file",
                ..
            }
        ),
        "{err}"
    );
    assert!(a.write_file("").is_err());

    // read_file checks the length before allocating.
    let bytes = a.to_bytes();
    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let err = BloomFilter::read_file(&path).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Format(FormatError::Truncated {
                field: "checksum",
                ..
            })
        ),
        "{err}"
    );
    std::fs::write(&path, [&bytes[..], b"!"].concat()).unwrap();
    let err = BloomFilter::read_file(&path).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Format(FormatError::SizeMismatch {
                field: "input length",
                ..
            })
        ),
        "{err}"
    );
    let err = BloomFilter::read_file(dir.path().join("nope")).unwrap_err();
    assert!(
        matches!(
            err,
            Error::Io {
                context: "opening the file",
                ..
            }
        ),
        "{err}"
    );
}

// ------------------------------------------------------------------ serde --

#[cfg(feature = "serde")]
#[test]
fn serde_uses_the_binary_format() {
    for (layout, scheme) in all_configs() {
        let f = filter(layout, scheme, 1000 - 1000 % 3, 3, 40, 11);
        // CBOR: a byte string holding exactly the v1 bytes.
        let mut cbor = Vec::new();
        ciborium::into_writer(&f, &mut cbor).unwrap();
        let value: ciborium::Value = ciborium::from_reader(&cbor[..]).unwrap();
        assert_eq!(value.as_bytes().unwrap(), &f.to_bytes());
        let g: BloomFilter = ciborium::from_reader(&cbor[..]).unwrap();
        assert_eq!(g, f);
        assert_eq!(g.insert_calls(), 40);
        // JSON: an array of bytes, same content.
        let json = serde_json::to_string(&f).unwrap();
        let raw: Vec<u8> = serde_json::from_str(&json).unwrap();
        assert_eq!(raw, f.to_bytes());
        let g: BloomFilter = serde_json::from_str(&json).unwrap();
        assert_eq!(g, f);
    }
    // Corrupt input is a deserialization error carrying the format error.
    let mut bytes = filter(Layout::Classic, Scheme::default(), 640, 3, 5, 1).to_bytes();
    bytes[70] ^= 4;
    let json = serde_json::to_string(&bytes).unwrap();
    let err = serde_json::from_str::<BloomFilter>(&json)
        .unwrap_err()
        .to_string();
    assert!(err.contains("`checksum`"), "{err}");
    let err = serde_json::from_str::<BloomFilter>("\"hello\"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("`header`") || err.contains("`magic`"), "{err}");
}

// ----------------------------------------------------------------- golden --

/// One line of `tests/data/golden.txt`: a filter written by format v1.
struct Golden {
    name: String,
    layout: Layout,
    scheme: Scheme,
    /// The optional eighth field; `xxh3-128` (id 1) when absent.
    family: HashFamily,
    seed: u64,
    m: u64,
    k: u32,
    n: u64,
}

fn golden_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// Parses the manifest: `name layout scheme seed m k n [hash]` per line,
/// `#` comments. Adding a layout's golden file is one line here plus running
/// `regenerate_golden` (below).
fn golden_manifest() -> Vec<Golden> {
    let text = std::fs::read_to_string(golden_dir().join("golden.txt")).unwrap();
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert!(matches!(f.len(), 7 | 8), "bad manifest line: {l}");
            Golden {
                name: f[0].into(),
                layout: f[1].parse().unwrap_or_else(|e| panic!("{e} in {l}")),
                scheme: f[2].parse().unwrap_or_else(|e| panic!("{e} in {l}")),
                seed: u64::from_str_radix(f[3].trim_start_matches("0x"), 16).unwrap(),
                m: f[4].parse().unwrap(),
                k: f[5].parse().unwrap(),
                n: f[6].parse().unwrap(),
                family: f.get(7).map_or(HashFamily::Xxh3, |h| {
                    h.parse().unwrap_or_else(|e| panic!("{e} in {l}"))
                }),
            }
        })
        .collect()
}

fn answers_string(query: impl Fn(&str) -> bool, n: u64) -> String {
    answers(query, n)
        .into_iter()
        .map(|b| if b { '1' } else { '0' })
        .collect()
}

/// Files written by v1 load forever: parameters, answers and bytes.
#[test]
fn golden_files_load_and_answer_as_recorded() {
    let manifest = golden_manifest();
    assert!(manifest.len() >= Layout::ALL.len());
    for layout in Layout::ALL {
        for family in HashFamily::ALL {
            assert!(
                manifest
                    .iter()
                    .any(|g| g.layout == layout && g.family == family),
                "no golden file for {layout:?} in {family:?}"
            );
        }
    }
    for g in manifest {
        let bin = std::fs::read(golden_dir().join(format!("{}.bin", g.name)))
            .unwrap_or_else(|e| panic!("{}.bin: {e} (run regenerate_golden)", g.name));
        let recorded =
            std::fs::read_to_string(golden_dir().join(format!("{}.answers", g.name))).unwrap();
        let f = BloomFilter::from_bytes(&bin).unwrap_or_else(|e| panic!("{}: {e}", g.name));
        assert_eq!(bin[12], g.family.id(), "{}: the header's hash byte", g.name);
        assert_eq!(
            (
                f.layout(),
                f.scheme(),
                f.hash_family(),
                f.seed(),
                f.num_bits(),
                f.num_hashes(),
                f.insert_calls()
            ),
            (g.layout, g.scheme, g.family, g.seed, g.m, g.k, g.n),
            "{}",
            g.name
        );
        assert_eq!(
            answers_string(|k| f.contains(k), g.n),
            recorded.trim(),
            "{}",
            g.name
        );
        let aligned = Aligned::new(&bin);
        let view = FilterView::new(aligned.bytes()).unwrap();
        assert_eq!(
            answers_string(|k| view.contains(k), g.n),
            recorded.trim(),
            "{} view",
            g.name
        );
        // Every query path answers as recorded: batch (each kernel is
        // compared with the scalar one in tests/kernels.rs), atomic, and
        // parallel.
        let keys: Vec<String> = (0..(4 * g.n).max(64)).map(|i| format!("key-{i}")).collect();
        let to_string = |v: &[bool]| {
            v.iter()
                .map(|&b| if b { '1' } else { '0' })
                .collect::<String>()
        };
        let mut batch = vec![false; keys.len()];
        f.contains_batch(&keys, &mut batch).unwrap();
        assert_eq!(to_string(&batch), recorded.trim(), "{} batch", g.name);
        let atomic = f.clone().into_atomic();
        assert_eq!(
            answers_string(|k| atomic.contains(k), g.n),
            recorded.trim(),
            "{} atomic",
            g.name
        );
        #[cfg(feature = "rayon")]
        {
            let mut par = vec![false; keys.len()];
            f.par_contains_batch(&keys, &mut par).unwrap();
            assert_eq!(to_string(&par), recorded.trim(), "{} par", g.name);
        }
        // Building the same filter today gives the same bytes: hashing,
        // probing and encoding are all unchanged, on the single-key and on
        // the batch insert path.
        // Files whose two-hash range is not prime (written before the
        // builder grew such ranges to primes) cannot be built anew; the
        // loaded filter, cleared, stands in for the empty one.
        let rebuildable = common::built_bits(g.layout, g.scheme, g.m, g.k) == g.m;
        let empty = || {
            if rebuildable {
                common::build_in(g.family, g.layout, g.scheme, g.m, g.k, g.seed)
            } else {
                let mut e = f.clone();
                e.clear();
                e
            }
        };
        let mut batch_built = empty();
        batch_built.insert_batch(&keys[..g.n as usize]);
        assert!(
            batch_built.to_bytes() == bin,
            "{}: batch insert differs",
            g.name
        );
        let mut today = empty();
        for i in 0..g.n {
            today.insert(&format!("key-{i}"));
        }
        assert!(
            today.to_bytes() == bin,
            "{}: today's encoding differs",
            g.name
        );
    }
}

/// Writes the golden files of manifest lines that have none yet; never
/// overwrites one. Run with
/// `cargo test --test format -- --ignored regenerate_golden`.
#[test]
#[ignore = "writes tests/data; run by hand after adding a manifest line"]
fn regenerate_golden() {
    for g in golden_manifest() {
        let bin = golden_dir().join(format!("{}.bin", g.name));
        if bin.exists() {
            continue;
        }
        // A range the builder would grow (a legacy two-hash file written
        // before ranges became primes): the empty filter of exactly that
        // geometry, written by hand.
        let f = if common::built_bits(g.layout, g.scheme, g.m, g.k) == g.m {
            let mut f = common::build_in(g.family, g.layout, g.scheme, g.m, g.k, g.seed);
            for i in 0..g.n {
                f.insert(&format!("key-{i}"));
            }
            f
        } else {
            let mut f = legacy_empty(&g);
            for i in 0..g.n {
                f.insert(&format!("key-{i}"));
            }
            f
        };
        std::fs::write(&bin, f.to_bytes()).unwrap();
        let answers = answers_string(|k| f.contains(k), g.n);
        std::fs::write(
            golden_dir().join(format!("{}.answers", g.name)),
            answers + "\n",
        )
        .unwrap();
        println!("wrote {}", bin.display());
    }
}

/// The empty filter of a manifest line's exact geometry, serialized by
/// hand (header patched from a built filter's, zero payload, checksum) and
/// loaded: the only way to make a two-hash classic filter over a range the
/// builder would grow to a prime.
fn legacy_empty(g: &Golden) -> BloomFilter {
    let built = common::build(g.layout, g.scheme, g.m, g.k, g.seed);
    let mut header = Header::parse(&built.to_bytes()).unwrap();
    header.num_bits = g.m;
    let mut bytes = header.to_bytes().to_vec();
    bytes.resize(64 + 8 * g.m.div_ceil(64) as usize, 0);
    let sum = xxh3_64(&bytes);
    bytes.extend_from_slice(&sum.to_le_bytes());
    let f = BloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!((f.num_bits(), f.count_ones()), (g.m, 0));
    f
}

/// The legacy classic two-hash files over a power-of-two range (written
/// before the builder grew two-hash ranges to primes; `classic-pow2-*` in
/// golden.txt) hold keys, and their bits are exactly the specification's
/// positions of those keys: `a = mulhi(h1, r)`, an odd stride
/// `b = (1 + mulhi(h2, r - 1)) | 1` (every odd stride is coprime to a power
/// of two), probe i at `(a + i b + f(i)) mod r`. A stride rule that forgets
/// the `| 1` fails here and in `golden_files_load_and_answer_as_recorded`
/// (docs/testing.md).
#[test]
fn legacy_power_of_two_files_hold_their_keys_at_the_specified_bits() {
    let mulhi = |x: u64, r: u64| ((u128::from(x) * u128::from(r)) >> 64) as u64;
    let legacy: Vec<Golden> = golden_manifest()
        .into_iter()
        .filter(|g| g.name.starts_with("classic-pow2-"))
        .collect();
    assert!(legacy.len() >= 2);
    for g in legacy {
        let r = g.m;
        assert!(r.is_power_of_two() && g.n > 0, "{}", g.name);
        let bin = std::fs::read(golden_dir().join(format!("{}.bin", g.name))).unwrap();
        let f = BloomFilter::from_bytes(&bin).unwrap();
        let mut spec = vec![false; r as usize];
        for i in 0..g.n {
            let key = format!("key-{i}");
            let h = xxhash_rust::xxh3::xxh3_128_with_seed(key.as_bytes(), g.seed);
            let (h1, h2) = (h as u64, (h >> 64) as u64);
            let (a, b) = (mulhi(h1, r), (1 + mulhi(h2, r - 1)) | 1);
            let mut probes = Vec::new();
            for j in 0..u64::from(g.k) {
                let fj = match g.scheme {
                    Scheme::EnhancedDoubleHashing(lesshash::Enhancement::Square) => j * j,
                    Scheme::EnhancedDoubleHashing(lesshash::Enhancement::Cube) => j * j * j,
                    _ => 0,
                };
                let p = ((u128::from(a) + u128::from(j) * u128::from(b) + u128::from(fj))
                    % u128::from(r)) as u64;
                spec[p as usize] = true;
                probes.push(p);
            }
            assert_eq!(f.positions(&key), probes, "{} {key}", g.name);
            assert!(f.contains(&key), "{} {key}", g.name);
        }
        let payload = &bin[64..bin.len() - 8];
        for (p, &want) in spec.iter().enumerate() {
            let got = payload[p / 8] >> (p % 8) & 1 == 1;
            assert_eq!(got, want, "{}: bit {p}", g.name);
        }
    }
}

#[test]
fn header_len_is_one_cache_line() {
    assert_eq!(HEADER_LEN, 64);
}

// ------------------------------------------------ the insert counter -----

/// A filter loaded from a file whose insert counter is `calls` (any value
/// a file may carry).
fn loaded_with_counter(calls: u64) -> BloomFilter {
    let f = filter(
        Layout::Blocked,
        Scheme::DoubleHashing,
        1 << 16,
        6,
        1,
        DEFAULT_SEED,
    );
    let bytes = patched(&f.to_bytes(), 40, &calls.to_le_bytes());
    let g = BloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(g.insert_calls(), calls);
    g
}

/// The counter saturates at `u64::MAX` on every insert path, owned and
/// atomic: it once panicked with overflow checks on and wrapped to a small
/// count without (found by loading a file with the counter near the top).
#[test]
fn the_insert_counter_saturates_on_every_path() {
    let keys: Vec<u64> = (0..40_000).collect(); // above one parallel task
    let hashes: Vec<u128> = keys.iter().map(|k| hash_key(k, DEFAULT_SEED)).collect();
    type Path = (&'static str, fn(&mut BloomFilter, &[u64], &[u128]));
    #[cfg_attr(not(feature = "rayon"), allow(unused_mut))]
    let mut paths: Vec<Path> = vec![
        ("insert", |f, k, _| f.insert(&k[0])),
        ("insert_batch", |f, k, _| f.insert_batch(k)),
        ("prehashed insert", |f, _, h| {
            f.prehashed_mut().unwrap().insert(h[0])
        }),
        ("prehashed insert_batch", |f, _, h| {
            f.prehashed_mut().unwrap().insert_batch(h)
        }),
        ("atomic insert", |f, k, _| {
            let a = std::mem::replace(f, loaded_with_counter(0)).into_atomic();
            a.insert(&k[0]);
            *f = a.into_inner();
        }),
        ("atomic prehashed insert", |f, _, h| {
            let a = std::mem::replace(f, loaded_with_counter(0)).into_atomic();
            a.prehashed().unwrap().insert(h[0]);
            *f = a.into_inner();
        }),
    ];
    #[cfg(feature = "rayon")]
    paths.extend::<[Path; 2]>([
        ("par_insert_batch", |f, k, _| f.par_insert_batch(k)),
        ("prehashed par_insert_batch", |f, _, h| {
            f.prehashed_mut().unwrap().par_insert_batch(h)
        }),
    ]);
    for (name, insert) in paths {
        for start in [u64::MAX - 1, u64::MAX] {
            let mut f = loaded_with_counter(start);
            insert(&mut f, &keys, &hashes);
            assert_eq!(f.insert_calls(), u64::MAX, "{name} from {start}");
            assert!(f.contains(&keys[0]), "{name}: false negative");
        }
        let mut f = loaded_with_counter(5);
        insert(&mut f, &keys, &hashes);
        assert!(f.insert_calls() > 5, "{name} counts from a loaded value");
    }
}

/// `write_file` replaces what a symbolic link points to (the link stays),
/// writes straight through a FIFO (renaming over it would replace the pipe
/// with a file), and refuses a directory by name.
#[cfg(unix)]
#[test]
fn write_file_follows_links_and_writes_through_fifos() {
    let dir = tempfile::tempdir().unwrap();
    let f = filter(Layout::Blocked, Scheme::DoubleHashing, 4096, 6, 50, 3);

    let target = dir.path().join("target.lhbf");
    std::fs::write(&target, b"old").unwrap();
    let link = dir.path().join("link.lhbf");
    std::os::unix::fs::symlink("target.lhbf", &link).unwrap();
    f.write_file(&link).unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&target).unwrap(), f.to_bytes());
    // A dangling link: its target is created.
    let dangling = dir.path().join("dangling.lhbf");
    std::os::unix::fs::symlink("created.lhbf", &dangling).unwrap();
    f.write_file(&dangling).unwrap();
    assert_eq!(
        std::fs::read(dir.path().join("created.lhbf")).unwrap(),
        f.to_bytes()
    );

    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        f.write_file(&fifo).unwrap();
        assert_eq!(reader.join().unwrap(), f.to_bytes());
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(
            std::os::unix::fs::FileTypeExt::is_fifo(&kind),
            "the FIFO was replaced"
        );
    }

    let err = f.write_file(dir.path()).unwrap_err();
    assert!(err.to_string().contains("`path`"), "{err}");
}

/// A reader opening the path while `write_file` replaces it: one thread
/// writes filter A and filter B over the same path in turn (60 writes,
/// each to a temporary file renamed over the path), two threads load it
/// with `read_file` until the writer is done. Every load must succeed and
/// be A or B, never an error (a truncated or half-written file) nor a mix.
/// Writing the regular file in place (`File::create` + write, in
/// src/format/frame.rs `write_file`) fails here (docs/testing.md).
#[test]
fn a_reader_sees_the_old_or_the_new_file_while_write_file_replaces_it() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.lhbf");
    // 2^23 bits (1 MiB): a write takes long enough for loads to overlap it.
    let filter = |seed: u64| {
        let mut f = BloomFilter::builder()
            .bits(1 << 23)
            .hashes(7)
            .build()
            .unwrap();
        f.insert_batch(&common::members(seed, 20_000));
        f
    };
    let (a, b) = (filter(1), filter(2));
    assert!(a != b);
    a.write_file(&path).unwrap();
    let done = AtomicBool::new(false);
    let seen = std::thread::scope(|s| {
        let readers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut seen = [0usize; 2];
                    let mut loads = 0;
                    while loads == 0 || !done.load(Ordering::Acquire) {
                        let f = BloomFilter::read_file(&path)
                            .unwrap_or_else(|e| panic!("load {loads} failed: {e}"));
                        match (f == a, f == b) {
                            (true, _) => seen[0] += 1,
                            (_, true) => seen[1] += 1,
                            _ => panic!("load {loads} is neither filter"),
                        }
                        loads += 1;
                    }
                    seen
                })
            })
            .collect();
        for i in 0..60 {
            let next = if i % 2 == 0 { &b } else { &a };
            next.write_file(&path).unwrap();
        }
        done.store(true, Ordering::Release);
        readers
            .into_iter()
            .map(|r| r.join().unwrap())
            .collect::<Vec<_>>()
    });
    eprintln!("loads (A, B) per reader: {seen:?}");
}

/// `read_file` of a pipe (a FIFO fed by a thread): read as a stream, the
/// same filter; a stream with bytes after the filter, or cut short, is
/// refused as a file of that length would be. (A FIFO's length is 0, which
/// a regular file's check took for a truncated file.)
#[cfg(unix)]
#[test]
fn read_file_reads_a_pipe_as_a_stream() {
    let mut f = BloomFilter::with_fpr(50_000, 0.01).unwrap();
    for i in 0..1000u64 {
        f.insert(&i);
    }
    let bytes = f.to_bytes();
    common::check_read_file_of_a_pipe(&bytes, |p| BloomFilter::read_file(p), BloomFilter::to_bytes);
}

/// An input shorter than a header is called what it is: not a lesshash
/// file (`BadMagic`) when its bytes differ from the magic (a short text
/// file given as a filter), truncated when it is the start of a real
/// filter; for every loader (bytes, stream, file, map) and the sketch's.
#[test]
fn a_short_input_that_is_not_lesshash_is_bad_magic_not_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let real = BloomFilter::with_fpr(100, 0.01).unwrap().to_bytes();
    for (input, bad_magic) in [
        (b"abc\n".to_vec(), true),
        (b"\x89LHBX".to_vec(), true),
        (real[..3].to_vec(), false),
        (real[..40].to_vec(), false),
        (Vec::new(), false),
    ] {
        let path = dir.path().join("f");
        std::fs::write(&path, &input).unwrap();
        let mut results = load_all_ways(&input);
        results.push(BloomFilter::read_file(&path));
        #[cfg(feature = "mmap")]
        results.push(lesshash::MappedFilter::open(&path).map(|m| m.to_filter().unwrap()));
        for r in results {
            match (r, bad_magic) {
                (Err(Error::Format(FormatError::BadMagic { .. })), true) => {}
                (
                    Err(Error::Format(FormatError::Truncated {
                        field: "header", ..
                    })),
                    false,
                ) => {}
                (other, _) => panic!("{input:?}: {other:?}"),
            }
        }
        if bad_magic {
            let sketch = lesshash::CountMinSketch::from_bytes(&input);
            assert!(
                matches!(sketch, Err(Error::Format(FormatError::BadMagic { .. }))),
                "{input:?}: {sketch:?}"
            );
        }
    }
}

/// A file that is not a lesshash filter is named by what it looks like,
/// not only by its first bytes in hex.
#[test]
fn a_file_of_another_kind_says_what_it_looks_like() {
    let sketch = lesshash::CountMinSketch::with_error(0.1, 0.1)
        .unwrap()
        .to_bytes();
    for (bytes, words) in [
        (
            b"PAR1\x15\x04\x15\x80"[..].to_vec(),
            "it looks like a Parquet file",
        ),
        (
            b"user1\nuser2\n".to_vec(),
            "it looks like text (its first line: \"user1\")",
        ),
        (
            b"\x1f\x8b\x08\x00\x00\x00\x00\x00".to_vec(),
            "a gzip-compressed file",
        ),
        (sketch, "a lesshash Count-Min sketch file"),
    ] {
        let err = BloomFilter::from_bytes(&bytes).unwrap_err().to_string();
        assert!(err.contains(words) && err.contains("bad `magic`"), "{err}");
    }
    let filter = BloomFilter::with_fpr(10, 0.1).unwrap().to_bytes();
    let err = lesshash::CountMinSketch::from_bytes(&filter)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("it looks like a lesshash filter file"),
        "{err}"
    );
    let err = BloomFilter::from_bytes(&[]).unwrap_err().to_string();
    assert!(err.ends_with("got 0 (the input is empty)"), "{err}");
}

/// A header says how long the whole serialized filter is: the 64 header
/// bytes, the payload (`ceil(m / 64)` words) and the trailer.
#[test]
fn the_header_gives_the_total_length() {
    for layout in Layout::ALL {
        for items in [0u64, 1, 1000, 100_000] {
            let f = BloomFilter::builder()
                .expected_items(items)
                .fpr(0.01)
                .layout(layout)
                .build()
                .unwrap();
            let bytes = f.to_bytes();
            let h = lesshash::format::Header::of(&f);
            assert_eq!(h.total_len(), bytes.len() as u64, "{layout} {items}");
            assert_eq!(
                lesshash::format::Header::parse(&bytes).unwrap().total_len(),
                bytes.len() as u64
            );
        }
    }
}
