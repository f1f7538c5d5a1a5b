//! Measured false-positive rates against the layouts' exact formulas.
//!
//! Tolerance: a measured rate over Q queries of one filter deviates from the
//! formula by (a) the binomial noise of the queries, variance p(1-p)/Q, and
//! (b) the filter's own randomness: the number X of set bits varies between
//! filters, and the rate given the filter is about (X/m)^k, so its relative
//! variance is k^2 Var(X)/X^2 (classic) or k Var(X_i)/X_i^2 (partitioned,
//! sub-arrays independent). Var(X) is the occupancy variance of t probes in
//! r bins: r e^{-t/r} (1 - (1 + t/r) e^{-t/r}). The band is Z = 4.5 standard
//! deviations of the sum of both.

mod common;

use common::{Z, binomial_variance, build, members, non_members};
use lesshash::internals::rates::classic_enumerated;
use lesshash::{BloomFilter, Enhancement, Layout, Scheme, rates};

const N: u64 = 100_000;
const QUERIES: usize = 1_000_000;

struct Measured {
    rate: f64,
    variance: f64,
}

/// Filters of `N` keys at c bits/key, measured on `queries(expected)`
/// non-members each: one filter for the flat layouts; eight seeded filters
/// for the blocked ones, whose rate varies from filter to filter with the
/// blocks' loads (+-12% at c = 16 for one filter, a third of that for the
/// mean of eight).
fn measure(
    layout: Layout,
    scheme: Scheme,
    c: u64,
    seed: u64,
    queries: &impl Fn(f64) -> usize,
) -> (Measured, f64) {
    let filters: usize = if layout.is_blocked() { 8 } else { 1 };
    let m = c * N;
    let k = rates::optimal_hashes(m, N);
    let (mut hits, mut total, mut expected, mut bits) = (0, 0, 0.0, 0);
    for i in 0..filters {
        let seed = seed + 1_000_000 * i as u64;
        let mut f = build(layout, scheme, m, k, seed);
        f.insert_batch(&members(seed, N as usize));
        (expected, bits) = (layout.fpr(scheme, f.num_bits(), N, k), f.num_bits());
        // The queries are split over the filters: the binomial part of the
        // band stays that of `queries(expected)`.
        let q = queries(expected).div_ceil(filters);
        let mut out = vec![false; q];
        f.contains_batch(&non_members(seed, q), &mut out).unwrap();
        hits += out.iter().filter(|&&x| x).count();
        total += q;
    }
    let rate = hits as f64 / total as f64;
    let variance = binomial_variance(expected, total)
        + expected * expected * common::fill_relative_variance(layout, bits, N, k) / filters as f64;
    (Measured { rate, variance }, expected)
}

/// c = 8 and 16 (k = 6 and 11), every layout and scheme, at least 8,000
/// expected false positives per filter (1e6 queries at c = 8, 1.7e7 at
/// c = 16): bands of +-3.4% (c = 8) and +-5% (c = 16) of the rate (1e6
/// queries at c = 16 gave +-21%); the long run below gives +-3.2%.
#[test]
fn every_scheme_matches_its_layouts_exact_rate() {
    matches_exact_rate(&|f| ((8e3 / f).ceil() as usize).max(QUERIES));
}

/// [`every_scheme_matches_its_layouts_exact_rate`] with 2e4 / f queries per
/// filter (about 20,000 false positives each): `cargo test --release
/// --test false_positive_rate -- --ignored long`.
#[test]
#[ignore = "long statistical run (a minute or two in release); see docs/testing.md"]
fn long_every_scheme_matches_its_layouts_exact_rate() {
    matches_exact_rate(&|f| ((2e4 / f).ceil() as usize).max(QUERIES));
}

fn matches_exact_rate(queries: &impl Fn(f64) -> usize) {
    for c in [8u64, 16] {
        for layout in Layout::ALL {
            let mut results = Vec::new();
            for (i, scheme) in Scheme::ALL.into_iter().enumerate() {
                let (measured, expected) =
                    measure(layout, scheme, c, 1000 + c * 10 + i as u64, queries);
                let band = Z * measured.variance.sqrt();
                println!(
                    "{layout:?} {scheme:?} c={c}: measured {:.6}, exact {expected:.6}, band +-{:.1}%",
                    measured.rate,
                    100.0 * band / expected
                );
                assert!(
                    (measured.rate - expected).abs() <= band,
                    "{layout:?} {scheme:?} c={c}: measured {:.6} vs exact {expected:.6} (band {band:.6})",
                    measured.rate
                );
                results.push((scheme, measured));
            }
            // The two-hash schemes are indistinguishable from k independent
            // hashes (two-sample test against the Independent row).
            let (_, independent) = &results[0];
            for (scheme, m) in &results[1..] {
                let band = Z * (m.variance + independent.variance).sqrt();
                assert!(
                    (m.rate - independent.rate).abs() <= band,
                    "{layout:?} {scheme:?} c={c}: {:.6} vs independent {:.6} (band {band:.6})",
                    m.rate,
                    independent.rate
                );
            }
        }
    }
}

/// The acceptance check: built for n = 1e6 at 1%, every scheme and layout
/// measures at most 1.05% on 1e6 fresh non-members (5 binomial sigmas above
/// 1%; the sizing guarantees an expected rate of at most 1%).
#[test]
fn one_percent_target_is_met_at_one_million() {
    let n = 1_000_000usize;
    let keys = members(42, n);
    let queries = non_members(42, n);
    let mut out = vec![false; n];
    for layout in Layout::ALL {
        for scheme in Scheme::ALL {
            let mut f = BloomFilter::builder()
                .layout(layout)
                .scheme(scheme)
                .expected_items(n as u64)
                .fpr(0.01)
                .build()
                .unwrap();
            assert!(layout.fpr(scheme, f.num_bits(), n as u64, f.num_hashes()) <= 0.01);
            f.insert_batch(&keys);
            f.contains_batch(&queries, &mut out).unwrap();
            let rate = out.iter().filter(|&&x| x).count() as f64 / n as f64;
            assert!(rate <= 0.0105, "{layout:?} {scheme:?}: {rate}");
        }
    }
}

/// How many queries a cell of the requested-rate grid gets, by target rate.
struct Budget {
    /// Queries per cell for p >= 1%, and for every cell with n <= 10
    /// (their rates sit far below p, on the 512-bit floor).
    common: usize,
    /// Queries per cell for p = 1e-6 and n >= 100.
    tiny: usize,
    /// Queries for the cells where the two-hash coincidence terms are
    /// largest: classic, plain double hashing or `f(i) = i^2`, p = 1e-6,
    /// n = 1000 and 4097 (without those terms the builder's filters
    /// measure 2x the target there).
    focus: usize,
}

/// The requested rate is met at every size: every layout x scheme, built by
/// `expected_items(n).fpr(p)` for n in {1, 2, 3, 10, 100, 1000, 4097, 1e5}
/// and p in {0.5, 0.1, 0.01, 1e-6}; each of the 16 configurations has its
/// own seeds (shared seeds made the blocked schemes' cells identical, so
/// pooling them counted the same hits three times).
///
/// Per cell: the filter's own formula meets the target exactly
/// (`Layout::fpr(m, n, k) <= p`, no noise: a sizing regression that
/// crosses p fails, whatever its size), and the mean measured rate over
/// seeded filters is at most that formula plus 3 standard errors (the
/// larger of the filters' own spread, sd over sqrt(filters), and the
/// binomial error of the formula's rate over all the cell's queries); for
/// classic and partitioned two-hash filters with n <= 10 the formula is
/// first allowed 25% (it is an approximation on a few hundred bits: classic
/// `i^3` at n = 10, k = 3, m = 521 measures 1.16x it). The band is around
/// the cell's own rate, not p: the cells with n <= 10 sit on the 512-bit
/// floor, 25x to 10^4x below p, and are checked against their own formula.
///
/// Per layout, at p = 1e-6: the hits of its cells with n >= 100 (16; 12 on
/// the classic layout, whose four focus cells are checked alone), pooled,
/// at most their expected count under the formulas plus 3 Poisson sigmas
/// (about 125 expected hits: a limit of 1.27x).
///
/// The real limits (CI budget: 2e5 queries per cell, 8e6 at 1e-6 with
/// n >= 100, 3e7 in the four focus cells; 27 s in the test profile here,
/// against 22 s when each cell was checked against p alone): one cell fails
/// when its rate is about 1.1x its formula at 1% and p = 0.5, 1.5x in a
/// focus cell at 1e-6 (30 expected hits), and about 3x in an ordinary 1e-6
/// cell (8 expected hits against a limit of about 16). A 1.5x regression in
/// every 1e-6 cell of one layout fails the pooled check: filters built 3%
/// smaller than their declared geometry (rate 1.5x the formula; the cells
/// with n >= 100 at 1e-6) gave 147 hits against a limit of 125 (classic),
/// 196 against 162 (partitioned), 199 against 158 (blocked) and 252 against
/// 157 (split-block; blocks are whole, so the smaller cells moved more than
/// 1.5x). A 1.5x regression confined to one ordinary 1e-6 cell needs about
/// 1e8 queries in that cell and is not affordable in CI, nor is any check
/// of the 1e-6 cells with n <= 10 (rates of 1e-8 and below; no hit is
/// expected): only their exact formula check can fail. The long run
/// (`--ignored`, 7.5x the queries at 1e-6) narrows each cell's band by
/// about 2.7x. docs/testing.md, "Statistical bands", lists the figures.
#[test]
fn requested_rate_is_met_at_every_size() {
    requested_rate_grid(&Budget {
        common: 200_000,
        tiny: 8_000_000,
        focus: 30_000_000,
    });
}

/// [`requested_rate_is_met_at_every_size`] with 2e6 queries per cell and
/// 6e7 at 1e-6: `cargo test --release --test false_positive_rate --
/// --ignored long` (a few minutes on two cores).
#[test]
#[ignore = "long statistical run (minutes in release); see docs/testing.md"]
fn long_requested_rate_is_met_at_every_size() {
    requested_rate_grid(&Budget {
        common: 2_000_000,
        tiny: 60_000_000,
        focus: 200_000_000,
    });
}

/// One cell's outcome: its hits, the hits its formula expects, and an
/// error message if it failed.
struct Cell {
    layout: Layout,
    p: f64,
    n: u64,
    focus: bool,
    hits: usize,
    expected: f64,
    failure: Option<String>,
}

fn requested_rate_grid(budget: &Budget) {
    let configs: Vec<(Layout, Scheme)> = Layout::ALL
        .into_iter()
        .flat_map(|l| Scheme::ALL.map(|s| (l, s)))
        .collect();
    // Two threads, each a share of the configurations (no rayon: the tests
    // build without the default features too).
    let cells: Vec<Cell> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..2)
            .map(|w| {
                let configs = &configs;
                scope.spawn(move || {
                    let mut cells = Vec::new();
                    for (c, &(layout, scheme)) in configs.iter().enumerate().skip(w).step_by(2) {
                        for n in [1u64, 2, 3, 10, 100, 1000, 4097, 100_000] {
                            for p in [0.5, 0.1, 0.01, 1e-6] {
                                let focus = layout == Layout::Classic
                                    && matches!(
                                        scheme,
                                        Scheme::DoubleHashing
                                            | Scheme::EnhancedDoubleHashing(Enhancement::Square)
                                    )
                                    && (n == 1000 || n == 4097);
                                let queries = match (p < 1e-3 && n >= 100, focus) {
                                    (false, _) => budget.common,
                                    (true, false) => budget.tiny,
                                    (true, true) => budget.focus,
                                };
                                let seeds = 7_000_000 + 1_000_000_000 * c as u64;
                                cells.push(grid_cell(layout, scheme, n, p, queries, focus, seeds));
                            }
                        }
                    }
                    cells
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    let mut failures: Vec<String> = cells.iter().filter_map(|c| c.failure.clone()).collect();
    for layout in Layout::ALL {
        let pooled: Vec<&Cell> = cells
            .iter()
            .filter(|c| c.layout == layout && c.p < 1e-3 && c.n >= 100 && !c.focus)
            .collect();
        let hits: usize = pooled.iter().map(|c| c.hits).sum();
        let expected: f64 = pooled.iter().map(|c| c.expected).sum();
        let limit = expected + 3.0 * expected.sqrt();
        eprintln!(
            "{layout:?} p=1e-6, {} cells pooled: {hits} hits, formula {expected:.1}, limit {limit:.1}",
            pooled.len()
        );
        if hits as f64 > limit {
            failures.push(format!(
                "{layout:?} at p = 1e-6: {hits} hits in {} cells, the formulas expect {expected:.1} (limit {limit:.1})",
                pooled.len()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// One cell of the grid: the formula at most p, and the mean rate at most
/// the formula plus 3 standard errors (`failure` says which failed, with
/// the numbers).
fn grid_cell(
    layout: Layout,
    scheme: Scheme,
    n: u64,
    p: f64,
    queries: usize,
    focus: bool,
    seeds: u64,
) -> Cell {
    let filters = (400_000 / n).clamp(4, 400) as usize;
    let per_filter = queries.div_ceil(filters);
    let mut out = vec![false; per_filter];
    let (mut hits, mut rates) = (0usize, Vec::with_capacity(filters));
    let (mut bits, mut k) = (0, 0);
    for t in 0..filters {
        let seed = seeds + 1_000 * n + t as u64;
        let mut f = BloomFilter::builder()
            .layout(layout)
            .scheme(scheme)
            .expected_items(n)
            .fpr(p)
            .seed(seed)
            .build()
            .unwrap();
        (bits, k) = (f.num_bits(), f.num_hashes());
        f.insert_batch(&members(seed, n as usize));
        f.contains_batch(&non_members(seed, per_filter), &mut out)
            .unwrap();
        let h = out.iter().filter(|&&x| x).count();
        hits += h;
        rates.push(h as f64 / per_filter as f64);
    }
    let formula = layout.fpr(scheme, bits, n, k);
    let total = filters * per_filter;
    let mean = hits as f64 / total as f64;
    let spread = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (filters - 1) as f64;
    let se = (spread / filters as f64)
        .sqrt()
        .max(binomial_variance(formula, total).sqrt());
    if std::env::var_os("LESSHASH_GRID_TABLE").is_some() {
        eprintln!(
            "cell {layout:?} {scheme:?} n={n} p={p:e} m={bits} k={k}: measured {mean:.3e} formula {formula:.3e} ratio {:.3} hits {hits} expected {:.1} limit-ratio {:.3}",
            mean / formula,
            formula * total as f64,
            (formula + 3.0 * se) / formula
        );
    }
    let limit = formula + 3.0 * se;
    let failure = if formula > p {
        Some(format!(
            "{layout:?} {scheme:?} n={n} p={p:e}: the formula gives {formula:.4e} (m={bits}, k={k})"
        ))
    } else if mean > limit {
        Some(format!(
            "{layout:?} {scheme:?} n={n} p={p:e} (m={bits}, k={k}): measured {mean:.4e} over {total} \
             queries in {filters} filters, formula {formula:.4e}, limit {limit:.4e} (3 se = {:.2e})",
            3.0 * se
        ))
    } else {
        None
    };
    Cell {
        layout,
        p,
        n,
        focus,
        hits,
        expected: formula * total as f64,
        failure,
    }
}

/// Tiny filters, where the builder's filters are too accurate to measure
/// (a 5-key classic filter at 1% is sized to 521 bits and a rate of 3e-8):
/// explicit (m, k) with rates of 0.3-10%, the mean over 1,500 seeded
/// filters of 1,000 queries each against the layout's formula for that
/// filter, the standard error from the filters' own spread.
///
/// Two-sided within Z standard errors (each band under 10% of the rate)
/// wherever the layout's rate is exact: every layout with `Independent`,
/// the blocked layouts with every scheme, the partitioned layout with the
/// two-hash schemes (its closed form) and the classic layout where it
/// enumerates the two-hash rate (`internals::rates::classic_enumerated`;
/// the ranges grown to primes: 64 -> 67, 100 -> 101, 500 -> 503). Where
/// the classic layout uses its model with the margin that bounds it
/// (`i^2` and `i^3` at k >= 5 here), one-sided: at most that rate
/// (`Layout::fpr`, and the mean of the filters' `expected_fpr()`) plus 3
/// standard errors, and at least 0.8x ideal hashing's rate (a two-hash
/// filter far better than ideal hashing is broken too).
#[test]
fn tiny_filters_average_to_their_expected_rate() {
    // (n, m, k); the blocked layouts round m up to 512.
    let flat: &[(u64, u64, u32)] = &[
        (1, 64, 1),
        (3, 64, 2),
        (5, 64, 3),
        (10, 100, 7),
        (60, 500, 5),
    ];
    let blocked: &[(u64, u64, u32)] = &[(1, 512, 1), (40, 512, 3), (60, 512, 5), (100, 512, 7)];
    let (filters, queries) = (1500u64, 1000usize);
    for layout in Layout::ALL {
        let cases = if layout.is_blocked() { blocked } else { flat };
        for scheme in Scheme::ALL {
            for (t, &(n, m, k)) in cases.iter().enumerate() {
                let (mut bits, mut own) = (0, 0.0);
                let rates: Vec<f64> = (0..filters)
                    .map(|i| {
                        let seed = 60_000 + 10_000 * t as u64 + i;
                        let mut f = build(layout, scheme, m, k, seed);
                        bits = f.num_bits();
                        f.insert_batch(&members(seed, n as usize));
                        own += f.expected_fpr() / filters as f64;
                        let qs = non_members(seed, queries);
                        qs.iter().filter(|q| f.contains(*q)).count() as f64 / queries as f64
                    })
                    .collect();
                let mean = rates.iter().sum::<f64>() / filters as f64;
                let var =
                    rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (filters - 1) as f64;
                let band = Z * (var / filters as f64).sqrt();
                let expected = layout.fpr(scheme, bits, n, k);
                let ctx = format!(
                    "{layout:?} {scheme:?} n={n} m={bits} k={k}: mean {mean:.5} vs formula \
                     {expected:.5} (band {band:.5})"
                );
                println!("{ctx}");
                assert!(
                    band < 0.1 * expected,
                    "{ctx}: band too wide to mean anything"
                );
                let modelled = scheme.is_two_hash()
                    && layout == Layout::Classic
                    && k >= 2
                    && classic_enumerated(scheme, bits, n, k).is_none();
                if modelled {
                    let ideal = layout.fpr(Scheme::Independent, bits, n, k);
                    let three_se = 3.0 * band / Z;
                    assert!(mean <= expected + three_se, "{ctx}: above its rate");
                    assert!(
                        mean <= own + three_se,
                        "{ctx}: above its filters' expected_fpr() {own:.5}"
                    );
                    assert!(mean >= 0.8 * ideal - band, "{ctx}: far below ideal hashing");
                } else {
                    assert!((mean - expected).abs() <= band, "{ctx}");
                }
            }
        }
    }
}
