//! `lesshash::spark` against Spark itself (filters and answers a real
//! Spark 4.3 made: tests/data/spark, with the script that made them) and
//! against a plain reference written from the format's description.

use lesshash::spark::{SparkBloomFilter, SparkVersion, murmur3};
use lesshash::{Error, FormatError};
use proptest::prelude::*;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/spark");

enum Key {
    Long(i64),
    Bytes(Vec<u8>),
}

fn key(kind: &str, v: &serde_json::Value) -> Key {
    match kind {
        "long" | "int" => Key::Long(v.as_i64().expect("an integer key")),
        "string" => Key::Bytes(v.as_str().expect("a string key").as_bytes().to_vec()),
        "binary" => {
            let hex = v.as_str().expect("hex");
            Key::Bytes(
                (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect(),
            )
        }
        other => panic!("unknown kind {other}"),
    }
}

/// Every filter Spark made reads here with its parameters, answers every
/// probe as Spark answered it, and is rebuilt from its keys byte for byte.
#[test]
fn spark_golden_files_read_answer_and_rebuild_identically() {
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{DATA}/cases.json")).unwrap())
            .unwrap();
    let cases = cases["cases"].as_array().unwrap();
    assert!(cases.len() >= 18);
    let mut checked = 0;
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let kind = case["kind"].as_str().unwrap();
        // Under Miri (CI's big-endian and 32-bit runs, whose point is byte
        // order, not coverage of Spark's parameters): both versions and
        // all four key kinds, seeds 0 and others, every probe of those.
        // All 18 cases took Miri about seven minutes.
        if cfg!(miri)
            && ![
                "v1_seed0_long",
                "v1_seed0_binary",
                "v2_seed12345_int",
                "v2_seedm7_string",
            ]
            .contains(&name)
        {
            continue;
        }
        checked += 1;
        let bytes = std::fs::read(format!("{DATA}/{name}.bin")).unwrap();
        let spark = SparkBloomFilter::from_spark_bytes(&bytes).unwrap();
        assert_eq!(spark.num_bits(), case["bits"].as_u64().unwrap(), "{name}");
        assert_eq!(
            i64::from(spark.seed()),
            case["seed"].as_i64().unwrap(),
            "{name}"
        );
        let version = match case["version"].as_str().unwrap() {
            "V1" => Some(SparkVersion::V1),
            "V2" => Some(SparkVersion::V2),
            _ => None, // Spark's default
        };
        if let Some(v) = version {
            assert_eq!(spark.version(), v, "{name}");
        }
        assert_eq!(spark.to_spark_bytes(), bytes, "{name}: written back");

        let answers = case["answers"].as_str().unwrap().as_bytes();
        let probes = case["probes"].as_array().unwrap();
        for (p, &want) in probes.iter().zip(answers) {
            let got = match key(kind, p) {
                Key::Long(k) => spark.contains_long(k),
                Key::Bytes(b) => spark.contains_bytes(&b),
            };
            assert_eq!(got, want == b'1', "{name}: probe {p}");
        }

        let mut rebuilt = SparkBloomFilter::with_bits(
            spark.version(),
            spark.num_bits(),
            spark.num_hashes(),
            spark.seed(),
        )
        .unwrap();
        for k in case["keys"].as_array().unwrap() {
            match key(kind, k) {
                Key::Long(k) => rebuilt.insert_long(k),
                Key::Bytes(b) => rebuilt.insert_bytes(&b),
            }
        }
        assert_eq!(
            rebuilt.to_spark_bytes(),
            bytes,
            "{name}: rebuilt from its keys"
        );
    }
    assert_eq!(checked, if cfg!(miri) { 4 } else { cases.len() });
}

/// Spark's sizing for `df.stat.bloomFilter(col, n, fpp)`: the golden
/// `stat_*` filters have the bits and k `with_fpp` gives.
#[test]
fn sizing_is_sparks() {
    for (name, n) in [("stat_long", 155), ("stat_string", 160)] {
        let bytes = std::fs::read(format!("{DATA}/{name}.bin")).unwrap();
        let spark = SparkBloomFilter::from_spark_bytes(&bytes).unwrap();
        let ours = SparkBloomFilter::with_fpp(spark.version(), n, 0.03).unwrap();
        assert_eq!(
            (ours.num_bits(), ours.num_hashes()),
            (spark.num_bits(), spark.num_hashes()),
            "{name}"
        );
    }
}

// --- the reference, from the description ------------------------------

/// Murmur3_x86_32 as Spark runs it, byte by byte.
fn ref_murmur(bytes: &[u8], seed: i32) -> i32 {
    fn round(h: u32, k: u32) -> u32 {
        let k = k
            .wrapping_mul(0xcc9e2d51)
            .rotate_left(15)
            .wrapping_mul(0x1b873593);
        (h ^ k)
            .rotate_left(13)
            .wrapping_mul(5)
            .wrapping_add(0xe6546b64)
    }
    let mut h = seed as u32;
    let whole = bytes.len() / 4 * 4;
    let mut i = 0;
    while i < whole {
        let k = u32::from(bytes[i])
            | u32::from(bytes[i + 1]) << 8
            | u32::from(bytes[i + 2]) << 16
            | u32::from(bytes[i + 3]) << 24;
        h = round(h, k);
        i += 4;
    }
    while i < bytes.len() {
        h = round(h, bytes[i] as i8 as i32 as u32);
        i += 1;
    }
    h ^= bytes.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85ebca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2ae35);
    (h ^ (h >> 16)) as i32
}

/// The k indexes, with i128 arithmetic brought back to Java's widths.
fn ref_indexes(version: SparkVersion, k: u32, bits: u64, h1: i32, h2: i32) -> Vec<u64> {
    let java_int = |x: i128| x.rem_euclid(1 << 32) as u32 as i32;
    let java_long = |x: i128| x.rem_euclid(1 << 64) as u64 as i64;
    let mut out = Vec::new();
    match version {
        SparkVersion::V1 => {
            for i in 1..=i128::from(k) {
                let mut c = java_int(i128::from(h1) + i * i128::from(h2));
                if c < 0 {
                    c = -c - 1;
                }
                out.push(c as u64 % bits);
            }
        }
        SparkVersion::V2 => {
            let mut c = i128::from(h1) * i128::from(i32::MAX);
            for _ in 0..k {
                c = i128::from(java_long(c + i128::from(h2)));
                let index = if c < 0 { -c - 1 } else { c };
                out.push(index as u64 % bits);
            }
        }
    }
    out
}

/// A plain filter: a bit per index, as the description says.
fn ref_filter(version: SparkVersion, k: u32, bits: u64, seed: i32, keys: &[Vec<u8>]) -> Vec<u64> {
    let mut words = vec![0u64; bits.div_ceil(64) as usize];
    for key in keys {
        let h1 = ref_murmur(key, seed);
        let h2 = ref_murmur(key, h1);
        for i in ref_indexes(version, k, bits, h1, h2) {
            words[(i / 64) as usize] |= 1 << (i % 64);
        }
    }
    words
}

fn version() -> impl Strategy<Value = SparkVersion> {
    prop_oneof![Just(SparkVersion::V1), Just(SparkVersion::V2)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn murmur_is_the_reference(bytes in prop::collection::vec(any::<u8>(), 0..40), seed in any::<i32>(), v in any::<i64>()) {
        prop_assert_eq!(murmur3::hash_bytes(&bytes, seed), ref_murmur(&bytes, seed));
        prop_assert_eq!(murmur3::hash_long(v, seed), ref_murmur(&v.to_le_bytes(), seed));
    }

    /// Inserts set the reference's bits, byte for byte of Spark's format,
    /// and every key inserted is found.
    #[test]
    fn filters_are_the_reference(
        version in version(),
        words in 1u64..40,
        k in 1u32..20,
        seed in any::<i32>(),
        keys in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..24), 0..60),
        longs in prop::collection::vec(any::<i64>(), 0..60),
    ) {
        let seed = if version == SparkVersion::V1 { 0 } else { seed };
        let bits = words * 64;
        let mut f = SparkBloomFilter::with_bits(version, bits, k, seed).unwrap();
        for key in &keys {
            f.insert_bytes(key);
        }
        for &l in &longs {
            f.insert_long(l);
        }
        let mut all: Vec<Vec<u8>> = keys.clone();
        all.extend(longs.iter().map(|l| l.to_le_bytes().to_vec()));
        let want = ref_filter(version, k, bits, seed, &all);
        let back = SparkBloomFilter::from_spark_bytes(&f.to_spark_bytes()).unwrap();
        prop_assert_eq!(&back, &f);
        let bytes = f.to_spark_bytes();
        let words_at = if version == SparkVersion::V1 { 12 } else { 16 };
        let got: Vec<u64> = bytes[words_at..].chunks(8).map(|w| u64::from_be_bytes(w.try_into().unwrap())).collect();
        prop_assert_eq!(got, want);
        for key in &keys {
            prop_assert!(f.contains_bytes(key));
        }
        let mut out = vec![false; longs.len()];
        f.contains_longs(&longs, &mut out).unwrap();
        prop_assert!(out.iter().all(|&b| b));
    }
}

/// Version 1 never sets a bit at or above 2^31 (its indexes are 31-bit),
/// version 2 does: the reference's indexes over a range above 2^31.
#[test]
fn version_1_indexes_stay_below_2_to_the_31() {
    let bits = 3u64 << 31;
    let (mut v1_max, mut v2_max) = (0, 0);
    for key in 0..2000i64 {
        let b = key.to_le_bytes();
        let h1 = ref_murmur(&b, 0);
        let h2 = ref_murmur(&b, h1);
        v1_max = v1_max.max(
            *ref_indexes(SparkVersion::V1, 7, bits, h1, h2)
                .iter()
                .max()
                .unwrap(),
        );
        v2_max = v2_max.max(
            *ref_indexes(SparkVersion::V2, 7, bits, h1, h2)
                .iter()
                .max()
                .unwrap(),
        );
    }
    assert!(v1_max < 1 << 31);
    assert!(v2_max >= 1 << 31);
}

#[test]
fn union_and_intersection_are_or_and_and_of_compatible_filters() {
    let mut a = SparkBloomFilter::with_bits(SparkVersion::V2, 640, 4, 9).unwrap();
    let mut b = a.clone();
    a.insert_long(1);
    b.insert_long(2);
    let mut u = a.clone();
    u.union(&b).unwrap();
    assert!(u.contains_long(1) && u.contains_long(2));
    assert_eq!(u.count_ones(), {
        let ones = |f: &SparkBloomFilter| {
            f.to_spark_bytes()[16..]
                .iter()
                .map(|b| b.count_ones() as u64)
                .sum::<u64>()
        };
        let (x, y) = (a.to_spark_bytes(), b.to_spark_bytes());
        let or: u64 = x[16..]
            .iter()
            .zip(&y[16..])
            .map(|(p, q)| (p | q).count_ones() as u64)
            .sum();
        assert_eq!(ones(&u), or);
        or
    });
    let mut i = u.clone();
    i.intersect(&a).unwrap();
    assert_eq!(i, a);
    for other in [
        SparkBloomFilter::with_bits(SparkVersion::V2, 704, 4, 9).unwrap(),
        SparkBloomFilter::with_bits(SparkVersion::V2, 640, 5, 9).unwrap(),
        SparkBloomFilter::with_bits(SparkVersion::V2, 640, 4, 8).unwrap(),
        SparkBloomFilter::with_bits(SparkVersion::V1, 640, 4, 0).unwrap(),
    ] {
        let before = u.clone();
        assert!(matches!(u.union(&other), Err(Error::Incompatible { .. })));
        assert!(matches!(
            u.intersect(&other),
            Err(Error::Incompatible { .. })
        ));
        assert_eq!(u, before, "unchanged after a refused merge");
    }
}

#[test]
fn malformed_bytes_are_named_errors() {
    let good = SparkBloomFilter::with_bits(SparkVersion::V2, 128, 3, 5)
        .unwrap()
        .to_spark_bytes();
    let format = |bytes: &[u8]| match SparkBloomFilter::from_spark_bytes(bytes) {
        Err(Error::Format(e)) => e,
        other => panic!("{other:?}"),
    };
    // Every truncation.
    for n in 0..good.len() {
        assert!(
            matches!(format(&good[..n]), FormatError::Truncated { .. }),
            "{n}"
        );
    }
    assert!(format(b"").to_string().contains("the input is empty"));
    // Trailing bytes.
    let mut long = good.clone();
    long.push(0);
    assert!(matches!(
        format(&long),
        FormatError::SizeMismatch {
            field: "input length",
            ..
        }
    ));
    // Bad version, k and word counts.
    let with = |at: usize, v: i32| {
        let mut b = good.clone();
        b[at..at + 4].copy_from_slice(&v.to_be_bytes());
        b
    };
    for (at, v, field) in [
        (0, 3, "version"),
        (0, 0, "version"),
        (0, -1, "version"),
        (4, 0, "numHashFunctions"),
        (4, -5, "numHashFunctions"),
        (4, 1 << 20, "numHashFunctions"),
        (12, 0, "numWords"),
        (12, -1, "numWords"),
    ] {
        match format(&with(at, v)) {
            FormatError::OutOfRange { field: f, .. } => assert_eq!(f, field, "{v}"),
            e => panic!("{field} = {v}: {e}"),
        }
    }
    // A huge word count is refused from the input's length, not allocated.
    assert!(matches!(
        format(&with(12, i32::MAX)),
        FormatError::Truncated { field: "words", .. }
    ));
    // A lesshash filter is not a Spark filter.
    let lesshash = lesshash::BloomFilter::with_fpr(10, 0.01)
        .unwrap()
        .to_bytes();
    assert!(matches!(
        format(&lesshash),
        FormatError::OutOfRange {
            field: "version",
            ..
        }
    ));
}

#[test]
fn bad_parameters_are_named() {
    let name = |r: Result<SparkBloomFilter, Error>| match r {
        Err(Error::InvalidParameter { name, .. }) => name,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        name(SparkBloomFilter::with_fpp(SparkVersion::V2, 0, 0.1)),
        "expected_items"
    );
    assert_eq!(
        name(SparkBloomFilter::with_fpp(SparkVersion::V2, 10, 1.0)),
        "fpp"
    );
    assert_eq!(
        name(SparkBloomFilter::with_fpp(SparkVersion::V2, 10, f64::NAN)),
        "fpp"
    );
    assert_eq!(
        name(SparkBloomFilter::with_bits(SparkVersion::V2, 0, 3, 0)),
        "bits"
    );
    assert_eq!(
        name(SparkBloomFilter::with_bits(SparkVersion::V2, 64, 0, 0)),
        "num_hashes"
    );
    assert_eq!(
        name(SparkBloomFilter::with_bits(SparkVersion::V1, 64, 3, 1)),
        "seed"
    );
    assert_eq!(
        name(SparkBloomFilter::with_bits(
            SparkVersion::V2,
            (i32::MAX as u64 + 1) * 64,
            3,
            0
        )),
        "bits"
    );
}

/// The batch paths (pipelined with prefetch above 1 MiB and k <= 32, one
/// key at a time otherwise; parallel) set and answer as the single calls.
#[test]
fn batches_are_the_single_calls() {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let longs: Vec<i64> = (0..20_000).map(|_| next() as i64).collect();
    let probes: Vec<i64> = longs
        .iter()
        .step_by(3)
        .copied()
        .chain((0..40_000).map(|_| next() as i64))
        .collect();
    let texts: Vec<Vec<u8>> = (0..5_000)
        .map(|i| format!("key-{i}-{}", next() % 1000).into_bytes())
        .collect();
    for version in [SparkVersion::V1, SparkVersion::V2] {
        // 2 MiB and k = 7 (pipelined); 2 MiB and k = 40; 1 KiB (neither).
        for (bits, k) in [(1u64 << 24, 7), (1 << 24, 40), (8192, 5)] {
            let seed = if version == SparkVersion::V2 { -99 } else { 0 };
            let mut single = SparkBloomFilter::with_bits(version, bits, k, seed).unwrap();
            for &l in &longs {
                single.insert_long(l);
            }
            for t in &texts {
                single.insert_bytes(t);
            }
            let mut batch = SparkBloomFilter::with_bits(version, bits, k, seed).unwrap();
            batch.insert_longs(&longs);
            batch.insert_bytes_batch(&texts);
            assert_eq!(batch, single, "{version:?} bits {bits} k {k}");
            let want: Vec<bool> = probes.iter().map(|&p| single.contains_long(p)).collect();
            let mut got = vec![false; probes.len()];
            single.contains_longs(&probes, &mut got).unwrap();
            assert_eq!(got, want);
            let mut par = vec![false; probes.len()];
            single.par_contains_longs(&probes, &mut par).unwrap();
            assert_eq!(par, want);
            let mut text_answers = vec![false; texts.len()];
            single
                .contains_bytes_batch(&texts, &mut text_answers)
                .unwrap();
            assert!(text_answers.iter().all(|&b| b));
            assert!(matches!(
                single.contains_longs(&probes, &mut got[1..]),
                Err(Error::LengthMismatch { .. })
            ));
        }
    }
}

/// Arrow arrays (feature `arrow`) insert and answer as Spark's `put` and
/// `mightContain` of the same values: Spark's own int and string filters
/// rebuilt from Int32, Int64, Utf8, Utf8View, LargeUtf8 and dictionary
/// arrays byte for byte; nulls skipped and answered null.
#[cfg(feature = "arrow")]
#[test]
fn arrow_arrays_are_sparks_keys() {
    use arrow_array::{
        Array, BinaryArray, DictionaryArray, Int32Array, Int64Array, LargeStringArray, StringArray,
        StringViewArray, types::Int16Type,
    };
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{DATA}/cases.json")).unwrap())
            .unwrap();
    for case in cases["cases"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let bytes = std::fs::read(format!("{DATA}/{name}.bin")).unwrap();
        let spark = SparkBloomFilter::from_spark_bytes(&bytes).unwrap();
        let keys = case["keys"].as_array().unwrap();
        let empty = || {
            SparkBloomFilter::with_bits(
                spark.version(),
                spark.num_bits(),
                spark.num_hashes(),
                spark.seed(),
            )
            .unwrap()
        };
        let arrays: Vec<std::sync::Arc<dyn Array>> = match case["kind"].as_str().unwrap() {
            "int" => {
                let v: Vec<Option<i32>> = keys
                    .iter()
                    .map(|k| Some(k.as_i64().unwrap() as i32))
                    .chain([None])
                    .collect();
                vec![
                    std::sync::Arc::new(Int32Array::from(v.clone())),
                    std::sync::Arc::new(Int64Array::from(
                        v.iter().map(|x| x.map(i64::from)).collect::<Vec<_>>(),
                    )),
                ]
            }
            "long" => vec![std::sync::Arc::new(Int64Array::from(
                keys.iter()
                    .map(|k| Some(k.as_i64().unwrap()))
                    .chain([None])
                    .collect::<Vec<_>>(),
            ))],
            "string" => {
                let v: Vec<Option<&str>> = keys.iter().map(|k| k.as_str()).chain([None]).collect();
                let dict: DictionaryArray<Int16Type> = v.iter().copied().collect();
                vec![
                    std::sync::Arc::new(StringArray::from(v.clone())),
                    std::sync::Arc::new(StringViewArray::from(v.clone())),
                    std::sync::Arc::new(LargeStringArray::from(v.clone())),
                    std::sync::Arc::new(dict),
                ]
            }
            "binary" => {
                let owned: Vec<Vec<u8>> = keys
                    .iter()
                    .map(|k| match key("binary", k) {
                        Key::Bytes(b) => b,
                        Key::Long(_) => unreachable!(),
                    })
                    .collect();
                let v: Vec<Option<&[u8]>> = owned
                    .iter()
                    .map(|b| Some(b.as_slice()))
                    .chain([None])
                    .collect();
                vec![std::sync::Arc::new(BinaryArray::from(v))]
            }
            _ => unreachable!(),
        };
        for array in arrays {
            let mut f = empty();
            let done = f.insert_array(array.as_ref()).unwrap();
            assert_eq!((done.inserted, done.nulls), (keys.len(), 1), "{name}");
            assert_eq!(f.to_spark_bytes(), bytes, "{name}: {}", array.data_type());
            let found = f.par_contains_array(array.as_ref()).unwrap();
            assert!(found.is_null(keys.len()));
            assert_eq!(found.true_count(), keys.len(), "{name}: every key found");
        }
    }
    let floats = arrow_array::Float64Array::from(vec![1.0]);
    let mut f = SparkBloomFilter::with_bits(SparkVersion::V2, 640, 3, 0).unwrap();
    assert!(matches!(
        f.insert_array(&floats),
        Err(Error::UnsupportedKeyType { .. })
    ));
    assert!(matches!(
        f.contains_array(&floats),
        Err(Error::UnsupportedKeyType { .. })
    ));
}

/// `expected_fpr(n)` against the measured rate of keys never inserted,
/// both versions, small and larger filters (seeded; the tolerance is five
/// binomial standard deviations plus 3% of the rate for the formula's
/// independence approximation of double hashing).
#[test]
fn expected_fpr_is_the_measured_rate() {
    let mix = |mut x: u64| {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    };
    for version in [SparkVersion::V1, SparkVersion::V2] {
        for (bits, k, n) in [
            (1u64 << 12, 3, 400u64),
            (1 << 16, 5, 5_000),
            (1 << 20, 7, 100_000),
        ] {
            let mut f = SparkBloomFilter::with_bits(version, bits, k, 0).unwrap();
            let keys: Vec<i64> = (0..n).map(|i| mix(i << 1) as i64).collect();
            f.insert_longs(&keys);
            let probes: Vec<i64> = (0..1_000_000u64)
                .map(|i| mix((i << 1) | 1) as i64)
                .collect();
            let mut out = vec![false; probes.len()];
            f.contains_longs(&probes, &mut out).unwrap();
            let hits = out.iter().filter(|&&b| b).count() as f64;
            let p = f.expected_fpr(n);
            let expected = p * probes.len() as f64;
            let tolerance = 5.0 * (expected * (1.0 - p)).sqrt() + 0.03 * expected;
            assert!(
                (hits - expected).abs() <= tolerance,
                "{version:?} m {bits} k {k} n {n}: {hits} false positives, expected {expected:.0} +- {tolerance:.0}"
            );
        }
    }
    // Version 1 above 2^31 bits: the formula uses 2^31.
    let big = SparkBloomFilter::with_bits(SparkVersion::V1, 1 << 32, 7, 0);
    if let Ok(v1) = big {
        let v2 = SparkBloomFilter::with_bits(SparkVersion::V2, 1 << 32, 7, 0).unwrap();
        assert_eq!(v1.reachable_bits(), 1 << 31);
        assert!(v1.expected_fpr(300_000_000) > 5.0 * v2.expected_fpr(300_000_000));
    }
}

/// `fill_fpr` is Spark's `expectedFpp`: the fill of the reachable bits to
/// the power k (0 when empty, 1 when full).
#[test]
fn fill_fpr_is_the_fill_to_the_power_k() {
    for version in [SparkVersion::V1, SparkVersion::V2] {
        let mut f = SparkBloomFilter::with_fpp(version, 1000, 0.03).unwrap();
        assert_eq!(f.fill_fpr(), 0.0);
        f.insert_longs(&(0..1000).collect::<Vec<i64>>());
        let fill = f.count_ones() as f64 / f.reachable_bits() as f64;
        assert_eq!(f.fill_fpr(), fill.powi(f.num_hashes() as i32));
        // At its sizing the filter's fill rate is near the target.
        assert!((0.01..0.06).contains(&f.fill_fpr()), "{}", f.fill_fpr());
    }
}
