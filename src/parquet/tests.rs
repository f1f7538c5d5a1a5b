//! Unit tests of the parent module (kept in their own file so that the
//! module itself stays readable).

use super::*;

#[test]
fn simd_mask_equals_the_oracle() {
    let mut x = 0x1234_5678_9abc_def0u64;
    for _ in 0..10_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        assert_eq!(mask_simd(x).to_array(), mask(x), "{x:#x}");
    }
    for x in [0, 1, u64::MAX, 1 << 31, 1 << 32] {
        assert_eq!(mask_simd(x).to_array(), mask(x));
    }
}

#[test]
fn batch_paths_equal_the_scalar_oracle() {
    for blocks in [1u64, 2, 3, 7, 64, 1000] {
        let mut scalar = ParquetFilter::new(blocks).unwrap();
        let mut batch = scalar.clone();
        let keys: Vec<u64> = (0..3000u64).map(|i| i * 2).collect();
        for k in &keys {
            scalar.insert(k);
        }
        batch.insert_batch(&keys);
        assert_eq!(scalar, batch, "blocks={blocks}");
        let probes: Vec<u64> = (0..6000u64).collect();
        let mut out = vec![false; probes.len()];
        batch.contains_batch(&probes, &mut out).unwrap();
        for (p, got) in probes.iter().zip(&out) {
            assert_eq!(scalar.contains(p), *got, "blocks={blocks} key={p}");
        }
        assert!(keys.iter().all(|k| batch.contains(k)));
    }
}

#[test]
fn every_block_is_reachable_and_index_in_range() {
    for z in [1u64, 3, 5, 1 << 20, MAX_BLOCKS] {
        assert_eq!(block_index(0, z), 0);
        assert_eq!(block_index(u64::MAX, z), z - 1);
    }
}

#[test]
fn bitset_roundtrip_and_bad_lengths() {
    let mut f = ParquetFilter::new(5).unwrap();
    f.insert("x");
    let bytes = f.to_parquet_bitset();
    assert_eq!(bytes.len(), 160);
    let mut streamed = Vec::new();
    f.write_parquet_bitset(&mut streamed).unwrap();
    assert_eq!(streamed, bytes);
    assert_eq!(ParquetFilter::from_parquet_bitset(&bytes).unwrap(), f);
    for bad in [0usize, 1, 31, 33] {
        let err = ParquetFilter::from_parquet_bitset(&vec![0; bad])
            .unwrap_err()
            .to_string();
        assert!(err.contains("`bitset`"), "{err}");
    }
    assert!(ParquetFilter::new(0).is_err());
    assert!(ParquetFilter::new(MAX_BLOCKS + 1).is_err());
    for p in [0.0, 1.0, -1.0, f64::NAN] {
        assert!(ParquetFilter::with_fpr(10, p).is_err());
        assert!(ParquetFilter::with_ndv_fpp(10, p).is_err());
    }
}

#[test]
fn fpr_formula_limits() {
    assert_eq!(sbbf_fpr(10, 0), 0.0);
    // About one value per block: a query must hit each word's few set
    // bits, (1/32)^8 per value in its block.
    let one = sbbf_fpr(1 << 20, 1 << 20);
    assert!(one > 0.0 && one < 1e-6, "{one}");
    assert!(sbbf_fpr(1, 1 << 20) > 0.999);
    // 10 bits/key gives 1.265% (sbbf-rs-safe, at this size, measures
    // 1.266%: docs/benchmarks.md, "lesshash against other Rust Bloom
    // filters").
    let n = 1_000_000u64;
    let z = n * 10 / 256;
    let p = sbbf_fpr(z, n);
    assert!((p - 0.01265).abs() < 0.0003, "{p}");
}

#[test]
fn with_fpr_is_the_smallest_meeting_the_target() {
    for (n, p) in [
        (1u64, 0.01),
        (1000, 0.01),
        (100_000, 0.001),
        (1_000_000, 0.01),
    ] {
        let f = ParquetFilter::with_fpr(n, p).unwrap();
        let z = f.num_blocks();
        assert!(sbbf_fpr(z, n) <= p);
        assert!(z == 1 || sbbf_fpr(z - 1, n) > p);
    }
}
