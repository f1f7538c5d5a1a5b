//! Arbitrary bytes into the Count-Min sketch's loaders: `from_bytes` and
//! `read_from` (whole and in short reads). Never a panic; when a loader
//! accepts the bytes, the sketch re-serialises to exactly the bytes it
//! took (`to_bytes` and `write_to`), every loader agrees, no estimate
//! exceeds the total, and the sketch still round-trips after an update and
//! a merge with itself (what a loaded sketch can do must stay loadable).
//!
//! The seed corpus (fuzz/seeds/count_min_from_bytes) holds valid sketches
//! of both schemes and update rules, so the mutations start past the magic
//! and the version; each input is also checked with both checksums
//! recomputed, so mutated fields reach the field checks rather than
//! stopping at a checksum mismatch.

#![no_main]

use std::io::Read;

use lesshash::CountMinSketch;
use libfuzzer_sys::fuzz_target;

/// The header's length (every lesshash format).
const HEADER_LEN: usize = 64;

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

/// A loaded sketch obeys the library's invariants and can be saved again.
fn check_sketch(s: &CountMinSketch, seed: u8) {
    for key in 0u64..64 {
        assert!(s.estimate(&key) <= s.total(), "estimate above the total");
    }
    let mut t = s.clone();
    t.add(&seed, u64::from(seed) << 56);
    if !t.is_conservative() {
        let copy = t.clone();
        t.merge(&copy).expect("a sketch merges with itself");
    }
    let back = CountMinSketch::from_bytes(&t.to_bytes())
        .unwrap_or_else(|e| panic!("an updated loaded sketch does not reload: {e}"));
    assert!(back == t, "the updated sketch reloads differently");
}

fn check(data: &[u8]) {
    let loaded = CountMinSketch::from_bytes(data);
    let streamed = CountMinSketch::read_from(data);
    let trickled = CountMinSketch::read_from(Trickle {
        data,
        max: 1 + usize::from(data.first().copied().unwrap_or(0) % 13),
    });

    // Every error names the field it rejected.
    for e in [&loaded, &streamed, &trickled]
        .into_iter()
        .filter_map(|r| r.as_ref().err())
    {
        assert!(e.to_string().contains('`'), "error names no field: {e}");
    }

    // The streaming reader stops after one sketch; short reads change nothing.
    match (&streamed, &trickled) {
        (Ok(a), Ok(b)) => assert!(a == b),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("read_from answers depend on read sizes: {a:?} vs {b:?}"),
    }

    if let Ok(sketch) = &loaded {
        // Accepted whole: the bytes are the sketch's canonical encoding.
        assert_eq!(sketch.serialized_len(), data.len() as u64);
        assert_eq!(
            sketch.to_bytes(),
            data,
            "from_bytes accepted a non-canonical encoding"
        );
        let mut written = Vec::new();
        sketch.write_to(&mut written).unwrap();
        assert_eq!(written, data, "write_to differs from to_bytes");
        let streamed = streamed
            .as_ref()
            .expect("read_from rejected what from_bytes took");
        assert!(streamed == sketch);
        check_sketch(sketch, data[HEADER_LEN]);
    }

    if let Ok(sketch) = &streamed {
        // The streaming reader took a prefix: it must be a sketch on its
        // own, encoded canonically.
        let len = sketch.serialized_len() as usize;
        assert!(len <= data.len(), "read_from accepted a truncated input");
        let again = CountMinSketch::from_bytes(&data[..len]).expect("prefix read_from took");
        assert!(again == *sketch);
        assert_eq!(sketch.to_bytes(), &data[..len]);
    }
}

/// The input as it is, then with both checksums recomputed (the header's
/// over bytes 0..56, the trailer's over everything before the last 8
/// bytes).
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
