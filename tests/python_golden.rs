//! Files written by the Python package (`python/tests/test_interop.py`,
//! committed under tests/data/python/) load in the Rust crate and answer
//! as Python said they would: Python `int` keys hash as `i64`/`u64`, `str`
//! keys as their UTF-8 bytes. The Python suite checks the reverse (this
//! crate's golden files load there) and that these files are byte for byte
//! what the package writes now.

use lesshash::{BloomFilter, HashFamily, Layout};

fn data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/python")
        .join(name)
}

/// Python ints above 2**63 added without their i64 twins (python/tests/
/// test_interop.py: single, a list, a uint64 array).
const U64_MEMBERS: [u64; 7] = [
    (1 << 63) + 12_345,
    u64::MAX - (1 << 32) - 6,
    (1 << 63) + 3_000_794,
    u64::MAX - 3_137,
    18_000_000_000_000_030_021,
    (1 << 63) + 16,
    u64::MAX - 123_657,
];

/// Every key and probe natively; every STEP-th under Miri (CI's big-endian
/// and 32-bit runs: a byte-order fault changes nearly every answer, and all
/// of them took Miri about two minutes a target).
const STEP: usize = if cfg!(miri) { 7 } else { 1 };

/// One file per layout in each hash family (`{layout}.lhbf` in XXH3-128,
/// `{layout}-folded-multiply.lhbf`).
#[test]
fn python_written_filters_answer_identically() {
    for family in HashFamily::ALL {
        for layout in Layout::ALL {
            check(layout, family);
        }
    }
}

fn check(layout: Layout, family: HashFamily) {
    {
        let name = match family {
            HashFamily::Xxh3 => layout.name().to_string(),
            other => format!("{}-{}", layout.name(), other.name()),
        };
        let f = BloomFilter::read_file(data(&format!("{name}.lhbf")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((f.layout(), f.hash_family()), (layout, family));
        assert_eq!(f.seed(), 2026);
        // The members, as Python added them (an int64 array, then ints).
        for i in (0..300i64).step_by(STEP) {
            assert!(f.contains(&(i * 7919 - 500_000)), "{name}: member {i}");
        }
        assert!(f.contains(&i64::MIN) && f.contains(&-1i64) && f.contains(&i64::MAX));
        assert!(f.contains(&(1u64 << 63)) && f.contains(&u64::MAX));
        // Those four are two keys (2**63 is i64::MIN's bytes, 2**64 - 1 is
        // -1's). These are not: Python's ints above 2**63 (single, a list,
        // a uint64 array) and one below 0 (single) whose twins, the same 8
        // bytes read as the other type, were not added. A Python encoding
        // other than `u64::to_le_bytes` / `i64::to_le_bytes` (big-endian,
        // say) leaves them out, golden files regenerated or not.
        for k in U64_MEMBERS {
            assert!(f.contains(&k), "{name}: u64 member {k}");
        }
        assert!(f.contains(&(-(1i64 << 62) - 11)), "{name}: i64 member");
        assert!(f.contains("python") && f.contains("é") && f.contains(""));
        assert_eq!(f.insert_calls(), 316, "{name}");
        // The probes' answers, as Python recorded them: i64 around 0, two
        // bounds, and u64 above 2**63 (twins probed nowhere else).
        let answers = std::fs::read_to_string(data(&format!("{name}.answers"))).unwrap();
        let answers = answers.trim().as_bytes();
        assert_eq!(answers.len(), 2502, "{name}");
        let probe = |i: usize| match i {
            0..2000 => f.contains(&(i as i64 - 1000)),
            2000 => f.contains(&(u64::MAX - 1)),
            2001 => f.contains(&(i64::MIN + 1)),
            _ => f.contains(&((1u64 << 63) + 7 * (i as u64 - 2002))),
        };
        let ours: Vec<u8> = (0..answers.len())
            .step_by(STEP)
            .map(|i| if probe(i) { b'1' } else { b'0' })
            .collect();
        let recorded: Vec<u8> = answers.iter().step_by(STEP).copied().collect();
        assert_eq!(ours, recorded, "{name}");
        // Some probes answer no: the comparison is not vacuous.
        assert!(ours.contains(&b'0') && ours.contains(&b'1'), "{name}");
    }
}
