//! The experiment of Kirsch and Mitzenmacher, Sec. 8, run on lesshash's own
//! filters (feature `experiment`).
//!
//! For each number of bits per key `c` and set size `n`:
//!
//! 1. k is the value in `{floor(c ln 2), ceil(c ln 2)}` that minimises
//!    `p = (1 - e^{-k/c})^k` ([`paper_hashes`]), and `ceil(10/p)` non-members
//!    are queried per trial ([`queries_per_trial`]).
//! 2. Every [`Variant`] (a [`Layout`] and a [`Scheme`]) gets a filter of
//!    `m = c n` bits (the layout may round m, see [`Row::bits`]) and k probes.
//! 3. Each trial draws fresh items: a 64-bit salt derived from the run's seed
//!    and the trial's index, members `salt << 64 | i` for `i < n` and
//!    queries `salt << 64 | i` for `n <= i < n + ceil(10/p)` (distinct by
//!    construction, so no query is a member). Every filter is cleared,
//!    populated with the members and asked the queries; the number Q of
//!    false positives is recorded per variant.
//! 4. A [`Row`] per `(c, n, variant)` reports the mean rate `sum Q / (T q)`,
//!    its standard error from the trials, a 95% binomial (Wilson) interval,
//!    the asymptotic p, the layout's exact rate under ideal hashing and the
//!    model the builder sizes by, and the histogram of Q (the paper's
//!    Figure 2).
//!
//! # The comparison is paired
//!
//! Within a trial every variant sees the same items. The two-hash variants
//! share one XXH3-128 per item, computed once per trial
//! ([`hash_key`]) and fed to
//! the pre-hashed [`insert_batch`](lesshash::Prehashed::insert_batch) and
//! [`contains`](lesshash::Prehashed::contains), which the library
//! tests to be identical to inserting the keys. `Independent` filters hash
//! the same keys k times through [`insert`](lesshash::BloomFilter::insert).
//! Differences between variants are therefore differences of the schemes,
//! not of the items drawn.
//!
//! # Determinism
//!
//! Trials run in parallel (rayon), but each trial's items depend only on the
//! seed and the trial's index, and the results are integers summed in trial
//! order: the rows are bit-identical for any number of threads.
//!
//! # The variants
//!
//! [`Variant::all`] is every layout of [`Layout::ALL`] with every scheme of
//! [`Scheme::ALL`], so layouts added to the crate join the experiment
//! without edits here; each row's ideal rate is [`Layout::fpr`] of that
//! layout. A layout that cannot be built for the point's `(m, k)` is
//! reported in [`Report::skipped`] rather than failing the run. The paper's
//! five schemes are the variants with a [`Variant::paper_name`]: standard
//! (classic, independent), partition (partitioned, double hashing), double,
//! enhanced `i^2` and enhanced `i^3` (classic). On the partitioned,
//! blocked and split-block layouts enhanced double hashing answers exactly
//! as plain double hashing (see the layouts' docs), so [`Variant::all`]
//! leaves those out ([`Variant::same_answers_as`]); [`Variant::every`] keeps
//! them.
//!
//! # Cost
//!
//! Per trial and item: one XXH3-128 shared by every two-hash variant, and k
//! XXH3-64 per `Independent` variant (that scheme *is* k hash functions; the
//! library's own `insert`/`contains` compute them). No allocation per item
//! or per trial beyond a `Vec` of one count per variant: each rayon worker
//! keeps its filters and hash buffers and clears them between trials.

#![forbid(unsafe_code)]

pub mod plot;
mod tables;

pub use tables::{CSV_HEADER, csv, markdown_summary, markdown_table, parse_csv, skipped_markdown};

use rayon::prelude::*;

use lesshash::internals::hash::hash128;
use lesshash::internals::limits::MAX_BITS;
use lesshash::{BloomFilter, Enhancement, Error, Layout, Scheme, hash_key, rates};

/// [`Error::InvalidParameter`] naming the experiment's parameter `name`.
pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> Error {
    Error::InvalidParameter {
        name,
        reason: reason.into(),
    }
}

/// The paper's bits per key, `c in {4, 8, 12, 16}`.
pub const PAPER_BITS_PER_KEY: [u32; 4] = [4, 8, 12, 16];

/// Set sizes n: the range of the paper's Figure 1 x-axis.
pub const PAPER_SET_SIZES: [u64; 5] = [5_000, 10_000, 50_000, 100_000, 500_000];

/// Trials per point in the paper.
pub const PAPER_TRIALS: u64 = 10_000;

/// The most queries per trial a configuration may ask for (`c` up to 28).
pub const MAX_QUERIES_PER_TRIAL: u64 = 10_000_000;

/// The k of the paper for c bits per key: the value in
/// `{floor(c ln 2), ceil(c ln 2)}` (at least 1) minimising
/// `(1 - e^{-k/c})^k`.
pub fn paper_hashes(bits_per_key: u32) -> u32 {
    rates::optimal_hashes(u64::from(bits_per_key), 1)
}

/// The asymptotic rate `p = (1 - e^{-k/c})^k`.
pub fn asymptotic_fpr(bits_per_key: u32, hashes: u32) -> f64 {
    rates::classic_fpr(u64::from(bits_per_key), 1, hashes)
}

/// The paper's number of queries per trial, `ceil(10 / p)`.
pub fn queries_per_trial(p: f64) -> u64 {
    (10.0 / p).ceil() as u64
}

/// One filter configuration of the experiment: a layout and a scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Variant {
    /// Where the probes go.
    pub layout: Layout,
    /// How the probes are derived.
    pub scheme: Scheme,
}

impl Variant {
    /// Every layout of [`Layout::ALL`] with every scheme of [`Scheme::ALL`],
    /// layout-major, except the variants that answer every query exactly as
    /// an earlier one ([`same_answers_as`](Self::same_answers_as)): running
    /// them would only repeat a row.
    pub fn all() -> Vec<Variant> {
        Self::every()
            .into_iter()
            .filter(|v| v.same_answers_as().is_none())
            .collect()
    }

    /// Every layout of [`Layout::ALL`] with every scheme of [`Scheme::ALL`],
    /// layout-major, including the ones [`all`](Self::all) leaves out.
    pub fn every() -> Vec<Variant> {
        Layout::ALL
            .iter()
            .flat_map(|&layout| {
                Scheme::ALL
                    .iter()
                    .map(move |&scheme| Variant { layout, scheme })
            })
            .collect()
    }

    /// The variant this one answers every query exactly as, given the same
    /// seed and items, if there is one: enhanced double hashing answers as
    /// plain double hashing
    ///
    /// * on the partitioned layout, where `f(i)` shifts every key's probe in
    ///   sub-array i by the same constant, a bijection of that sub-array, so
    ///   members and queries move together;
    /// * on the blocked and split-block layouts, where every two-hash scheme
    ///   addresses a block and the bits inside it the same way (see
    ///   `src/layout/blocked/addressing.rs`).
    ///
    /// Tested in `tests/experiment.rs` (identical Q in every trial).
    pub fn same_answers_as(self) -> Option<Variant> {
        let shared = matches!(
            self.layout,
            Layout::Partitioned | Layout::Blocked | Layout::SplitBlock
        );
        match self.scheme {
            Scheme::EnhancedDoubleHashing(_) if shared => Some(Variant {
                layout: self.layout,
                scheme: Scheme::DoubleHashing,
            }),
            _ => None,
        }
    }

    /// The paper's five schemes, in the paper's order (standard, partition,
    /// double, enhanced `i^2`, enhanced `i^3`).
    pub fn paper() -> Vec<Variant> {
        let classic = |scheme| Variant {
            layout: Layout::Classic,
            scheme,
        };
        vec![
            classic(Scheme::Independent),
            Variant {
                layout: Layout::Partitioned,
                scheme: Scheme::DoubleHashing,
            },
            classic(Scheme::DoubleHashing),
            classic(Scheme::EnhancedDoubleHashing(Enhancement::Square)),
            classic(Scheme::EnhancedDoubleHashing(Enhancement::Cube)),
        ]
    }

    /// The paper's name for this variant, if it is one of its five schemes.
    pub fn paper_name(self) -> Option<&'static str> {
        Some(match (self.layout, self.scheme) {
            (Layout::Classic, Scheme::Independent) => "standard",
            (Layout::Partitioned, Scheme::DoubleHashing) => "partition",
            (Layout::Classic, Scheme::DoubleHashing) => "double",
            (Layout::Classic, Scheme::EnhancedDoubleHashing(Enhancement::Square)) => "enhanced i^2",
            (Layout::Classic, Scheme::EnhancedDoubleHashing(Enhancement::Cube)) => "enhanced i^3",
            _ => return None,
        })
    }

    /// `layout/scheme`, e.g. `partitioned/double` (the CSV's `variant`).
    pub fn id(self) -> String {
        format!("{}/{}", self.layout.name(), self.scheme.name())
    }

    /// Parses an [`id`](Self::id), `layout/scheme`.
    pub fn from_id(id: &str) -> Option<Variant> {
        let (layout, scheme) = id.split_once('/')?;
        Some(Variant {
            layout: layout.parse().ok()?,
            scheme: scheme.parse().ok()?,
        })
    }

    /// The label in tables and legends: the id, with the paper's name in
    /// parentheses where there is one.
    pub fn label(self) -> String {
        match self.paper_name() {
            Some(name) => format!("{} ({name})", self.id()),
            None => self.id(),
        }
    }

    /// The layout's exact rate under ideal hashing (k independent uniform
    /// probes placed by the layout): [`Layout::fpr`] with the `Independent`
    /// scheme, whatever the layout.
    pub fn ideal_fpr(self, m: u64, n: u64, k: u32) -> f64 {
        self.layout.fpr(Scheme::Independent, m, n, k)
    }

    /// The rate the builder sizes this variant by: [`Layout::fpr`] with the
    /// variant's scheme (the ideal rate plus the two-hash schemes'
    /// pair-collision term).
    pub fn model_fpr(self, m: u64, n: u64, k: u32) -> f64 {
        self.layout.fpr(self.scheme, m, n, k)
    }
}

/// What to run.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The values of c (bits per key), 1 to 28.
    pub bits_per_key: Vec<u32>,
    /// The set sizes n, at least 1.
    pub set_sizes: Vec<u64>,
    /// Trials per point (the paper: 10,000).
    pub trials: u64,
    /// If set, a point of set size n runs `min(trials, max(1,
    /// max_inserts / n))` trials: a cap on the inserts per variant and
    /// point, which bounds the cost of the largest n.
    pub max_inserts: Option<u64>,
    /// The variants, in the order rows are reported.
    pub variants: Vec<Variant>,
    /// The seed of the items' salts and of the filters' hashing.
    pub seed: u64,
}

impl Config {
    /// The paper's experiment: c in {4, 8, 12, 16}, n in
    /// [`PAPER_SET_SIZES`], 10,000 trials, every variant, no cap.
    pub fn paper() -> Self {
        Self {
            bits_per_key: PAPER_BITS_PER_KEY.to_vec(),
            set_sizes: PAPER_SET_SIZES.to_vec(),
            trials: PAPER_TRIALS,
            max_inserts: None,
            variants: Variant::all(),
            seed: lesshash::DEFAULT_SEED,
        }
    }

    /// The same points with fewer trials: 250 per point, capped at
    /// 2.5 * 10^6 inserts per variant and point (50 trials at n = 50,000,
    /// 5 at n = 500,000). 4.5 * 10^7 inserts per variant in all (its run
    /// time is in docs/paper-reproduction.md).
    pub fn quick() -> Self {
        Self {
            trials: 250,
            max_inserts: Some(2_500_000),
            ..Self::paper()
        }
    }

    /// The trials run at set size n.
    pub fn trials_for(&self, n: u64) -> u64 {
        match self.max_inserts {
            Some(cap) => self.trials.min((cap / n.max(1)).max(1)),
            None => self.trials,
        }
    }

    /// Checks every field; the error names the field at fault.
    pub fn validate(&self) -> Result<(), Error> {
        if self.bits_per_key.is_empty() {
            return Err(invalid("bits_per_key", "no values given"));
        }
        for &c in &self.bits_per_key {
            if c == 0 {
                return Err(invalid("bits_per_key", "must be at least 1, got 0"));
            }
            let q = queries_per_trial(asymptotic_fpr(c, paper_hashes(c)));
            if q > MAX_QUERIES_PER_TRIAL {
                return Err(invalid(
                    "bits_per_key",
                    format!(
                        "c = {c} needs {q} queries per trial, more than {MAX_QUERIES_PER_TRIAL}"
                    ),
                ));
            }
        }
        if self.set_sizes.is_empty() {
            return Err(invalid("set_sizes", "no values given"));
        }
        for &n in &self.set_sizes {
            if n == 0 {
                return Err(invalid("set_sizes", "must be at least 1, got 0"));
            }
            for &c in &self.bits_per_key {
                if u64::from(c).checked_mul(n).is_none_or(|m| m > MAX_BITS) {
                    return Err(invalid(
                        "set_sizes",
                        format!("n = {n} at c = {c} exceeds {} bits", MAX_BITS),
                    ));
                }
            }
        }
        if self.trials == 0 {
            return Err(invalid("trials", "must be at least 1, got 0"));
        }
        if self.trials > u64::from(u32::MAX) {
            return Err(invalid(
                "trials",
                format!("at most {}, got {}", u32::MAX, self.trials),
            ));
        }
        if self.max_inserts == Some(0) {
            return Err(invalid("max_inserts", "must be at least 1, got 0"));
        }
        if self.variants.is_empty() {
            return Err(invalid("variants", "no variants given"));
        }
        Ok(())
    }
}

/// The result for one `(c, n, variant)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// c, bits per key (nominal: `m = c n` before the layout's rounding).
    pub bits_per_key: u32,
    /// n, the set size.
    pub items: u64,
    /// k, probes per key.
    pub hashes: u32,
    /// m, the bits the built filter uses (the partitioned layout rounds
    /// `c n` down to a multiple of k; blocked layouts may round up).
    pub bits: u64,
    /// The layout and scheme.
    pub variant: Variant,
    /// T, the number of trials.
    pub trials: u64,
    /// q = `ceil(10/p)`, queries per trial.
    pub queries: u64,
    /// The asymptotic rate `p = (1 - e^{-k/c})^k`.
    pub p: f64,
    /// The layout's exact rate for `(bits, items, hashes)` under ideal
    /// hashing ([`Variant::ideal_fpr`]).
    pub ideal_fpr: f64,
    /// The rate the builder sizes by, with the scheme's pair-collision term
    /// ([`Variant::model_fpr`]).
    pub model_fpr: f64,
    /// The sum of Q over the trials.
    pub false_positives: u64,
    /// The mean rate, `false_positives / (trials * queries)`.
    pub mean_fpr: f64,
    /// The standard error of the mean rate from the trials' spread (sample
    /// standard deviation of `Q / q`, over `sqrt(T)`; 0 for one trial).
    pub std_err: f64,
    /// The 95% Wilson interval of the rate, treating the `T q` queries as
    /// independent Bernoulli trials.
    pub ci95: (f64, f64),
    /// `q_counts[j]` is the number of trials with `Q = j`.
    pub q_counts: Vec<u64>,
}

impl Row {
    /// The binomial standard error `sqrt(r (1 - r) / (T q))` at the mean
    /// rate r. Sec. 7 of the paper predicts Q is close to binomial, so this
    /// should be close to [`std_err`](Self::std_err).
    pub fn binomial_std_err(&self) -> f64 {
        let r = self.mean_fpr;
        (r * (1.0 - r) / (self.trials * self.queries) as f64).sqrt()
    }

    /// `(mean - ideal) / std_err`: how many standard errors the measured
    /// rate lies from the layout's exact rate (0 when `std_err` is 0).
    pub fn z_vs_ideal(&self) -> f64 {
        if self.std_err > 0.0 {
            (self.mean_fpr - self.ideal_fpr) / self.std_err
        } else {
            0.0
        }
    }
}

/// A variant that could not be built at some point.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// c.
    pub bits_per_key: u32,
    /// n.
    pub items: u64,
    /// The variant.
    pub variant: Variant,
    /// The builder's error message.
    pub reason: String,
}

/// Everything a run produced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Report {
    /// One row per `(c, n, variant)`, ordered by c, then n, then the
    /// configuration's variant order.
    pub rows: Vec<Row>,
    /// Variants whose layout rejected a point's `(m, k)`.
    pub skipped: Vec<Skipped>,
}

impl Report {
    /// The row of `(c, n, variant)`, if it was run.
    pub fn row(&self, bits_per_key: u32, items: u64, variant: Variant) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.bits_per_key == bits_per_key && r.items == items && r.variant == variant)
    }
}

/// Runs the experiment on rayon's current thread pool. `progress` is called
/// after each point `(c, n)` with that point's rows.
///
/// # Errors
/// [`Error::InvalidParameter`] from [`Config::validate`]; allocation errors
/// from the filters.
pub fn run(config: &Config, mut progress: impl FnMut(&[Row])) -> Result<Report, Error> {
    config.validate()?;
    let mut report = Report::default();
    for &c in &config.bits_per_key {
        for &n in &config.set_sizes {
            let start = report.rows.len();
            run_point(config, c, n, &mut report)?;
            progress(&report.rows[start..]);
        }
    }
    Ok(report)
}

/// One point `(c, n)`: every variant, every trial.
fn run_point(config: &Config, c: u32, n: u64, report: &mut Report) -> Result<(), Error> {
    let k = paper_hashes(c);
    let p = asymptotic_fpr(c, k);
    let q = queries_per_trial(p);
    let trials = config.trials_for(n);
    let seed = config.seed;

    // The prototypes: one filter per variant that the layout accepts.
    let mut prototypes = Vec::new();
    for &variant in &config.variants {
        let built = BloomFilter::builder()
            .layout(variant.layout)
            .scheme(variant.scheme)
            .bits(u64::from(c) * n)
            .hashes(k)
            .seed(seed)
            .build();
        match built {
            Ok(filter) => prototypes.push((variant, filter)),
            Err(e) => report.skipped.push(Skipped {
                bits_per_key: c,
                items: n,
                variant,
                reason: e.to_string(),
            }),
        }
    }
    if prototypes.is_empty() {
        return Ok(());
    }
    let filters: Vec<BloomFilter> = prototypes.iter().map(|(_, f)| f.clone()).collect();
    let point_salt = hash128(&point_bytes(c, n), seed) as u64;

    // Q per trial and variant, in trial order.
    let per_trial: Vec<Vec<u32>> = (0..trials)
        .into_par_iter()
        .map_init(
            || Worker {
                filters: filters.clone(),
                members: Vec::new(),
                queries: Vec::new(),
            },
            |worker, t| worker.trial(trial_salt(point_salt, t, seed), n, q, seed),
        )
        .collect::<Result<_, Error>>()?;

    for (j, (variant, filter)) in prototypes.iter().enumerate() {
        let m = filter.num_bits();
        let mut counts = Vec::new();
        let (mut sum, mut sum_sq) = (0u64, 0u128);
        for qs in &per_trial {
            let x = qs[j];
            sum += u64::from(x);
            sum_sq += u128::from(x) * u128::from(x);
            let x = x as usize;
            if counts.len() <= x {
                counts.resize(x + 1, 0);
            }
            counts[x] += 1;
        }
        let total = (trials * q) as f64;
        let mean_fpr = sum as f64 / total;
        let std_err = if trials > 1 {
            let t = trials as f64;
            let mean_q = sum as f64 / t;
            let var_q = ((sum_sq as f64 - t * mean_q * mean_q) / (t - 1.0)).max(0.0);
            (var_q / t).sqrt() / q as f64
        } else {
            0.0
        };
        report.rows.push(Row {
            bits_per_key: c,
            items: n,
            hashes: k,
            bits: m,
            variant: *variant,
            trials,
            queries: q,
            p,
            ideal_fpr: variant.ideal_fpr(m, n, k),
            model_fpr: variant.model_fpr(m, n, k),
            false_positives: sum,
            mean_fpr,
            std_err,
            ci95: wilson_interval(sum, trials * q, 1.959_963_984_540_054),
            q_counts: counts,
        });
    }
    Ok(())
}

/// The bytes that identify a point in its salt.
fn point_bytes(c: u32, n: u64) -> [u8; 12] {
    let mut b = [0u8; 12];
    b[..4].copy_from_slice(&c.to_le_bytes());
    b[4..].copy_from_slice(&n.to_le_bytes());
    b
}

/// The salt of trial t at a point: its items are `salt << 64 | i`.
fn trial_salt(point_salt: u64, t: u64, seed: u64) -> u64 {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&point_salt.to_le_bytes());
    b[8..].copy_from_slice(&t.to_le_bytes());
    hash128(&b, seed) as u64
}

/// A thread's filters and hash buffers, reused across its trials.
struct Worker {
    filters: Vec<BloomFilter>,
    members: Vec<u128>,
    queries: Vec<u128>,
}

impl Worker {
    /// One trial: Q for each filter.
    fn trial(&mut self, salt: u64, n: u64, q: u64, seed: u64) -> Result<Vec<u32>, Error> {
        let base = u128::from(salt) << 64;
        let item = |i: u64| base | u128::from(i);
        if self.filters.iter().any(|f| f.scheme().is_two_hash()) {
            // One XXH3-128 per item, shared by every two-hash filter.
            self.members.clear();
            self.members
                .extend((0..n).map(|i| hash_key(&item(i), seed)));
            self.queries.clear();
            self.queries
                .extend((n..n + q).map(|i| hash_key(&item(i), seed)));
        }
        let mut out = Vec::with_capacity(self.filters.len());
        for filter in &mut self.filters {
            filter.clear();
            let mut hits = 0u32;
            if filter.scheme().is_two_hash() {
                filter.prehashed_mut()?.insert_batch(&self.members);
                let by_hash = filter.prehashed()?;
                for &h in &self.queries {
                    hits += u32::from(by_hash.contains(h));
                }
            } else {
                for i in 0..n {
                    filter.insert(&item(i));
                }
                for i in n..n + q {
                    hits += u32::from(filter.contains(&item(i)));
                }
            }
            out.push(hits);
        }
        Ok(out)
    }
}

/// The Wilson score interval for x successes in `total` Bernoulli trials at
/// normal quantile z.
pub fn wilson_interval(x: u64, total: u64, z: f64) -> (f64, f64) {
    if total == 0 {
        return (0.0, 1.0);
    }
    let nn = total as f64;
    let r = x as f64 / nn;
    let z2 = z * z;
    let denom = 1.0 + z2 / nn;
    let centre = (r + z2 / (2.0 * nn)) / denom;
    let half = z * (r * (1.0 - r) / nn + z2 / (4.0 * nn * nn)).sqrt() / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

#[cfg(test)]
mod tests;
