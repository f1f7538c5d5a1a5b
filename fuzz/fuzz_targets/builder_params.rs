//! Arbitrary (n, p, m, k, layout, scheme) combinations into the builders
//! and the rate formulas: `Ok` or an `Err` naming a parameter, never a
//! panic, hang or an allocation beyond the documented limits; an `Ok` from
//! (n, p) meets p by the layout's own formula; every rate is a probability.

#![no_main]

#[path = "common.rs"]
mod common;

use arbitrary::Arbitrary;
use lesshash::CountMinDimensions;
use lesshash::internals::count_min::two_hash_bound;
use lesshash::internals::rates::pair_collision_rate;
use lesshash::rates::{
    bloom_fpr, classic_fpr, classic_fpr_exact, estimate_items, optimal_hashes, partitioned_fpr,
};
use lesshash::{BloomFilter, CountMinScheme, CountMinSketch, Layout, Scheme};
use libfuzzer_sys::fuzz_target;

/// A number drawn either from the whole type or from a small, useful range.
#[derive(Arbitrary, Debug, Clone, Copy)]
enum Count {
    Any(u64),
    Small(u16),
    Pow2(u8),
}

impl Count {
    fn get(self) -> u64 {
        match self {
            Count::Any(x) => x,
            Count::Small(x) => u64::from(x),
            Count::Pow2(e) => 1u64.checked_shl(u32::from(e)).unwrap_or(u64::MAX),
        }
    }
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Prob {
    /// Any f64: NaN, infinities, subnormals, negatives.
    Any(f64),
    /// `mantissa / 256 * 10^-exponent`: the realistic range down to 1e-40.
    Decimal(u8, u8),
    /// Close to 1: `1 - 2^-bits`.
    NearOne(u8),
}

impl Prob {
    fn get(self) -> f64 {
        match self {
            Prob::Any(p) => p,
            Prob::Decimal(m, e) => (f64::from(m) + 1.0) / 256.0 * 10f64.powi(-i32::from(e % 41)),
            Prob::NearOne(b) => 1.0 - 2f64.powi(-i32::from(b % 60)),
        }
    }
}

#[derive(Arbitrary, Debug)]
struct Input {
    items: Option<Count>,
    fpr: Option<Prob>,
    bits: Option<Count>,
    hashes: Option<u8>,
    layout: u8,
    scheme: u8,
    seed: u64,
    /// Arguments for the rate formulas.
    m: Count,
    n: Count,
    k: u8,
    x: Count,
    count_min: CountMinInput,
}

#[derive(Arbitrary, Debug)]
struct CountMinInput {
    epsilon: Option<Prob>,
    delta: Option<Prob>,
    width: Option<Count>,
    depth: Option<u16>,
    independent: bool,
}

/// The filters a target may allocate (2^24 bits, 2 MiB).
const BUILD_LIMIT: u64 = common::MAX_FUZZ_BITS;

fn probability(name: &str, p: f64) {
    assert!(
        (0.0..=1.0).contains(&p),
        "{name} = {p} is not a probability"
    );
}

fn builder(input: &Input) {
    let layout = common::layout(input.layout);
    let scheme = common::scheme(input.scheme);
    let mut b = BloomFilter::builder()
        .layout(layout)
        .scheme(scheme)
        .seed(input.seed);
    if let Some(n) = input.items {
        b = b.expected_items(n.get());
    }
    if let Some(p) = input.fpr {
        b = b.fpr(p.get());
    }
    if let Some(m) = input.bits {
        b = b.bits(m.get());
    }
    if let Some(k) = input.hashes {
        b = b.hashes(u32::from(k));
    }
    let (m, k) = match b.geometry() {
        Ok(g) => g,
        Err(e) => {
            assert!(e.to_string().contains('`'), "error names no parameter: {e}");
            return;
        }
    };
    assert!((1..=BloomFilter::MAX_HASHES).contains(&k), "k = {k}");
    assert!(m >= 1 && m <= BloomFilter::MAX_BITS, "m = {m}");
    if let Some(h) = input.hashes {
        assert_eq!(k, u32::from(h), "the fixed k was not kept");
    }
    if let (Some(n), Some(p), None) = (input.items, input.fpr, input.bits) {
        // Sized from (n, p): the layout's own formula meets p.
        let (n, p) = (n.get(), p.get());
        let rate = layout.fpr(scheme, m, n, k);
        assert!(
            rate <= p * (1.0 + 1e-9),
            "{layout:?}/{scheme:?} sized n = {n}, p = {p} to m = {m}, k = {k}: rate {rate}"
        );
    }
    if m <= BUILD_LIMIT {
        let f = b.build().expect("geometry() was Ok, build() must be too");
        assert_eq!((f.num_bits(), f.num_hashes()), (m, k));
        assert_eq!(f.expected_fpr(), 0.0);
        assert_eq!(f.count_ones(), 0);
    }
}

fn formulas(input: &Input) {
    let m = input.m.get().clamp(1, BloomFilter::MAX_BITS);
    // classic_fpr_exact is documented for n up to 10^12.
    let n = input.n.get() % 1_000_000_000_001;
    let k = u32::from(input.k) % (BloomFilter::MAX_HASHES + 1);
    for (name, p) in [
        ("classic_fpr", classic_fpr(m, n, k)),
        ("bloom_fpr", bloom_fpr(m, n, k)),
        ("classic_fpr_exact", classic_fpr_exact(m, n, k)),
        ("partitioned_fpr", partitioned_fpr(m, n, k)),
        ("pair_collision_rate", pair_collision_rate(m, n, 2.0)),
    ] {
        probability(name, p);
    }
    for layout in Layout::ALL {
        for scheme in Scheme::ALL {
            probability(layout.name(), layout.fpr(scheme, m, n, k));
        }
    }
    if k >= 1 {
        // Bloom's formula treats the probed bits as independent: a lower
        // bound on the exact rate (up to rounding).
        let exact = classic_fpr_exact(m, n, k);
        let bloom = bloom_fpr(m, n, k);
        assert!(
            bloom <= exact * (1.0 + 1e-6) + 1e-300,
            "bloom_fpr({m}, {n}, {k}) = {bloom} above the exact rate {exact}"
        );
        let x = input.x.get() % (m + 1);
        let est = estimate_items(m, k, x);
        assert!(
            est >= 0.0 && !est.is_nan(),
            "estimate_items({m}, {k}, {x}) = {est}"
        );
    }
    let opt = optimal_hashes(m, n);
    assert!(
        (1..=BloomFilter::MAX_HASHES).contains(&opt),
        "optimal_hashes({m}, {n}) = {opt}"
    );
}

fn count_min(input: &CountMinInput) {
    let scheme = if input.independent {
        CountMinScheme::Independent
    } else {
        CountMinScheme::DoubleHashing
    };
    let mut b = CountMinSketch::builder().scheme(scheme);
    if let Some(e) = input.epsilon {
        b = b.epsilon(e.get());
    }
    if let Some(d) = input.delta {
        b = b.delta(d.get());
    }
    if let Some(w) = input.width {
        b = b.width(w.get());
    }
    if let Some(d) = input.depth {
        b = b.depth(u32::from(d));
    }
    let dims = match b.dimensions() {
        Ok(d) => d,
        Err(e) => {
            assert!(e.to_string().contains('`'), "error names no parameter: {e}");
            return;
        }
    };
    let rows = u64::from(dims.depth) * u64::from(dims.copies);
    assert!(dims.width >= 1 && rows >= 1 && rows <= u64::from(CountMinSketch::MAX_ROWS));
    assert!(dims.width * rows <= CountMinSketch::MAX_COUNTERS);
    if let Some(e) = input.epsilon.map(Prob::get) {
        if !input.independent {
            probability("two_hash_bound", two_hash_bound(e, dims.width, dims.depth));
        }
        if let Some(d) = input.delta.map(Prob::get) {
            sizing_contract(input.independent, e, d, dims);
        }
    }
    if dims.width * rows * 64 <= BUILD_LIMIT {
        let sketch = b.build().expect("dimensions() was Ok, build() must be too");
        assert_eq!(sketch.dimensions(), dims);
        if let Some(e) = input.epsilon.map(Prob::get) {
            probability("failure_bound", sketch.failure_bound(e));
        }
    }
}

/// The sizing contract of `(epsilon, delta)` (src/count_min/mod.rs, "How
/// lesshash sizes a two-hash sketch"), checked on every sized sketch: each
/// dimension meets its bound and is the smallest that does, so one copy,
/// one table or one prime too many fails here as surely as one too few.
fn sizing_contract(independent: bool, e: f64, delta: f64, dims: CountMinDimensions) {
    let CountMinDimensions {
        width: w,
        depth: d,
        copies: c,
    } = dims;
    let ctx = format!("epsilon {e:e}, delta {delta:e}: {dims:?}");
    // A relative slack of 1e-9 for the sizing's own floating point.
    let le = |x: f64, y: f64| x <= y * (1.0 + 1e-9);
    if independent {
        // w = ceil(e/epsilon), d = ceil(ln 1/delta), one copy.
        let ideal = std::f64::consts::E / e;
        assert!(
            le(ideal, w as f64) && ((w - 1) as f64) < ideal * (1.0 + 1e-9) || w == 1,
            "{ctx}"
        );
        let depth = (1.0 / delta).ln().ceil().max(1.0);
        assert_eq!(f64::from(d), depth, "{ctx}");
        assert_eq!(c, 1, "{ctx}");
        return;
    }
    // w: a prime >= 2e/epsilon, the smallest (checked where trial division
    // is cheap).
    let min_width = (2.0 * std::f64::consts::E / e).ceil().max(1.0);
    assert!(w as f64 >= min_width, "{ctx}: width below 2e/epsilon");
    if w < 10_000_000 {
        assert!(is_prime(w), "{ctx}: width not prime");
        assert!(
            (min_width as u64..w).all(|x| !is_prime(x)),
            "{ctx}: a smaller prime width exists"
        );
    }
    let bound = |depth: u32| two_hash_bound(e, w, depth);
    let max_depth = w.min(u64::from(CountMinSketch::MAX_ROWS)) as u32;
    // The one-sketch option: the smallest d with bound(d) <= delta.
    let single = (1..=max_depth).find(|&x| bound(x) <= delta);
    if c == 1 {
        // One sketch: bound(d) <= delta, and d is the smallest such.
        assert!(bound(d) <= delta, "{ctx}: bound {} > delta", bound(d));
        assert_eq!(Some(d), single, "{ctx}: not the smallest depth");
    } else {
        // Copies: bound(d) <= epsilon with d the smallest such, bound(d)^c
        // <= delta with c the smallest such, and fewer rows than one sketch.
        let per_copy = bound(d);
        assert!(per_copy <= e, "{ctx}: per-copy bound {per_copy} > epsilon");
        assert!(d == 1 || bound(d - 1) > e, "{ctx}: not the smallest depth");
        assert!(
            le(per_copy.powi(c as i32), delta),
            "{ctx}: bound^copies {} > delta",
            per_copy.powi(c as i32)
        );
        assert!(
            per_copy.powi(c as i32 - 1) > delta * (1.0 - 1e-9),
            "{ctx}: {} copies meet delta already",
            c - 1
        );
        if let Some(s) = single {
            assert!(
                u64::from(d) * u64::from(c) < u64::from(s),
                "{ctx}: one sketch of depth {s} has no more rows"
            );
        }
    }
}

/// Trial division (the sizes it is called on are below 10^7).
fn is_prime(n: u64) -> bool {
    n >= 2 && (2..).take_while(|x| x * x <= n).all(|x| n % x != 0)
}

fuzz_target!(|input: Input| {
    builder(&input);
    formulas(&input);
    count_min(&input.count_min);
});
