//! A reduced, seeded run of the paper's experiment (Sec. 8).
//!
//! Tolerance: each row's mean rate is an average over T trials; its standard
//! error comes from the trials' spread (`Row::std_err`). A rate is accepted
//! within Z = 4.5 standard errors of the layout's exact rate (false-alarm
//! probability about 7e-6 per comparison, were the seed not fixed); two
//! variants are "indistinguishable" when their difference is within Z
//! standard errors of the difference, `sqrt(se1^2 + se2^2)` (the variants
//! see the same items but hash them with different functions, so their Q
//! are close to independent).

#![cfg(feature = "experiment")]

use lesshash::experiment::{self, Config, Report, Variant};
use lesshash::{Enhancement, Layout, Scheme};

const Z: f64 = 4.5;

fn config(c: u32, n: u64, trials: u64, variants: Vec<Variant>) -> Config {
    Config {
        bits_per_key: vec![c],
        set_sizes: vec![n],
        trials,
        max_inserts: None,
        variants,
        seed: 2024,
    }
}

fn run(config: &Config) -> Report {
    experiment::run(config, |_| {}).unwrap()
}

fn standard() -> Variant {
    Variant {
        layout: Layout::Classic,
        scheme: Scheme::Independent,
    }
}

#[test]
fn c8_n5000_every_variant_matches_its_exact_rate_and_the_standard_scheme() {
    let report = run(&config(8, 5_000, 300, Variant::all()));
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert_eq!(report.rows.len(), Variant::all().len());
    let std_row = report.row(8, 5_000, standard()).unwrap();
    for r in &report.rows {
        // The paper's parameters.
        assert_eq!((r.hashes, r.queries, r.trials), (6, 464, 300));
        assert!((r.p - 0.021577).abs() < 1e-6);
        // The histogram accounts for every trial and every false positive.
        assert_eq!(r.q_counts.iter().sum::<u64>(), r.trials);
        let fp: u64 = r
            .q_counts
            .iter()
            .enumerate()
            .map(|(q, &c)| q as u64 * c)
            .sum();
        assert_eq!(fp, r.false_positives);
        // Against the layout's exact rate.
        assert!(r.std_err > 0.0);
        let z = r.z_vs_ideal();
        assert!(
            z.abs() < Z,
            "{}: mean {} vs exact {} (z = {z:.2})",
            r.variant.label(),
            r.mean_fpr,
            r.ideal_fpr
        );
        assert!(r.ci95.0 < r.mean_fpr && r.mean_fpr < r.ci95.1);
        // Sec. 7: Q is close to binomial, so the two standard errors agree.
        let ratio = r.std_err / r.binomial_std_err();
        assert!(
            (0.8..1.25).contains(&ratio),
            "{}: {ratio}",
            r.variant.label()
        );
        // Double and enhanced hashing are indistinguishable from standard.
        if r.variant.layout == Layout::Classic {
            let se = r.std_err.hypot(std_row.std_err);
            let diff = r.mean_fpr - std_row.mean_fpr;
            assert!(
                diff.abs() < Z * se,
                "{} vs standard: {diff} ({:.2} se)",
                r.variant.label(),
                diff / se
            );
        }
    }
}

#[test]
fn partitioned_enhanced_answers_exactly_as_partitioned_double() {
    // f(i) shifts sub-array i by a constant (a bijection): every query gets
    // the same answer, so the paired trials give identical Q.
    let report = run(&config(12, 2_000, 50, Variant::all()));
    let part = |scheme| {
        report
            .row(
                12,
                2_000,
                Variant {
                    layout: Layout::Partitioned,
                    scheme,
                },
            )
            .unwrap()
    };
    let double = part(Scheme::DoubleHashing);
    assert!(double.false_positives > 0);
    for e in [Enhancement::Square, Enhancement::Cube] {
        let enhanced = part(Scheme::EnhancedDoubleHashing(e));
        assert_eq!(enhanced.q_counts, double.q_counts, "{e:?}");
    }
}

#[test]
fn partition_scheme_falls_behind_at_large_c_and_small_n() {
    // c = 16, n = 1000: sub-arrays of m/k = 1454 bits; two members' (a, b)
    // pairs coincide often enough to about double the rate (Sec. 6).
    let report = run(&config(16, 1_000, 60, Variant::paper()));
    let std_row = report.row(16, 1_000, standard()).unwrap();
    let partition = report
        .rows
        .iter()
        .find(|r| r.variant.paper_name() == Some("partition"))
        .unwrap();
    let se = partition.std_err.hypot(std_row.std_err);
    assert!(
        partition.mean_fpr - std_row.mean_fpr > Z * se,
        "partition {} vs standard {}",
        partition.mean_fpr,
        std_row.mean_fpr
    );
    // The model with the pair-collision term explains it; ideal hashing on
    // the partitioned layout does not.
    let z_model = (partition.mean_fpr - partition.model_fpr) / partition.std_err;
    assert!(z_model.abs() < Z, "model z = {z_model}");
    assert!(
        partition.z_vs_ideal() > Z,
        "ideal z = {}",
        partition.z_vs_ideal()
    );
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let config = Config {
        bits_per_key: vec![4, 8],
        set_sizes: vec![500, 1_500],
        trials: 40,
        max_inserts: Some(30_000),
        variants: Variant::all(),
        seed: 7,
    };
    let on = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| run(&config))
    };
    let one = on(1);
    assert_eq!(one, on(3));
    assert_eq!(one.row(8, 1_500, standard()).unwrap().trials, 20);
    // A different seed draws different items.
    let other = experiment::run(
        &Config {
            seed: 8,
            ..config.clone()
        },
        |_| {},
    )
    .unwrap();
    assert_ne!(one, other);
}

#[test]
fn figures_and_tables_are_written() {
    let report = run(&config(8, 5_000, 20, Variant::all()));
    let dir = tempfile::tempdir().unwrap();
    let f1 = dir.path().join("f1.svg");
    let f2 = dir.path().join("f2.svg");
    experiment::plot::figure1(&report.rows, &f1).unwrap();
    experiment::plot::figure2(&report.rows, 8, 5_000, &Variant::paper(), &f2).unwrap();
    for f in [&f1, &f2] {
        let svg = std::fs::read_to_string(f).unwrap();
        assert!(svg.starts_with("<svg") && svg.len() > 1000);
    }
    // The legend carries the table's labels.
    let svg = std::fs::read_to_string(&f1).unwrap();
    assert!(svg.contains("classic/independent (standard)"));
    assert!(svg.contains("partitioned/double (partition)"));
    let err = experiment::plot::figure2(&report.rows, 16, 5_000, &Variant::paper(), &f2)
        .unwrap_err()
        .to_string();
    assert!(err.contains("`rows`"), "{err}");

    let csv = experiment::csv(&report.rows);
    assert_eq!(csv.lines().count(), 1 + report.rows.len());
    let fields = csv.lines().next().unwrap().split(',').count();
    assert!(csv.lines().all(|l| l.split(',').count() == fields));
    let md = experiment::markdown_table(&report.rows);
    assert_eq!(md.lines().count(), 2 + report.rows.len());
    assert!(experiment::markdown_summary(&report.rows).contains("(partition)"));
}
