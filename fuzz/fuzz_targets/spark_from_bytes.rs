//! Arbitrary bytes into `SparkBloomFilter::from_spark_bytes`. Never a
//! panic, and no allocation beyond what the input's length allows; every
//! error names its field; a filter accepted re-serialises to exactly the
//! bytes it took, finds every key inserted into it afterwards, and unions
//! and intersects with itself into itself.
//!
//! The seed corpus (fuzz/seeds/spark_from_bytes) holds filters a real
//! Spark wrote (tests/data/spark), both versions.

#![no_main]

use lesshash::spark::SparkBloomFilter;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match SparkBloomFilter::from_spark_bytes(data) {
        Err(e) => assert!(e.to_string().contains('`'), "error names no field: {e}"),
        Ok(mut f) => {
            assert_eq!(
                f.to_spark_bytes(),
                data,
                "accepted a non-canonical encoding"
            );
            let copy = f.clone();
            f.union(&copy).expect("a filter unions with itself");
            f.intersect(&copy).expect("a filter intersects with itself");
            assert!(f == copy);
            let key = i64::from_le_bytes(data[data.len() - 8..].try_into().unwrap());
            f.insert_long(key);
            f.insert_bytes(&data[..data.len().min(20)]);
            assert!(f.contains_long(key) && f.contains_bytes(&data[..data.len().min(20)]));
            let back = SparkBloomFilter::from_spark_bytes(&f.to_spark_bytes()).unwrap();
            assert!(back == f);
        }
    }
});
