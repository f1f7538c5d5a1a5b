//! A reduced, seeded run of the paper's experiment (Sec. 8).
//!
//! Tolerance: each row's mean rate is an average over T trials of q
//! queries. Under the layout's exact rate r, the T q answers are close to
//! independent Bernoulli(r) trials (Sec. 7), so the binomial standard error
//! is `sqrt(r (1 - r) / (T q))`; the rows' own standard error from the
//! trials' spread (`Row::std_err`) must agree with it. A rate is accepted
//! within Z = 4.5 standard errors of the layout's exact rate (false-alarm
//! probability about 7e-6 per comparison, were the seed not fixed; at
//! c = 8, T = 300 the tolerance is 8% of the rate, so a scheme off by one
//! probe, or a layout with the wrong formula, fails); two
//! variants are "indistinguishable" when their difference is within Z
//! standard errors of the difference, `sqrt(se1^2 + se2^2)` (the variants
//! see the same items but hash them with different functions, so their Q
//! are close to independent).

// The integration tests' shared helpers (seeded keys, tolerances, CI skips).
#[path = "../../tests/common/mod.rs"]
mod common;

use lesshash::{Enhancement, Layout, Scheme};
use lesshash_cli::experiment::{self, Config, Report, Row, Variant};

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
        // Against the layout's exact rate, with the binomial tolerance.
        let binomial_se =
            (r.ideal_fpr * (1.0 - r.ideal_fpr) / (r.trials * r.queries) as f64).sqrt();
        assert!(
            (r.mean_fpr - r.ideal_fpr).abs() < Z * binomial_se,
            "{}: mean {} vs exact {} (binomial se {binomial_se})",
            r.variant.label(),
            r.mean_fpr,
            r.ideal_fpr
        );
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
fn left_out_variants_answer_exactly_as_their_stand_ins() {
    // Partitioned: f(i) shifts sub-array i by a constant (a bijection).
    // Blocked and split-block: every two-hash scheme places a key's bits the
    // same way. Either way the paired trials give identical Q.
    let report = run(&config(12, 2_000, 50, Variant::every()));
    let mut checked = 0;
    for v in Variant::every() {
        let Some(stand_in) = v.same_answers_as() else {
            continue;
        };
        let (a, b) = (
            report.row(12, 2_000, v).unwrap(),
            report.row(12, 2_000, stand_in).unwrap(),
        );
        assert!(b.false_positives > 0, "{}", b.variant.label());
        assert_eq!(
            a.q_counts,
            b.q_counts,
            "{} vs {}",
            v.label(),
            stand_in.label()
        );
        checked += 1;
    }
    assert!(checked >= 2);
    // Classic enhanced double hashing is not such a variant: its Q differ.
    let classic = |scheme| {
        report
            .row(
                12,
                2_000,
                Variant {
                    layout: Layout::Classic,
                    scheme,
                },
            )
            .unwrap()
    };
    assert_ne!(
        classic(Scheme::DoubleHashing).q_counts,
        classic(Scheme::EnhancedDoubleHashing(Enhancement::Cube)).q_counts
    );
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
fn rows_do_not_depend_on_the_other_variants_run() {
    // A trial's items depend only on the seed, the point and the trial, so
    // runs of disjoint variant lists add up to the run of their union (the
    // committed CSV relies on it).
    let base = Config {
        bits_per_key: vec![8],
        set_sizes: vec![700, 2_100],
        trials: 30,
        max_inserts: Some(21_000),
        variants: Variant::all(),
        seed: 11,
    };
    let whole = run(&base);
    let (first, second): (Vec<Variant>, Vec<Variant>) = Variant::all()
        .into_iter()
        .partition(|v| v.layout == Layout::Classic);
    assert!(!first.is_empty() && !second.is_empty());
    let mut parts = run(&Config {
        variants: first,
        ..base.clone()
    })
    .rows;
    parts.extend(
        run(&Config {
            variants: second,
            ..base.clone()
        })
        .rows,
    );
    assert_eq!(parts.len(), whole.rows.len());
    for r in &whole.rows {
        let same = parts
            .iter()
            .find(|p| (p.bits_per_key, p.items, p.variant) == (r.bits_per_key, r.items, r.variant))
            .unwrap();
        assert_eq!(same, r);
    }
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
    // The legend carries the table's labels; Figure 1 keeps to the paper's
    // layouts, the layouts figure shows every row.
    let svg = std::fs::read_to_string(&f1).unwrap();
    assert!(svg.contains("classic/independent (standard)"));
    assert!(svg.contains("partitioned/double (partition)"));
    assert!(!svg.contains("blocked/"));
    let f3 = dir.path().join("f3.svg");
    experiment::plot::rate_figure(&report.rows, "every layout", &f3).unwrap();
    let svg = std::fs::read_to_string(&f3).unwrap();
    for r in &report.rows {
        assert!(svg.contains(&r.variant.label()), "{}", r.variant.label());
    }
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

#[test]
fn csv_schema_and_round_trip() {
    let report = run(&config(4, 800, 12, Variant::every()));
    let text = experiment::csv(&report.rows);
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header,
        [
            "c",
            "k",
            "n",
            "m",
            "variant",
            "paper",
            "trials",
            "queries",
            "p",
            "ideal_fpr",
            "model_fpr",
            "false_positives",
            "mean_fpr",
            "std_err",
            "binomial_std_err",
            "ci95_low",
            "ci95_high",
            "mean_over_p",
            "z_vs_ideal",
            "q_counts"
        ]
    );
    let col = |name: &str| header.iter().position(|&h| h == name).unwrap();
    for (line, r) in lines.zip(&report.rows) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), header.len(), "{line}");
        assert_eq!(f[col("c")], "4");
        assert_eq!(f[col("k")], "3");
        assert_eq!(f[col("n")], "800");
        assert_eq!(f[col("queries")], "69");
        assert_eq!(f[col("variant")], r.variant.id());
        assert_eq!(f[col("paper")], r.variant.paper_name().unwrap_or(""));
        let hist: Vec<u64> = f[col("q_counts")]
            .split(';')
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(hist.iter().sum::<u64>(), 12);
        let mean: f64 = f[col("mean_fpr")].parse().unwrap();
        assert_eq!(mean, r.mean_fpr);
    }
    // Every field is written so that the rows read back exactly.
    assert_eq!(experiment::parse_csv(&text).unwrap(), report.rows);
    // Damaged input is an error naming the place, never a panic.
    let bad_header = text.replacen("c,k,n", "c,n,k", 1);
    assert!(experiment::parse_csv(&bad_header).is_err());
    let short = text.replacen(",standard,", ",", 1);
    let err = experiment::parse_csv(&short).unwrap_err().to_string();
    assert!(err.contains("line 2") && err.contains("fields"), "{err}");
    let bad_number = text.replacen("\n4,3,800", "\n4,x,800", 1);
    let err = experiment::parse_csv(&bad_number).unwrap_err().to_string();
    assert!(err.contains("`k`"), "{err}");
    let bad_variant = text.replacen("classic/independent", "classic/triple", 1);
    let err = experiment::parse_csv(&bad_variant).unwrap_err().to_string();
    assert!(err.contains("`variant`"), "{err}");
}

#[test]
fn quick_mode_covers_the_paper_grid_with_capped_trials() {
    let quick = Config::quick();
    let paper = Config::paper();
    assert_eq!(quick.bits_per_key, [4, 8, 12, 16]);
    assert_eq!(quick.set_sizes, [5_000, 10_000, 50_000, 100_000, 500_000]);
    assert_eq!(quick.variants, Variant::all());
    assert_eq!((paper.trials, paper.max_inserts), (10_000, None));
    assert_eq!(
        quick
            .set_sizes
            .iter()
            .map(|&n| quick.trials_for(n))
            .collect::<Vec<_>>(),
        [250, 250, 50, 25, 5]
    );
    // The paper's five schemes are all in the default variants.
    for v in Variant::paper() {
        assert!(quick.variants.contains(&v), "{v:?}");
    }
    // The quick run's shape on a reduced grid: one row per (c, n, variant),
    // c-major, then n, then variant order; trials capped by inserts.
    let small = Config {
        bits_per_key: vec![4, 12],
        set_sizes: vec![1_000, 4_000],
        max_inserts: Some(40_000),
        trials: 20,
        ..Config::quick()
    };
    let mut seen = 0;
    let report = experiment::run(&small, |rows: &[Row]| {
        assert_eq!(rows.len(), Variant::all().len());
        seen += 1;
    })
    .unwrap();
    assert_eq!(seen, 4);
    let expected: Vec<(u32, u64, Variant, u64)> = [4, 12]
        .into_iter()
        .flat_map(|c| {
            [(1_000, 20), (4_000, 10)]
                .into_iter()
                .flat_map(move |(n, t)| Variant::all().into_iter().map(move |v| (c, n, v, t)))
        })
        .collect();
    let got: Vec<(u32, u64, Variant, u64)> = report
        .rows
        .iter()
        .map(|r| (r.bits_per_key, r.items, r.variant, r.trials))
        .collect();
    assert_eq!(got, expected);
    for r in &report.rows {
        assert_eq!(r.hashes, experiment::paper_hashes(r.bits_per_key));
        assert_eq!(r.queries, experiment::queries_per_trial(r.p));
        let nominal = u64::from(r.bits_per_key) * r.items;
        // m = cn as the builder builds it: partitioned rounded down to k
        // sub-arrays, blocked up to whole blocks, two-hash flat ranges grown
        // to the next prime (80,000 -> 80,021 at c = 16, n = 5000).
        let built = common::built_bits(r.variant.layout, r.variant.scheme, nominal, r.hashes);
        assert_eq!(r.bits, built, "{:?}", r.variant);
    }
}
