//! Unit tests of the parent module (kept in their own file so that the
//! module itself stays readable).

use super::*;

#[test]
fn paper_constants() {
    // Sec. 8: c = 8 gives k = 6, p ~ 0.021577 and 464 queries.
    assert_eq!(paper_hashes(8), 6);
    let p = asymptotic_fpr(8, 6);
    assert!((p - 0.021577).abs() < 1e-6, "{p}");
    assert_eq!(queries_per_trial(p), 464);
    assert_eq!(
        PAPER_BITS_PER_KEY.map(paper_hashes),
        [3, 6, 8, 11],
        "the paper's k (round(c ln 2))"
    );
}

#[test]
fn wilson_contains_the_rate_and_narrows() {
    let (lo, hi) = wilson_interval(100, 10_000, 1.96);
    assert!(lo < 0.01 && 0.01 < hi);
    let (lo2, hi2) = wilson_interval(1000, 100_000, 1.96);
    assert!(hi2 - lo2 < (hi - lo) / 3.0);
    assert_eq!(wilson_interval(0, 0, 1.96), (0.0, 1.0));
    assert_eq!(wilson_interval(0, 10, 1.96).0, 0.0);
}

#[test]
fn trials_are_capped_by_inserts() {
    let c = Config::quick();
    assert_eq!(c.trials_for(5_000), 250);
    assert_eq!(c.trials_for(50_000), 50);
    assert_eq!(c.trials_for(500_000), 5);
    assert_eq!(Config::paper().trials_for(500_000), 10_000);
}

#[test]
fn bad_configs_name_their_field() {
    let base = Config::quick();
    for (config, name) in [
        (
            Config {
                bits_per_key: vec![],
                ..base.clone()
            },
            "`bits_per_key`",
        ),
        (
            Config {
                bits_per_key: vec![0],
                ..base.clone()
            },
            "`bits_per_key`",
        ),
        (
            Config {
                bits_per_key: vec![40],
                ..base.clone()
            },
            "`bits_per_key`",
        ),
        (
            Config {
                set_sizes: vec![0],
                ..base.clone()
            },
            "`set_sizes`",
        ),
        (
            Config {
                set_sizes: vec![u64::MAX / 2],
                ..base.clone()
            },
            "`set_sizes`",
        ),
        (
            Config {
                trials: 0,
                ..base.clone()
            },
            "`trials`",
        ),
        (
            Config {
                max_inserts: Some(0),
                ..base.clone()
            },
            "`max_inserts`",
        ),
        (
            Config {
                variants: vec![],
                ..base.clone()
            },
            "`variants`",
        ),
    ] {
        let msg = run(&config, |_| {}).unwrap_err().to_string();
        assert!(msg.contains(name), "expected {name} in: {msg}");
    }
}

#[test]
fn variants_cover_layouts_and_paper_names_are_unique() {
    let every = Variant::every();
    assert_eq!(every.len(), Layout::ALL.len() * Scheme::ALL.len());
    let all = Variant::all();
    assert!(all.iter().all(|v| v.same_answers_as().is_none()));
    for v in every.iter().filter(|v| !all.contains(v)) {
        assert!(all.contains(&v.same_answers_as().unwrap()), "{v:?}");
    }
    let named: Vec<_> = all.iter().filter_map(|v| v.paper_name()).collect();
    assert_eq!(named.len(), 5);
    for v in Variant::paper() {
        assert!(all.contains(&v) && v.paper_name().is_some());
    }
    for v in every {
        assert_eq!(Variant::from_id(&v.id()), Some(v));
    }
    assert_eq!(Variant::from_id("classic"), None);
    assert_eq!(Variant::from_id("classic/triple"), None);
}
