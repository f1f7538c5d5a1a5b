//! Unit tests of the parent module (kept in their own file so that the
//! module itself stays readable).

use super::*;
use crate::util::limits::check_fpr;

/// Exact rate by enumerating every outcome of the k(n+1) probes.
fn brute_force_classic(m: u64, n: u64, k: u32) -> f64 {
    let probes = k as u64 * (n + 1);
    let outcomes = m.pow(probes as u32);
    let mut hits = 0u64;
    for mut code in 0..outcomes {
        let mut positions = Vec::with_capacity(probes as usize);
        for _ in 0..probes {
            positions.push(code % m);
            code /= m;
        }
        let (inserted, query) = positions.split_at((k as u64 * n) as usize);
        if query.iter().all(|q| inserted.contains(q)) {
            hits += 1;
        }
    }
    hits as f64 / outcomes as f64
}

fn brute_force_partitioned(part: u64, n: u64, k: u32) -> f64 {
    // Each sub-array is independent: rate = (Pr[query bit set])^k.
    let outcomes = part.pow((n + 1) as u32);
    let mut hits = 0u64;
    for mut code in 0..outcomes {
        let q = code % part;
        code /= part;
        let mut set = false;
        for _ in 0..n {
            set |= code % part == q;
            code /= part;
        }
        hits += u64::from(set);
    }
    (hits as f64 / outcomes as f64).powi(k as i32)
}

#[test]
fn yu_table_1_example() {
    assert!((classic_fpr_exact(2, 1, 2) - 10.0 / 16.0).abs() < 1e-15);
    assert!((bloom_fpr(2, 1, 2) - 9.0 / 16.0).abs() < 1e-15);
    assert!((brute_force_classic(2, 1, 2) - 10.0 / 16.0).abs() < 1e-15);
}

#[test]
fn exact_equals_enumeration() {
    for (m, n, k) in [
        (2, 1, 2),
        (3, 1, 2),
        (3, 2, 2),
        (4, 1, 3),
        (5, 2, 2),
        (4, 2, 2),
        (6, 1, 3),
        (3, 3, 2),
        (7, 1, 2),
        (2, 2, 3),
        (8, 1, 2),
        (5, 1, 4),
    ] {
        let exact = classic_fpr_exact(m, n, k);
        let brute = brute_force_classic(m, n, k);
        assert!(
            (exact - brute).abs() < 1e-12,
            "m={m} n={n} k={k}: {exact} vs {brute}"
        );
        assert!(
            exact >= bloom_fpr(m, n, k) - 1e-15,
            "Bloom's formula is a lower bound"
        );
    }
}

#[test]
fn partitioned_equals_enumeration() {
    for (part, n, k) in [(2, 1, 2), (3, 2, 2), (5, 3, 3), (4, 4, 1), (7, 2, 4)] {
        let exact = partitioned_fpr(part * u64::from(k), n, k);
        let brute = brute_force_partitioned(part, n, k);
        assert!((exact - brute).abs() < 1e-12, "part={part} n={n} k={k}");
    }
}

#[test]
fn all_set_probability_matches_exact_rationals() {
    // Reference values from exact rational arithmetic (Python fractions):
    // sum_l (-1)^l C(j,l) Fraction(m-l, m)**t.
    for (m, t, j, exact) in [
        (1000u64, 700.0, 5u32, 0.03216718918271135),
        (100, 350.0, 12, 0.6951596113791527),
        // Here plain inclusion-exclusion returns 2.56e-13: cancellation.
        (64, 20.0, 16, 7.519218687006871e-13),
        (2000, 300.0, 40, 5.482281655662188e-36),
        (5000, 4000.0, 30, 1.6121972721242597e-08),
    ] {
        let chosen = all_set_probability(m as f64, t, j);
        let occupancy = occupancy_all_set_probability(m as f64, t, j);
        for got in [chosen, occupancy] {
            assert!(
                (got - exact).abs() <= 1e-9 * exact,
                "m={m} t={t} j={j}: {got} vs {exact}"
            );
        }
    }
}

#[test]
fn exact_is_stable_for_large_n_and_k() {
    // n = 1e9 keys at 9.6 bits/key: exact ~ asymptotic (difference O(k/m)).
    let n = 1_000_000_000u64;
    let m = 9_600_000_000u64;
    let exact = classic_fpr_exact(m, n, 7);
    let asym = classic_fpr(m, n, 7);
    assert!((exact / asym - 1.0).abs() < 1e-6, "{exact} vs {asym}");
    // p = 1e-12 territory: k = 40, cancellation-prone, must stay sane.
    let m = 58_000_000u64;
    let n = 1_000_000u64;
    let exact = classic_fpr_exact(m, n, 40);
    let asym = classic_fpr(m, n, 40);
    assert!(
        exact.is_finite() && (exact / asym - 1.0).abs() < 1e-3,
        "{exact} vs {asym}"
    );
}

#[test]
fn optimal_hashes_matches_the_paper() {
    for (c, k) in [(4u64, 3u32), (8, 6), (12, 8), (16, 11)] {
        assert_eq!(optimal_hashes(c * 1000, 1000), k, "c = {c}");
    }
}

#[test]
fn lower_bound_ratio() {
    // The optimal classic filter spends log2(e) times the bound.
    let n = 1_000_000;
    let m = (n as f64 * 0.01f64.ln().abs() / (LN_2 * LN_2)) as u64;
    let r = ratio_to_lower_bound(m, n, 0.01);
    assert!((r - std::f64::consts::LOG2_E).abs() < 1e-3, "{r}");
    // The bound itself: n log2(1/p) bits (1000 keys at 1/1024: 10 bits each).
    assert_eq!(space_lower_bound(1000, 1.0 / 1024.0), 10_000.0);
    assert!((space_lower_bound(n, 0.01) - n as f64 * 100f64.log2()).abs() < 1e-6);
}

#[test]
fn smallest_bits_is_minimal() {
    let p = 0.01;
    let m = smallest_bits(p, 1, |m| classic_fpr(m, 1000, 7)).unwrap();
    assert!(classic_fpr(m, 1000, 7) <= p);
    assert!(classic_fpr(m - 1, 1000, 7) > p);
    assert_eq!(
        smallest_bits(1e-300, 1, |m| classic_fpr(m, 1 << 40, 7)),
        None
    );
}

/// Every flat-layout rate function, for the totality tests.
type Rate = fn(u64, u64, u32) -> f64;
const RATES: [(&str, Rate); 4] = [
    ("classic", classic_fpr),
    ("bloom", bloom_fpr),
    ("exact", classic_fpr_exact),
    ("partitioned", partitioned_fpr),
];

#[test]
fn degenerate_arguments_give_rates_not_panics() {
    for (name, rate) in RATES {
        assert_eq!(rate(512, 1, 0), 1.0, "{name}: k = 0 rejects nothing");
        assert_eq!(rate(512, 0, 0), 1.0, "{name}: k = 0, empty");
        assert_eq!(rate(512, 0, 7), 0.0, "{name}: empty filter");
        assert_eq!(rate(0, 5, 7), 1.0, "{name}: no bits");
        for (m, n, k) in [(1, u64::MAX, u32::MAX), (u64::MAX, 1, 1), (64, 3, 65)] {
            let r = rate(m, n, k);
            assert!((0.0..=1.0).contains(&r), "{name}({m}, {n}, {k}) = {r}");
        }
    }
}

#[test]
fn huge_k_is_not_wrapped_to_a_negative_power() {
    // `powi(k as i32)` once gave inf at k = 2^31 and 16384.5 (1 / fill) at
    // k = u32::MAX for (2^46, 1, k): the rates must be total, in [0, 1].
    for (name, rate) in RATES {
        for k in [1 << 31, u32::MAX, i32::MAX as u32, 1 << 20] {
            for (m, n) in [
                (MAX_BITS, 1),
                (MAX_BITS, 1 << 30),
                (1 << 20, 1 << 40),
                (64, 1),
            ] {
                let r = rate(m, n, k);
                assert!((0.0..=1.0).contains(&r), "{name}({m}, {n}, {k}) = {r}");
            }
        }
        // Past the fill at which every bit is set, more probes only lower
        // the rate: at 2^46 bits and one key it is ~(k / 2^46)^k, i.e. 0.
        assert_eq!(rate(MAX_BITS, 1, 1 << 31), 0.0, "{name}");
        assert_eq!(rate(MAX_BITS, 1, u32::MAX), 0.0, "{name}");
    }
    assert_eq!(pow_k(0.5, u32::MAX), 0.0);
    assert_eq!(pow_k(1.0, u32::MAX), 1.0);
    assert_eq!(pow_k(f64::NAN, 3), 1.0);
}

#[test]
fn exact_beyond_max_hashes_is_blooms_lower_bound() {
    // The Stirling row is only summed up to MAX_HASHES; beyond it the
    // function must not return a truncated sum (which was ~0 here).
    let (m, n) = (100_000, 1000);
    for k in [65, 100, 1000] {
        assert_eq!(classic_fpr_exact(m, n, k), bloom_fpr(m, n, k), "k = {k}");
    }
    let at_max = classic_fpr_exact(m, n, MAX_HASHES);
    assert!(at_max >= bloom_fpr(m, n, MAX_HASHES) && at_max > 0.0);
}

#[test]
fn exact_at_tiny_fill_and_large_k_is_not_truncated() {
    // Found by the builder_params fuzz target: with ~0.002 expected
    // probes per bit group, the occupancy window stopped at s ~ 62, below
    // j = 63, so the j = 63 term (the dominant one) was dropped and the
    // "exact" rate fell below Bloom's lower bound.
    for (m, n) in [(1u64 << 46, 1u64 << 25), (1 << 40, 1000), (1 << 30, 1)] {
        for k in 1..=MAX_HASHES {
            let exact = classic_fpr_exact(m, n, k);
            let bloom = bloom_fpr(m, n, k);
            assert!(
                exact >= bloom * (1.0 - 1e-6),
                "m = {m}, n = {n}, k = {k}: exact {exact:e} < bloom {bloom:e}"
            );
        }
    }
}

#[test]
fn pair_collision_rate_is_total() {
    // Found by builder_params: r = 2 makes q = 1, and n = 0 times
    // ln(0) = -inf was NaN.
    assert_eq!(pair_collision_rate(2, 0, 2.0), 0.0);
    assert_eq!(pair_collision_rate(2, 5, 2.0), 1.0);
    assert_eq!(pair_collision_rate(0, 5, 1.0), 1.0);
    for (r, n, s) in [(2, 1, 1.0), (3, 7, 2.0), (1 << 40, u64::MAX, 2.0)] {
        for s in [s, -1.0, f64::NAN, f64::INFINITY] {
            let p = pair_collision_rate(r, n, s);
            assert!((0.0..=1.0).contains(&p), "({r}, {n}, {s}) = {p}");
        }
    }
}

#[test]
fn fpr_validation() {
    for bad in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        let err = check_fpr(bad).unwrap_err().to_string();
        assert!(err.contains("`fpr`"), "{err}");
    }
    assert!(check_fpr(1e-12).is_ok());
}

/// The bounded, guessed search equals the plain search for every start and
/// bound, on real rates (classic exact, blocked, partitioned) and steps of
/// 1, 7 and 512: the same m, or `None` exactly when that m is not below the
/// bound.
#[test]
fn smallest_bits_search_equals_the_plain_search() {
    type Rate = Box<dyn Fn(u64) -> f64>;
    let rates: [(&str, u64, Rate); 4] = [
        ("classic", 1, Box::new(|m| classic_fpr_exact(m, 1000, 7))),
        ("partitioned", 7, Box::new(|m| partitioned_fpr(m, 5000, 7))),
        ("blocked", 512, Box::new(|m| blocked_fpr(m, 20_000, 6))),
        (
            "split-block",
            512,
            Box::new(|m| split_block_fpr(m, 300, 11)),
        ),
    ];
    for (name, step, fpr) in &rates {
        for p in [0.3, 0.01, 1e-4, 1e-7] {
            let want = smallest_bits(p, *step, fpr);
            for guess in [0u64, 1, 512, 9_000, 1 << 20, 1 << 40, u64::MAX] {
                assert_eq!(
                    smallest_bits_search(p, *step, guess, None, fpr),
                    want,
                    "{name} p={p} guess={guess}"
                );
            }
            let Some(m) = want else { continue };
            for below in [1, m - 1, m, m + 1, m + *step, 2 * m, u64::MAX] {
                let expect = (m < below).then_some(m);
                assert_eq!(
                    smallest_bits_search(p, *step, m, Some(below), fpr),
                    expect,
                    "{name} p={p} below={below}"
                );
            }
        }
    }
}
