//! Unit tests of the parent module (kept in their own file so that the
//! module itself stays readable).

use std::f64::consts::E;

use super::*;
use crate::util::primes::{is_prime, next_prime};

/// A two-hash sketch's (h1, h2): the low and the high half of the key's
/// 128-bit hash, each reduced to [0, width) by a multiply-high.
#[test]
fn two_hash_start_reduces_each_half() {
    let hash = (u128::from(u64::MAX) << 64) | u128::from(1u64 << 63);
    assert_eq!(two_hash_start(hash, 1000), (500, 999));
    assert_eq!(two_hash_start(0, 7), (0, 0));
    for width in [1u64, 3, 1 << 20] {
        let (h1, h2) = two_hash_start(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210, width);
        assert!(h1 < width && h2 < width);
    }
}

fn sieve(limit: usize) -> Vec<bool> {
    let mut prime = vec![true; limit];
    prime[0] = false;
    prime[1] = false;
    for i in 2..limit {
        if prime[i] {
            for j in (i * i..limit).step_by(i) {
                prime[j] = false;
            }
        }
    }
    prime
}

#[test]
fn is_prime_matches_a_sieve() {
    let table = sieve(200_000);
    for (n, &p) in table.iter().enumerate() {
        assert_eq!(is_prime(n as u64), p, "n = {n}");
    }
}

#[test]
fn is_prime_on_large_and_adversarial_values() {
    // Primes: 2^31-1, 2^61-1, the largest prime below 2^64.
    for p in [2_147_483_647u64, (1 << 61) - 1, u64::MAX - 58] {
        assert!(is_prime(p), "{p}");
    }
    // Strong pseudoprimes to several bases, Carmichael numbers, squares.
    for c in [
        3_215_031_751u64,
        3_825_123_056_546_413_051,
        561,
        1_105,
        4_759_123_141,
        1_000_000_007 * 998_244_353,
        u64::MAX,
    ] {
        assert!(!is_prime(c), "{c}");
    }
}

#[test]
fn next_prime_is_the_smallest_prime_at_or_above() {
    let table = sieve(10_000);
    for n in 0..9_000u64 {
        let p = next_prime(n).unwrap();
        assert!(p >= n && table[p as usize]);
        assert!((n..p).all(|c| !table[c as usize]));
    }
    assert_eq!(next_prime(u64::MAX - 58), Some(u64::MAX - 58));
    assert_eq!(next_prime(u64::MAX - 57), None);
}

#[test]
fn two_hash_sizing_follows_the_paper() {
    // epsilon = 0.01: w = smallest prime >= 2e/0.01 = 543.6 -> 547.
    let b = CountMinSketch::builder().epsilon(0.01);
    let dims = b.clone().delta(0.01).dimensions().unwrap();
    assert_eq!(dims.width, 547);
    assert_eq!(dims.copies, 1);
    // Smallest d with the bound <= delta, and d-1 does not reach it.
    assert!(two_hash_bound(0.01, 547, dims.depth) <= 0.01);
    assert!(two_hash_bound(0.01, 547, dims.depth - 1) > 0.01);
    // The "in particular" clause: d = ceil(ln(1/(eps(1 - 1/2e^2)))) reaches eps.
    let d_paper = (1.0 / (0.01 * (1.0 - 1.0 / (2.0 * E * E)))).ln().ceil() as u32;
    assert!(two_hash_bound(0.01, 547, d_paper) <= 0.01);
    // 2/(eps w^2) = 6.7e-4: delta below it needs copies, each failing
    // with probability <= eps; at most the paper's ceil(ln(1/delta)/ln(1/eps)).
    let dims = b.delta(1e-6).dimensions().unwrap();
    assert!(dims.copies > 1, "{dims:?}");
    let paper_copies = ((1.0f64 / 1e-6).ln() / (1.0f64 / 0.01).ln()).ceil() as u32;
    assert!(dims.copies <= paper_copies);
    let per_copy = two_hash_bound(0.01, 547, dims.depth);
    assert!(per_copy <= 0.01 && per_copy.powi(dims.copies as i32) <= 1e-6);
    assert!(dims.depth <= d_paper);
}

#[test]
fn classic_sizing_is_ceil_e_over_eps_by_ceil_ln_inv_delta() {
    let dims = CountMinSketch::builder()
        .scheme(CountMinScheme::Independent)
        .epsilon(0.001)
        .delta(0.01)
        .dimensions()
        .unwrap();
    assert_eq!(
        dims,
        CountMinDimensions {
            width: 2719,
            depth: 5,
            copies: 1
        }
    );
}

#[test]
fn fast_indices_equal_the_oracle() {
    for scheme in [CountMinScheme::Independent, CountMinScheme::DoubleHashing] {
        for (eps, delta) in [(0.01, 0.01), (0.01, 1e-7), (0.3, 0.2), (0.001, 0.05)] {
            let s = CountMinSketch::builder()
                .scheme(scheme)
                .epsilon(eps)
                .delta(delta)
                .seed(99)
                .build()
                .unwrap();
            for key in 0..500u64 {
                let want = reference_columns(scheme, &key.to_le_bytes(), 99, s.dimensions());
                assert_eq!(s.columns(&key), want, "{scheme:?} {eps} {delta} {key}");
            }
        }
    }
}

#[test]
fn scheme_names_round_trip() {
    for s in CountMinScheme::ALL {
        assert_eq!(s.name().parse::<CountMinScheme>(), Ok(s));
        assert_eq!(s.to_string(), s.name());
    }
    assert_eq!(
        CountMinScheme::ALL.map(CountMinScheme::name),
        ["independent", "double"]
    );
    for other in ["", "Double", "enhanced-cube", "standard", "double "] {
        assert!(other.parse::<CountMinScheme>().is_err(), "{other:?}");
    }
}
