//! Files written by the Python package (`python/tests/test_interop.py`,
//! committed under tests/data/python/) load in the Rust crate and answer
//! as Python said they would: Python `int` keys hash as `i64`/`u64`, `str`
//! keys as their UTF-8 bytes. The Python suite checks the reverse (this
//! crate's golden files load there) and that these files are byte for byte
//! what the package writes now.

use lesshash::{BloomFilter, Layout};

fn data(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/python")
        .join(name)
}

#[test]
fn python_written_filters_answer_identically() {
    for layout in Layout::ALL {
        let name = layout.name();
        let f = BloomFilter::read_file(data(&format!("{name}.lhbf")))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(f.layout(), layout);
        assert_eq!(f.seed(), 2026);
        // The members, as Python added them (an int64 array, then ints).
        for i in 0..300i64 {
            assert!(f.contains(&(i * 7919 - 500_000)), "{name}: member {i}");
        }
        assert!(f.contains(&i64::MIN) && f.contains(&-1i64) && f.contains(&i64::MAX));
        assert!(f.contains(&(1u64 << 63)) && f.contains(&u64::MAX));
        assert!(f.contains("python") && f.contains("é") && f.contains(""));
        assert_eq!(f.insert_calls(), 308, "{name}");
        // The probes' answers, as Python recorded them.
        let answers = std::fs::read_to_string(data(&format!("{name}.answers"))).unwrap();
        let probes_i64 = (-1000i64..1000).map(|k| f.contains(&k));
        let ours: String = probes_i64
            .chain([f.contains(&(u64::MAX - 1)), f.contains(&(i64::MIN + 1))])
            .map(|b| if b { '1' } else { '0' })
            .collect();
        assert_eq!(ours, answers.trim(), "{name}");
        // Some probes answer no: the comparison is not vacuous.
        assert!(ours.contains('0') && ours.contains('1'), "{name}");
    }
}
