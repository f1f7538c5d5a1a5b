//! Every index kernel is bit-identical to the scalar oracle: random and edge
//! inputs (1 block, 2 blocks, non-power-of-two block counts, every k, batch
//! lengths that are not multiples of the lane count, empty batches), and
//! by proptest. Kernels not available on this CPU are skipped (CI runs the
//! suite on AVX2 machines, default and `target-cpu=native` builds).
//!
//! Filters run on `Kernel::auto()` unless told otherwise: what the
//! environment asked for (checked by `env_selection_is_honoured`).

mod common;

use common::SplitMix64;
use lesshash::kernel::{self, BlockSpec, FlatSpec, Kernel};
use lesshash::{Enhancement, Scheme, rates::MAX_BITS};
use proptest::prelude::*;

const TWO_HASH: [Scheme; 3] = [
    Scheme::DoubleHashing,
    Scheme::EnhancedDoubleHashing(Enhancement::Square),
    Scheme::EnhancedDoubleHashing(Enhancement::Cube),
];

fn hashes(seed: u64, n: usize) -> Vec<u128> {
    let mut rng = SplitMix64(seed);
    let mut v: Vec<u128> = (0..n)
        .map(|_| (u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64()))
        .collect();
    // Edge hashes at the front: zeros, ones, one half zero.
    let edges = [
        0u128,
        u128::MAX,
        u128::from(u64::MAX),
        u128::from(u64::MAX) << 64,
        1,
        1 << 64,
        0x8000_0000_8000_0000_8000_0000_8000_0000,
    ];
    for (slot, e) in v.iter_mut().zip(edges) {
        *slot = e;
    }
    v
}

fn kernels() -> Vec<Kernel> {
    Kernel::available()
}

fn check_block(spec: &BlockSpec, k: u32, hs: &[u128]) {
    let n = hs.len();
    let (mut b0, mut p0) = (vec![0u64; n], vec![0u32; n * k as usize]);
    Kernel::Scalar
        .block_positions(spec, hs, &mut b0, &mut p0)
        .unwrap();
    for kern in kernels() {
        // Garbage in the outputs must be overwritten.
        let (mut b, mut p) = (vec![u64::MAX; n], vec![u32::MAX; n * k as usize]);
        kern.block_positions(spec, hs, &mut b, &mut p).unwrap();
        assert_eq!(b, b0, "{kern:?} blocks {spec:?} n={n}");
        assert_eq!(p, p0, "{kern:?} positions {spec:?} n={n}");
    }
}

fn check_flat(spec: &FlatSpec, k: u32, hs: &[u128]) {
    let n = hs.len() * k as usize;
    let mut o0 = vec![0u64; n];
    Kernel::Scalar.flat_indices(spec, hs, &mut o0).unwrap();
    for kern in kernels() {
        let mut o = vec![u64::MAX; n];
        kern.flat_indices(spec, hs, &mut o).unwrap();
        assert_eq!(o, o0, "{kern:?} {spec:?} keys={}", hs.len());
    }
}

#[test]
fn scalar_block_kernel_is_the_per_key_oracle() {
    // The batch oracle agrees with the per-key definition the single-key
    // path uses (scalar::block_mask): the positions (probe-major) set
    // exactly the mask's bits; split blocks have one bit per segment.
    let hs = hashes(1, 300);
    let n = hs.len();
    for split in [false, true] {
        for k in [1u32, 3, 8, 16, 64] {
            let spec = BlockSpec::new(13, k, split).unwrap();
            let (mut b, mut p) = (vec![0; n], vec![0u32; n * k as usize]);
            Kernel::Scalar
                .block_positions(&spec, &hs, &mut b, &mut p)
                .unwrap();
            for (j, (&h, &b)) in hs.iter().zip(&b).enumerate() {
                let h2 = (h >> 64) as u64;
                assert!(b < 13);
                let mut mask = [0u64; 8];
                for i in 0..k as usize {
                    let pos = p[i * n + j];
                    assert!(pos < 512);
                    if split {
                        let seg = 512 / k;
                        assert_eq!(pos / seg, i as u32, "probe {i} outside its segment");
                    }
                    mask[(pos / 64) as usize] |= 1 << (pos % 64);
                }
                assert_eq!(mask, kernel::scalar::block_mask(h2, k, split));
            }
        }
    }
}

#[test]
fn block_kernels_match_on_edges() {
    let hs = hashes(2, 257);
    for split in [false, true] {
        for blocks in [1u64, 2, 3, 7, 1000, 12_345, MAX_BITS / 512] {
            for k in 1..=64u32 {
                let spec = BlockSpec::new(blocks, k, split).unwrap();
                for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 33, 257] {
                    check_block(&spec, k, &hs[..len]);
                }
            }
        }
    }
}

#[test]
fn flat_kernels_match_on_edges() {
    let hs = hashes(3, 131);
    for scheme in TWO_HASH {
        for range in [
            1u64,
            2,
            3,
            5,
            64,
            1000,
            1 << 20,
            (1 << 20) + 1,
            // Either side of the 32-bit index lanes' bound (2^30), and
            // ranges whose sums would overflow 31 or 32 bits.
            (1 << 30) - 35,
            (1 << 30) - 1,
            1 << 30,
            (1 << 30) + 1,
            (1 << 31) - 1,
            (1 << 32) + 15,
            MAX_BITS - 1,
            MAX_BITS,
        ] {
            for k in (1..=16u32).chain([31, 64]) {
                let strides: &[u64] = if range.saturating_mul(u64::from(k)) <= MAX_BITS {
                    &[0, range]
                } else {
                    &[0]
                };
                for &stride in strides {
                    let spec = FlatSpec::new(scheme, range, stride, k).unwrap();
                    for len in [0usize, 1, 3, 4, 5, 8, 131] {
                        check_flat(&spec, k, &hs[..len]);
                    }
                }
            }
        }
    }
}

#[test]
fn bad_lengths_are_errors_naming_the_output() {
    let spec = BlockSpec::new(4, 8, true).unwrap();
    let hs = hashes(4, 10);
    for kern in kernels() {
        let e = kern
            .block_positions(&spec, &hs, &mut [0; 9], &mut [0; 80])
            .unwrap_err();
        assert!(e.to_string().contains("`blocks_out`"), "{e}");
        let e = kern
            .block_positions(&spec, &hs, &mut [0; 10], &mut [0; 79])
            .unwrap_err();
        assert!(e.to_string().contains("`positions_out`"), "{e}");
        let flat = FlatSpec::new(Scheme::default(), 100, 0, 3).unwrap();
        let e = kern.flat_indices(&flat, &hs, &mut [0; 29]).unwrap_err();
        assert!(e.to_string().contains("`out`"), "{e}");
    }
}

#[test]
fn env_selection_is_honoured() {
    // CI runs this binary once with LESSHASH_KERNEL=scalar.
    match kernel::env_kernel() {
        Ok(Some(k)) => assert_eq!(Kernel::auto(), k),
        Ok(None) => assert_eq!(Kernel::auto(), kernel::best_available()),
        Err(e) => {
            assert!(e.to_string().contains("LESSHASH_KERNEL"), "{e}");
            assert_eq!(Kernel::auto(), kernel::best_available());
        }
    }
    assert_eq!(lesshash::kernel_name(), Kernel::auto().name());
    let f = lesshash::BloomFilter::with_fpr(100, 0.01).unwrap();
    assert_eq!(f.kernel(), Kernel::auto());
    #[cfg(target_arch = "x86_64")]
    assert_eq!(
        Kernel::Avx2.is_available(),
        std::arch::is_x86_feature_detected!("avx2")
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn block_kernels_match_random(
        seed in any::<u64>(),
        len in 0usize..70,
        blocks in 1u64..5000,
        k in 1u32..=64,
        split in any::<bool>(),
    ) {
        let spec = BlockSpec::new(blocks, k, split).unwrap();
        check_block(&spec, k, &hashes(seed, len));
    }

    #[test]
    fn flat_kernels_match_random(
        seed in any::<u64>(),
        len in 0usize..40,
        range in 1u64..=MAX_BITS,
        k in 1u32..=64,
        scheme in prop::sample::select(TWO_HASH.to_vec()),
        partitioned in any::<bool>(),
    ) {
        let stride = if partitioned && range.saturating_mul(u64::from(k)) <= MAX_BITS { range } else { 0 };
        let spec = FlatSpec::new(scheme, range, stride, k).unwrap();
        check_flat(&spec, k, &hashes(seed, len));
    }
}
