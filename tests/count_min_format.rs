//! The Count-Min sketch's v1 binary format (`docs/format.md`, "Count-Min
//! sketch format"): byte-level encoder expectations, round trips over both
//! schemes, both update rules and several shapes on every load path,
//! corruption (every single-byte flip, every truncation, appended bytes,
//! random mutations), one distinct error per header field, a header
//! promising 2^40 counters over a short stream, golden files, atomic file
//! writes.

use lesshash::FormatError;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use lesshash::format::HEADER_LEN;
use lesshash::internals::count_min::MAGIC;

use lesshash::internals::format::EAGER_LIMIT;
use lesshash::{CountMinBuilder, CountMinScheme, CountMinSketch, DEFAULT_SEED, Error};
use proptest::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

mod common;

// ------------------------------------------------- allocation tracking --

/// The system allocator, noting the largest single request of each thread:
/// the lying-header test checks that a promise of 8 TiB is never asked
/// for.
struct Tracking;

thread_local! {
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // `try_with`: allocations during thread teardown are not tracked.
    let _ = LARGEST.try_with(|c| c.set(c.get().max(size)));
}

// SAFETY: every call is forwarded unchanged to `System`, which upholds the
// `GlobalAlloc` contract; `note` only updates a thread-local `Cell`
// (const-initialised, so it never allocates).
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

// ---------------------------------------------------------------- helpers --

/// A deterministic stream: repeated string keys with counts 1 to 5, and
/// some integer keys.
fn feed(sketch: &mut CountMinSketch, updates: u64) {
    for i in 0..updates {
        sketch.add(&format!("key-{}", i * i % 97), 1 + i % 5);
        if i % 3 == 0 {
            sketch.add(&i, 2);
        }
    }
}

fn builder(scheme: CountMinScheme, conservative: bool, seed: u64) -> CountMinBuilder {
    CountMinSketch::builder()
        .scheme(scheme)
        .conservative(conservative)
        .seed(seed)
}

/// Sketches of every scheme and update rule in several shapes: one counter
/// (classic), tiny prime widths, depth = width, widths that are not a
/// multiple of 8 counters (a partial last cache line), and the copies
/// construction; each empty and fed.
fn shapes() -> Vec<CountMinSketch> {
    let mut out = Vec::new();
    for scheme in CountMinScheme::ALL {
        for conservative in [false, true] {
            let mut dims: Vec<(u64, u32)> = vec![(2, 1), (3, 3), (7, 2), (1009, 5), (8191, 4)];
            if scheme == CountMinScheme::Independent {
                dims.extend([(1, 1), (40, 4), (1000, 7)]);
            }
            for (i, (w, d)) in dims.into_iter().enumerate() {
                let b = builder(scheme, conservative, 11 + i as u64)
                    .width(w)
                    .depth(d);
                out.push(b.clone().build().unwrap());
                let mut s = b.build().unwrap();
                feed(&mut s, 300);
                out.push(s);
            }
            for (epsilon, delta) in [(0.01, 0.01), (0.2, 1e-4)] {
                let mut s = builder(scheme, conservative, DEFAULT_SEED)
                    .epsilon(epsilon)
                    .delta(delta)
                    .build()
                    .unwrap();
                feed(&mut s, 500);
                out.push(s);
            }
        }
    }
    assert!(
        out.iter().any(|s| s.copies() > 1),
        "the copies construction is covered"
    );
    out
}

/// Small sketches for the exhaustive corruption tests: each scheme and
/// update rule, and the copies construction.
fn small_sketches() -> Vec<CountMinSketch> {
    let mut out = Vec::new();
    for scheme in CountMinScheme::ALL {
        for conservative in [false, true] {
            let mut s = builder(scheme, conservative, 5)
                .width(13)
                .depth(3)
                .build()
                .unwrap();
            feed(&mut s, 40);
            out.push(s);
        }
    }
    let mut copies = CountMinSketch::with_error(0.3, 1e-3).unwrap();
    assert!(copies.copies() > 1);
    feed(&mut copies, 40);
    out.push(copies);
    out
}

fn keys() -> impl Iterator<Item = String> {
    (0..300).map(|i| format!("key-{i}"))
}

/// `b` answers every query as `a` does.
fn assert_same_answers(a: &CountMinSketch, b: &CountMinSketch, ctx: &str) {
    for k in keys() {
        assert_eq!(a.estimate(&k), b.estimate(&k), "{ctx}: {k}");
    }
    for k in 0u64..1000 {
        assert_eq!(a.estimate(&k), b.estimate(&k), "{ctx}: {k}");
    }
    assert_eq!(a.total(), b.total(), "{ctx}");
}

/// Every in-memory way to load a serialized sketch.
fn load_all_ways(bytes: &[u8]) -> Vec<Result<CountMinSketch, Error>> {
    vec![
        CountMinSketch::from_bytes(bytes),
        CountMinSketch::read_from(bytes),
        CountMinSketch::read_from(Trickle {
            data: bytes,
            max: 7,
        }),
    ]
}

/// A reader that hands out at most `max` bytes per call.
struct Trickle<'a> {
    data: &'a [u8],
    max: usize,
}

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.max).min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Bytes with `new` written at `at`, both checksums recomputed so that the
/// field check itself is reached.
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

// ---------------------------------------------------------------- encoder --

/// The header's bytes, field by field, as docs/format.md specifies them.
#[test]
fn encoder_writes_the_documented_bytes() {
    let mut s = builder(CountMinScheme::DoubleHashing, true, 0x0102_0304_0506_0708)
        .width(5)
        .depth(3)
        .build()
        .unwrap();
    s.add("a", 7);
    let b = s.to_bytes();
    assert_eq!(b.len() as u64, s.serialized_len());
    assert_eq!(b.len(), 64 + 5 * 3 * 8 + 8);
    let mut expected = Vec::new();
    expected.extend_from_slice(b"\x89LHCM\r\n\x1a"); // magic
    expected.extend_from_slice(&[1, 0]); // version 1
    expected.extend_from_slice(&[2, 1, 1, 0, 0, 0]); // double, XXH3, conservative, flags, reserved
    expected.extend_from_slice(&3u32.to_le_bytes()); // depth
    expected.extend_from_slice(&1u32.to_le_bytes()); // copies
    expected.extend_from_slice(&[8, 7, 6, 5, 4, 3, 2, 1]); // seed
    expected.extend_from_slice(&5u64.to_le_bytes()); // width
    expected.extend_from_slice(&7u64.to_le_bytes()); // total
    expected.extend_from_slice(&120u64.to_le_bytes()); // payload_len
    expected.extend_from_slice(&xxh3_64(&expected).to_le_bytes()); // header_checksum
    assert_eq!(&b[..HEADER_LEN], &expected[..]);
    assert_eq!(&b[..8], &MAGIC);
    // The payload: counter x of table t is word t * width + x; "a" raised
    // one counter per table to 7.
    let words: Vec<u64> = b[64..64 + 120]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let cols = s.columns("a");
    for (t, row) in words.chunks(5).enumerate() {
        for (x, &w) in row.iter().enumerate() {
            assert_eq!(w, if x as u64 == cols[t] { 7 } else { 0 }, "table {t}");
        }
    }
    assert_eq!(
        b[64 + 120..],
        xxh3_64(&b[..64 + 120]).to_le_bytes(),
        "trailer"
    );
}

#[test]
fn classic_header_fields() {
    let s = builder(CountMinScheme::Independent, false, 9)
        .width(40)
        .depth(4)
        .build()
        .unwrap();
    let b = s.to_bytes();
    assert_eq!(b[10..16], [1, 1, 0, 0, 0, 0]);
    assert_eq!(b[16..24], [4, 0, 0, 0, 1, 0, 0, 0]);
    assert_eq!(b[48..56], (40u64 * 4 * 8).to_le_bytes());
}

// ------------------------------------------------------------ round trips --

#[test]
fn round_trip_every_scheme_update_rule_and_shape() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.lhcm");
    for s in shapes() {
        let ctx = format!("{s:?}");
        let bytes = s.to_bytes();
        assert_eq!(bytes.len() as u64, s.serialized_len(), "{ctx}");
        assert_eq!(
            bytes.len() as u64,
            72 + 8 * s.width() * u64::from(s.depth() * s.copies()),
            "{ctx}"
        );
        let mut streamed = Vec::new();
        s.write_to(&mut streamed).unwrap();
        assert!(streamed == bytes, "{ctx}: write_to differs from to_bytes");
        for (way, loaded) in load_all_ways(&bytes).into_iter().enumerate() {
            let loaded = loaded.unwrap_or_else(|e| panic!("{ctx} way {way}: {e}"));
            assert!(loaded == s, "{ctx} way {way}");
            assert_eq!(
                (
                    loaded.scheme(),
                    loaded.is_conservative(),
                    loaded.seed(),
                    loaded.dimensions(),
                    loaded.total()
                ),
                (
                    s.scheme(),
                    s.is_conservative(),
                    s.seed(),
                    s.dimensions(),
                    s.total()
                )
            );
            assert_same_answers(&s, &loaded, &ctx);
            assert!(loaded.to_bytes() == bytes, "{ctx}: re-serialised differs");
        }
        s.write_file(&path).unwrap();
        let from_file = CountMinSketch::read_file(&path).unwrap();
        assert!(from_file == s, "{ctx}: file");
    }
}

/// A loaded sketch goes on as the original: the same updates give the
/// same sketch, and it merges with sketches built in this process.
#[test]
fn a_loaded_sketch_keeps_updating_and_merging() {
    for s in small_sketches() {
        let mut loaded = CountMinSketch::from_bytes(&s.to_bytes()).unwrap();
        let mut original = s.clone();
        feed(&mut loaded, 77);
        feed(&mut original, 77);
        assert!(loaded == original);
        if !s.is_conservative() {
            loaded.merge(&s).unwrap();
            original.merge(&s).unwrap();
            assert!(loaded == original);
        }
    }
}

/// Saturated counters and total round-trip (the total rule allows them).
#[test]
fn saturated_counters_round_trip() {
    for s in small_sketches() {
        let mut s = s;
        s.add("big", u64::MAX);
        s.add("big", 3);
        assert_eq!(s.total(), u64::MAX);
        assert_eq!(s.estimate("big"), u64::MAX);
        let loaded = CountMinSketch::from_bytes(&s.to_bytes()).unwrap();
        assert!(loaded == s);
        assert_eq!(loaded.estimate("big"), u64::MAX);
    }
}

#[test]
fn read_from_leaves_the_stream_after_the_sketch() {
    let sketches = small_sketches();
    let mut stream = Vec::new();
    for s in &sketches {
        s.write_to(&mut stream).unwrap();
    }
    stream.extend_from_slice(b"tail");
    let mut r = &stream[..];
    for s in &sketches {
        assert!(CountMinSketch::read_from(&mut r).unwrap() == *s);
    }
    assert_eq!(r, b"tail");
}

// ------------------------------------------------------------- corruption --

/// Every load path rejects `bytes`: an error, never a panic or a sketch.
fn assert_rejected(bytes: &[u8], ctx: &str) {
    for (way, r) in load_all_ways(bytes).into_iter().enumerate() {
        assert!(r.is_err(), "{ctx}: way {way} accepted corrupt input");
    }
}

/// The trailing checksum covers every byte, so any single flipped byte
/// anywhere is an error on every path.
#[test]
fn every_single_byte_flip_is_rejected() {
    for s in small_sketches() {
        let bytes = s.to_bytes();
        for i in 0..bytes.len() {
            for x in [0x01u8, 0x80, 0xff] {
                let mut c = bytes.clone();
                c[i] ^= x;
                assert_rejected(&c, &format!("{s:?} byte {i} ^ {x:#x}"));
            }
        }
    }
}

#[test]
fn every_truncation_is_rejected() {
    for s in small_sketches() {
        let bytes = s.to_bytes();
        for len in 0..bytes.len() {
            let ctx = format!("{s:?} len {len}");
            for (way, r) in load_all_ways(&bytes[..len]).into_iter().enumerate() {
                let err = r
                    .err()
                    .unwrap_or_else(|| panic!("{ctx}: way {way} accepted"));
                assert!(
                    matches!(err, Error::Format(FormatError::Truncated { .. })),
                    "{ctx} way {way}: {err}"
                );
            }
        }
    }
}

#[test]
fn appended_bytes_are_rejected_by_from_bytes() {
    for s in small_sketches() {
        let bytes = s.to_bytes();
        for extra in [&[0u8][..], b"x", &[0u8; 64]] {
            let c = [&bytes[..], extra].concat();
            let err = CountMinSketch::from_bytes(&c).unwrap_err();
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
            // A stream may hold more: read_from stops after the sketch.
            assert!(CountMinSketch::read_from(&c[..]).unwrap() == s);
        }
    }
}

/// A Bloom filter's file is not a sketch, and the other way round.
#[test]
fn the_two_formats_refuse_each_other() {
    let f = lesshash::BloomFilter::with_fpr(100, 0.01).unwrap();
    let err = CountMinSketch::from_bytes(&f.to_bytes()).unwrap_err();
    assert!(
        matches!(err, Error::Format(FormatError::BadMagic { .. })),
        "{err}"
    );
    let s = CountMinSketch::with_error(0.1, 0.1).unwrap();
    let err = lesshash::BloomFilter::from_bytes(&s.to_bytes()).unwrap_err();
    assert!(
        matches!(err, Error::Format(FormatError::BadMagic { .. })),
        "{err}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random byte changes, then an optional resize, give an error on every
    /// path, or (only if the changes cancelled out) the original sketch.
    #[test]
    fn random_mutations_never_give_a_different_sketch(
        which in 0..5usize,
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        resize in prop_oneof![Just(None), (0usize..3000).prop_map(Some)],
        resign_after in any::<bool>(),
    ) {
        let s = &small_sketches()[which];
        let original = s.to_bytes();
        let mut c = original.clone();
        for (at, value) in &edits {
            let i = at.index(c.len());
            c[i] = *value;
        }
        if let Some(len) = resize {
            c.resize(len, 0xa5);
        }
        // With both checksums recomputed the field checks are reached: a
        // changed field must then be refused or describe a sketch that
        // re-serialises to exactly these bytes.
        if resign_after && c.len() >= 72 {
            resign(&mut c);
        }
        for (way, r) in load_all_ways(&c).into_iter().enumerate() {
            if let Ok(g) = r {
                let n = g.serialized_len() as usize;
                prop_assert!(c.len() >= n);
                prop_assert!(way != 0 || c.len() == n, "from_bytes took a prefix");
                prop_assert!(g.to_bytes() == c[..n], "loader {} gave another encoding", way);
                if !resign_after {
                    prop_assert!(g == *s, "loader {} accepted a corrupted input", way);
                }
            }
        }
    }
}

// ----------------------------------------------- one error per field -----

/// Each bad field, with the checksums recomputed so its own check is
/// reached, gives its own error naming it, on both in-memory paths.
#[test]
fn each_bad_field_gives_its_own_error_naming_it() {
    let mut double = builder(CountMinScheme::DoubleHashing, false, 3)
        .width(13)
        .depth(3)
        .build()
        .unwrap();
    feed(&mut double, 20);
    let d = double.to_bytes();
    let mut classic = builder(CountMinScheme::Independent, true, 3)
        .width(12)
        .depth(2)
        .build()
        .unwrap();
    feed(&mut classic, 20);
    let c = classic.to_bytes();
    let u32le = |v: u32| v.to_le_bytes().to_vec();
    let u64le = |v: u64| v.to_le_bytes().to_vec();
    type Case = (Vec<u8>, fn(&Error) -> bool, &'static str);
    let cases: Vec<Case> = vec![
        (
            patched(&d, 0, b"\x89LHBF\r\n\x1a"),
            |e| matches!(e, Error::Format(FormatError::BadMagic { .. })),
            "`magic`",
        ),
        (
            patched(&d, 8, &2u16.to_le_bytes()),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::UnsupportedVersion { found: 2, .. })
                )
            },
            "`version` 2",
        ),
        (
            {
                let mut x = d.clone();
                x[40] ^= 1; // the total, without re-signing
                x
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
            patched(&d, 10, &[0]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::UnknownId {
                        field: "scheme",
                        id: 0
                    })
                )
            },
            "`scheme` id 0",
        ),
        (
            patched(&d, 10, &[3]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::UnknownId {
                        field: "scheme",
                        id: 3
                    })
                )
            },
            "`scheme` id 3",
        ),
        (
            patched(&d, 11, &[2]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::UnknownId {
                        field: "hash",
                        id: 2
                    })
                )
            },
            "`hash` id 2",
        ),
        (
            patched(&d, 12, &[2]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange {
                        field: "conservative",
                        ..
                    })
                )
            },
            "`conservative` out of range",
        ),
        (
            patched(&d, 13, &[1]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::NonZeroPadding { field: "flags" })
                )
            },
            "`flags`",
        ),
        (
            patched(&d, 15, &[0x80]),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::NonZeroPadding { field: "reserved" })
                )
            },
            "`reserved`",
        ),
        (
            patched(&d, 16, &u32le(0)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange { field: "depth", .. })
                )
            },
            "`depth` out of range",
        ),
        (
            patched(&c, 16, &u32le(CountMinSketch::MAX_ROWS + 1)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange { field: "depth", .. })
                )
            },
            "`depth` out of range",
        ),
        (
            patched(&d, 20, &u32le(0)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange {
                        field: "copies",
                        ..
                    })
                )
            },
            "`copies` out of range",
        ),
        (
            // The classic sketch has one copy.
            patched(&c, 20, &u32le(2)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange {
                        field: "copies",
                        ..
                    })
                )
            },
            "one copy",
        ),
        (
            // 3 tables x 342 copies > CountMinSketch::MAX_ROWS.
            patched(&d, 20, &u32le(342)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange {
                        field: "copies",
                        ..
                    })
                )
            },
            "tables allowed",
        ),
        (
            patched(&c, 32, &u64le(0)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange { field: "width", .. })
                )
            },
            "`width` out of range",
        ),
        (
            patched(&c, 32, &u64le(u64::MAX)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange { field: "width", .. })
                )
            },
            "`width` out of range",
        ),
        (
            patched(&c, 32, &u64le(CountMinSketch::MAX_COUNTERS)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange { field: "width", .. })
                )
            },
            "counters allowed",
        ),
        (
            // 2^40 / 3 rounded up to a prime: 3 tables exceed CountMinSketch::MAX_COUNTERS.
            patched(
                &d,
                32,
                &u64le(
                    lesshash::internals::primes::next_prime(CountMinSketch::MAX_COUNTERS / 3)
                        .unwrap(),
                ),
            ),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange { field: "width", .. })
                )
            },
            "counters allowed",
        ),
        (
            patched(&d, 32, &u64le(14)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange { field: "width", .. })
                )
            },
            "prime width",
        ),
        (
            // depth 3 > width 2 under the two-hash scheme.
            patched(&d, 32, &u64le(2)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange { field: "depth", .. })
                )
            },
            "depth <= width",
        ),
        (
            patched(&d, 48, &u64le(13 * 3 * 8 + 8)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::SizeMismatch {
                        field: "payload_len",
                        ..
                    })
                )
            },
            "`payload_len`",
        ),
        (
            {
                let mut x = d.clone();
                x[70] ^= 1; // a counter, without re-signing
                x
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
            "`checksum` mismatch",
        ),
        (
            patched(&d, 40, &u64le(0)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange { field: "total", .. })
                )
            },
            "`total` out of range",
        ),
        (
            // One below the largest counter (the estimate of a heavy key is
            // at most the total; a file may not claim less).
            patched(&c, 40, &u64le(classic_max(&c) - 1)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange { field: "total", .. })
                )
            },
            "no counter can exceed",
        ),
        (
            // One counter raised above the total.
            patched(&d, 64 + 8 * 17, &u64le(double.total() + 1)),
            |e| {
                matches!(
                    e,
                    Error::Format(FormatError::OutOfRange { field: "total", .. })
                )
            },
            "counter 4 of table 1",
        ),
    ];
    for (bytes, is_expected, needle) in cases {
        for (way, r) in load_all_ways(&bytes).into_iter().enumerate() {
            let err = r
                .err()
                .unwrap_or_else(|| panic!("{needle}: way {way} accepted"));
            assert!(is_expected(&err), "{needle} way {way}: got {err:?}");
            assert!(
                err.to_string().contains(needle),
                "{needle} way {way}: {err}"
            );
        }
    }
    // The total may equal the largest counter: a single key's stream.
    let at_max = patched(&c, 40, &u64le(classic_max(&c)));
    assert!(CountMinSketch::from_bytes(&at_max).is_ok());
}

/// The largest counter of serialized sketch bytes.
fn classic_max(bytes: &[u8]) -> u64 {
    bytes[64..bytes.len() - 8]
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .max()
        .unwrap()
}

// ------------------------------------------------------- allocation bound --

/// The header of a classic sketch of 2^30 x 1024 = 2^40 counters
/// (`CountMinSketch::MAX_COUNTERS`, 8 TiB), followed by `extra` bytes.
fn huge_header_then(extra: usize) -> Vec<u8> {
    let s = builder(CountMinScheme::Independent, false, 1)
        .width(3)
        .depth(2)
        .build()
        .unwrap();
    let mut b = s.to_bytes()[..HEADER_LEN].to_vec();
    b[16..20].copy_from_slice(&CountMinSketch::MAX_ROWS.to_le_bytes());
    b[32..40].copy_from_slice(
        &(CountMinSketch::MAX_COUNTERS / u64::from(CountMinSketch::MAX_ROWS)).to_le_bytes(),
    );
    b[48..56].copy_from_slice(&(CountMinSketch::MAX_COUNTERS * 8).to_le_bytes());
    let h = xxh3_64(&b[..56]);
    b[56..64].copy_from_slice(&h.to_le_bytes());
    b.extend(std::iter::repeat_n(0u8, extra));
    b
}

/// A header promising 2^40 counters over a short stream fails with a
/// truncation error after allocating at most the eager limit, never the
/// 8 TiB; the whole-input and file loaders fail before allocating at all.
#[test]
fn a_huge_header_over_a_short_input_is_truncated_without_allocating_it() {
    let bytes = huge_header_then(1000);
    LARGEST.with(|c| c.set(0));
    let err = CountMinSketch::read_from(&bytes[..]).unwrap_err();
    let largest = LARGEST.with(Cell::get);
    assert!(
        matches!(
            err,
            Error::Format(FormatError::Truncated {
                field: "payload",
                got: 1064,
                ..
            })
        ),
        "{err}"
    );
    assert!(
        largest <= EAGER_LIMIT + 4096,
        "read_from allocated {largest} bytes at once"
    );

    LARGEST.with(|c| c.set(0));
    let err = CountMinSketch::from_bytes(&bytes).unwrap_err();
    let largest = LARGEST.with(Cell::get);
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
    assert!(largest < 4096, "from_bytes allocated {largest} bytes");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("huge.lhcm");
    std::fs::write(&path, &bytes).unwrap();
    LARGEST.with(|c| c.set(0));
    let err = CountMinSketch::read_file(&path).unwrap_err();
    let largest = LARGEST.with(Cell::get);
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
    assert!(largest < 64 << 10, "read_file allocated {largest} bytes");
}

/// Past the eager limit, the stream reader grows with the data: a stream
/// that delivers a little more than the limit fails after allocating about
/// twice what it delivered.
#[test]
fn the_stream_reader_grows_with_the_data() {
    let bytes = huge_header_then(EAGER_LIMIT + 1000);
    LARGEST.with(|c| c.set(0));
    let err = CountMinSketch::read_from(&bytes[..]).unwrap_err();
    let largest = LARGEST.with(Cell::get);
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
    assert!(
        largest <= 2 * EAGER_LIMIT + 4096,
        "read_from allocated {largest} bytes at once"
    );
}

// ------------------------------------------------------------------ files --

#[test]
fn write_file_is_atomic_and_read_file_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.lhcm");
    let sketches = small_sketches();
    let (a, b) = (&sketches[0], &sketches[4]);
    a.write_file(&path).unwrap();
    assert!(CountMinSketch::read_file(&path).unwrap() == *a);
    assert_eq!(std::fs::read(&path).unwrap(), a.to_bytes());
    b.write_file(&path).unwrap(); // replaces
    assert!(CountMinSketch::read_file(&path).unwrap() == *b);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["s.lhcm"], "no temporary file left behind");

    // A directory that does not exist: an I/O error, nothing written.
    let err = a.write_file(dir.path().join("missing/s.lhcm")).unwrap_err();
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

    // An existing directory is refused by name, and left alone.
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let err = a.write_file(&sub).unwrap_err();
    assert!(matches!(err, Error::UnusablePath { .. }), "{err}");
    assert!(sub.is_dir());

    // read_file checks the length before allocating.
    let bytes = a.to_bytes();
    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    let err = CountMinSketch::read_file(&path).unwrap_err();
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
    let err = CountMinSketch::read_file(&path).unwrap_err();
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
    let err = CountMinSketch::read_file(dir.path().join("nope")).unwrap_err();
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
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(names.is_empty(), "temporary files left: {names:?}");
}

/// `write_file` replaces what a symbolic link points to (the link stays)
/// and writes straight through a FIFO, as `BloomFilter::write_file` does.
#[cfg(unix)]
#[test]
fn write_file_follows_links_and_writes_through_fifos() {
    let dir = tempfile::tempdir().unwrap();
    let s = &small_sketches()[1];

    let target = dir.path().join("target.lhcm");
    std::fs::write(&target, b"old").unwrap();
    let link = dir.path().join("link.lhcm");
    std::os::unix::fs::symlink("target.lhcm", &link).unwrap();
    s.write_file(&link).unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&target).unwrap(), s.to_bytes());
    assert!(CountMinSketch::read_file(&link).unwrap() == *s);

    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|st| st.success()) {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        s.write_file(&fifo).unwrap();
        assert_eq!(reader.join().unwrap(), s.to_bytes());
        let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        assert!(
            std::os::unix::fs::FileTypeExt::is_fifo(&kind),
            "the FIFO was replaced"
        );
    }
}

// ----------------------------------------------------------------- golden --

/// The golden sketches: files written by format v1, which every later
/// version must load with the same estimates. Each is built from its
/// deterministic stream ([`feed`], 400 updates).
fn golden_sketches() -> Vec<(&'static str, CountMinSketch)> {
    // The two-hash copies construction (several XXH3-128 per key).
    let mut double = CountMinSketch::builder()
        .epsilon(0.2)
        .delta(0.01)
        .build()
        .unwrap();
    feed(&mut double, 400);
    // The classic sketch with conservative update, a width that is not
    // prime.
    let mut classic = builder(CountMinScheme::Independent, true, 7)
        .width(40)
        .depth(4)
        .build()
        .unwrap();
    feed(&mut classic, 400);
    vec![("count_min_v1", double), ("count_min_v1_classic", classic)]
}

fn golden_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The estimates the golden files record: keys "key-0" .. "key-127"
/// (seen and unseen) and 0u64 .. 63, space-separated.
fn estimates_string(s: &CountMinSketch) -> String {
    let strings = (0..128).map(|i| s.estimate(&format!("key-{i}")));
    let ints = (0u64..64).map(|i| s.estimate(&i));
    strings
        .chain(ints)
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Files written by v1 load forever: parameters, estimates and bytes.
#[test]
fn golden_files_load_and_estimate_as_recorded() {
    let expected = [
        // scheme, conservative, seed, (width, depth, copies)
        (
            CountMinScheme::DoubleHashing,
            false,
            DEFAULT_SEED,
            (29, 2, 3),
        ),
        (CountMinScheme::Independent, true, 7, (40, 4, 1)),
    ];
    for ((name, today), params) in golden_sketches().into_iter().zip(expected) {
        let path = golden_dir().join(format!("{name}.lhcm"));
        let bin = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{name}.lhcm: {e} (run regenerate_count_min_golden)"));
        let recorded =
            std::fs::read_to_string(golden_dir().join(format!("{name}.estimates"))).unwrap();
        let s = CountMinSketch::from_bytes(&bin).unwrap_or_else(|e| panic!("{name}: {e}"));
        let dims = s.dimensions();
        assert_eq!(
            (
                s.scheme(),
                s.is_conservative(),
                s.seed(),
                (dims.width, dims.depth, dims.copies)
            ),
            params,
            "{name}"
        );
        assert_eq!(estimates_string(&s), recorded.trim(), "{name}");
        assert!(CountMinSketch::read_from(&bin[..]).unwrap() == s, "{name}");
        assert!(CountMinSketch::read_file(&path).unwrap() == s, "{name}");
        // Building the same sketch today gives the same bytes: hashing,
        // indexing, the update rules and the encoding are all unchanged.
        assert!(today.to_bytes() == bin, "{name}: today's encoding differs");
        assert_eq!(s.total(), today.total(), "{name}");
    }
}

/// Writes the golden files that do not exist yet; never overwrites one (a
/// format or hashing change must fail the test above, not rewrite its
/// data). Run with
/// `cargo test --test count_min_format -- --ignored regenerate_count_min_golden`.
#[test]
#[ignore = "writes tests/data; run by hand after adding a golden sketch"]
fn regenerate_count_min_golden() {
    for (name, s) in golden_sketches() {
        let bin = golden_dir().join(format!("{name}.lhcm"));
        if bin.exists() {
            continue;
        }
        std::fs::write(&bin, s.to_bytes()).unwrap();
        std::fs::write(
            golden_dir().join(format!("{name}.estimates")),
            estimates_string(&s) + "\n",
        )
        .unwrap();
        println!("wrote {}", bin.display());
    }
}

/// `read_file` of a pipe: read as a stream, the same sketch; more bytes
/// after it, or fewer, refused as in a file.
#[cfg(unix)]
#[test]
fn read_file_reads_a_pipe_as_a_stream() {
    let mut sketch = builder(CountMinScheme::DoubleHashing, true, 3)
        .width(1009)
        .depth(4)
        .build()
        .unwrap();
    feed(&mut sketch, 500);
    let bytes = sketch.to_bytes();
    common::check_read_file_of_a_pipe(
        &bytes,
        |p| CountMinSketch::read_file(p),
        CountMinSketch::to_bytes,
    );
}
