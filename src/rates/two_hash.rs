//! The exact false-positive rates of the two-hash schemes on the flat
//! layouts over a prime range r (re-exported by [`crate::rates`]).
//!
//! A key's start a is uniform in `[0, r)` and its stride b in `[1, r - 1]`
//! (what `start_and_stride` draws over a range that is not a power of two),
//! its probes `a + i b + f(i) mod r` for i < k, which may repeat. The
//! members and the query are independent. Nothing else is assumed: these
//! rates count every repeated probe and every member covering several of
//! the query's probes, which the first-order model of `coincidence.rs`
//! approximates.
//!
//! # Partitioned: a closed form
//!
//! Probe i of every key lies in sub-array i, at `a + i b + f(i)`; a member
//! `(a', b')` meets the query there when `(a - a') + i (b - b') = 0 mod r`,
//! so `f` cancels (all three two-hash schemes give the same answers). With
//! `b' = b` it meets all k probes (`a' = a`) or none; with `b' != b` the
//! index classes `i mod r` of `[0, k)` are met one at a time, class c by
//! the one `a'` with `a' - a = c (b - b')`. So a member covers every probe
//! with probability `q0 = 1/(r (r - 1))`, the probes of one given class
//! with probability `q1 = (r - 2)/(r (r - 1))`, and nothing else, and with
//! `C = min(k, r)` classes
//!
//! ```text
//! P = 1 - (1 - q0)^n + (1 - q0)^n Pr[n draws cover C cells, each of probability q1 / (1 - q0)],
//! ```
//!
//! an occupancy probability evaluated as the classic layout's
//! ([`all_set_probability`]). O(k); exact at every prime range.
//!
//! # Classic: an enumeration
//!
//! A shift of every key by c changes no answer, so the query's start is 0
//! and its stride bq runs over `[1, r - 1]` (plain double hashing: only
//! `bq = 1`, since multiplying every position by `1/bq` maps the keys onto
//! themselves). Let S be the query's distinct probes. By inclusion-exclusion
//! over the subsets T of S, n members cover S with probability
//!
//! ```text
//! sum_{T ⊆ S} (-1)^|T| (1 - hit(T) / (r (r - 1)))^n,
//! ```
//!
//! `hit(T)` the number of members `(a', b')` with a probe in T. Each of the
//! `k |T|` pairs (probe x in T, member index j) meets exactly one member per
//! stride, so `hit(T) = (r - 1) k |T|` less what members meeting T more than
//! once take back. Two such pairs `(x1, j1)`, `(x2, j2)` with `j1 != j2`
//! belong to one member for exactly one stride, `b' = (x2 - x1 + f(j1) -
//! f(j2)) / (j2 - j1)`; so the members meeting S at least twice are found
//! from the `O((k |S|)^2)` pairs of pairs, and with `W(x)` the pairs they
//! hold at x, M their number and `G(V)` the number of them whose probes in
//! S all lie in V,
//!
//! ```text
//! hit(T) = (r - 1) k |T| - sum_{x in T} W(x) + M - G(S \ T).
//! ```
//!
//! G is a subset-sum transform over S. One query stride costs about
//! `k^4 / 2` pairs of pairs (each member's k probes then looked up) and
//! `2^k` terms; the rate costs r - 1 of them for the enhanced schemes
//! (docs/bench-notes/2026-11-27.md, "Construction cost with exact
//! two-hash rates") and one for plain double hashing:
//! [`classic_rate`] declines past a budget, and the layout then uses the
//! model with its margins (`Layout::fpr`). Where the alternating sum
//! cancels (tiny rates at large k) the result is rounded up by a bound on
//! its rounding error, so it stays an upper bound on the exact rate.

#![forbid(unsafe_code)]

use super::all_set_probability;

/// The exact rate of a partitioned filter with a two-hash scheme, k
/// sub-arrays of a prime r bits each, after n keys (module docs). Any
/// scheme: `f(i)` cancels within a sub-array.
pub(crate) fn partitioned_rate(r: u64, n: u64, k: u32) -> f64 {
    if k == 0 {
        return 1.0;
    }
    if n == 0 {
        return 0.0;
    }
    if r < 2 {
        return 1.0;
    }
    let rf = r as f64;
    let pairs = rf * (rf - 1.0);
    let q0 = 1.0 / pairs;
    let q1 = (rf - 2.0) / pairs;
    let classes = u64::from(k).min(r) as u32;
    let n = n as f64;
    // Pr[no member covers all k]: (1 - q0)^n.
    let none_full = (n * (-q0).ln_1p()).exp();
    let covered = if q1 > 0.0 {
        all_set_probability((1.0 - q0) / q1, n, classes)
    } else {
        0.0 // r = 2: one stride, so a member meets all probes or none
    };
    ((1.0 - none_full) + none_full * covered).clamp(0.0, 1.0)
}

/// The work [`classic_rate`] may do, in nanoseconds of this machine's
/// (an Intel Xeon core): past it the classic layout uses the model.
pub(crate) const CLASSIC_BUDGET: u64 = 1_500_000;

/// About what [`classic_rate`] costs for k probes over r, in nanoseconds:
/// per query stride about `k^4 / 2` pairs of pairs, each member's k probes
/// looked up, and the `2^k` terms of the inclusion-exclusion, an `exp`
/// each (fitted to measured times: docs/bench-notes/2026-11-27.md,
/// "Construction cost with exact two-hash rates").
pub(crate) fn classic_cost(k: u32, r: u64, every_stride: bool) -> u64 {
    let strides = if every_stride { r.saturating_sub(1) } else { 1 };
    let members = u64::from(k).saturating_pow(5).saturating_mul(9) / 2;
    let terms = 1u64.checked_shl(k).unwrap_or(u64::MAX).saturating_mul(30);
    strides.saturating_mul(members.saturating_add(terms))
}

/// The exact rate of a classic filter of a prime r bits after n keys whose
/// probes are `a + i b + f[i] mod r` (f reduced mod r, `k = f.len()`),
/// by the enumeration of the module docs, rounded up by a bound on its
/// rounding error (so an upper bound on the exact rate; the bound is below
/// 1e-9 of the rate except where a tiny rate is an alternating sum of
/// terms near 1). `None` where that would cost more than `budget`
/// nanoseconds ([`classic_cost`]), or where r is not above k or not below
/// `2^32`.
pub(crate) fn classic_rate(f: &[u64], r: u64, n: u64, budget: u64) -> Option<f64> {
    let k = f.len() as u32;
    if k == 0 {
        return Some(1.0);
    }
    if n == 0 {
        return Some(0.0);
    }
    let every_stride = f.iter().any(|&x| x != 0);
    if r <= u64::from(k) || r >= 1 << 32 || classic_cost(k, r, every_stride) > budget {
        return None;
    }
    let mut sums = Enumeration::new(f, r, n as f64);
    let strides = if every_stride { 1..r } else { 1..2 };
    let count = (strides.end - strides.start) as f64;
    for bq in strides {
        sums.add_query(bq);
    }
    // The sum rounded up by a bound on its rounding error: an upper bound
    // on the exact rate, equal to it where the sum does not cancel (the
    // bound is then below 1e-9 of the rate; at tiny rates and large k it
    // is not).
    let error = sums.error + count * f64::EPSILON * sums.magnitude;
    let rate = (sums.total + error) / count;
    // Never NaN: every term is in [0, 1]; a non-finite sum would be a
    // bug, and the caller's model is the safer answer then.
    rate.is_finite().then(|| rate.clamp(0.0, 1.0))
}

/// The working state of [`classic_rate`]: buffers reused across query
/// strides, and the running sums.
struct Enumeration<'a> {
    f: &'a [u64],
    r: u64,
    n: f64,
    /// `1 / d mod r` for `d < k`.
    inverse: Vec<u64>,
    reduce: Barrett,
    /// The query's distinct probes, sorted.
    set: Vec<u64>,
    /// The members meeting the set at least twice, as `b' r + a'`.
    members: Vec<u64>,
    /// Per subset mask of the set: members whose probes in it are exactly
    /// the mask, then (transformed) those within it.
    within: Vec<u64>,
    /// Per subset mask: the pairs those members hold in it.
    held: Vec<u64>,
    /// The sum of the queries' rates.
    total: f64,
    /// The sum of the queries' rates' magnitudes, and a bound on the
    /// rounding error of their terms and sums.
    magnitude: f64,
    error: f64,
}

impl<'a> Enumeration<'a> {
    fn new(f: &'a [u64], r: u64, n: f64) -> Self {
        let k = f.len() as u64;
        let inverse = (0..k)
            .map(|d| if d == 0 { 0 } else { pow_mod(d, r - 2, r) })
            .collect();
        Self {
            f,
            r,
            n,
            inverse,
            reduce: Barrett::new(r),
            set: Vec::new(),
            members: Vec::new(),
            within: Vec::new(),
            held: Vec::new(),
            total: 0.0,
            magnitude: 0.0,
            error: 0.0,
        }
    }

    /// Adds the rate of the query `(0, bq)` to the sums.
    fn add_query(&mut self, bq: u64) {
        let (f, r) = (self.f, self.r);
        let k = f.len() as u64;
        let modr = |x: u64| self.reduce.reduce(x);
        self.set.clear();
        let mut x = 0; // i bq mod r
        for &fi in f {
            self.set.push(sub_if(x + fi, r));
            x = sub_if(x + bq, r);
        }
        self.set.sort_unstable();
        self.set.dedup();
        let s = self.set.len();

        // The members meeting the set at least twice: one per pair of
        // (probe, index) pairs with distinct indices (j1 < j2, any two
        // probes x1, x2, equal ones included: a member's own repeat),
        // deduplicated.
        self.members.clear();
        for j1 in 0..k {
            for j2 in j1 + 1..k {
                // b' (j2 - j1) = x2 - x1 + f(j1) - f(j2)
                let inv = self.inverse[(j2 - j1) as usize];
                let df = sub_if(f[j1 as usize] + r - f[j2 as usize], r);
                for &x1 in &self.set {
                    // a' = x1 - j1 b' - f(j1), with b' from x2.
                    for &x2 in &self.set {
                        let num = sub_if(sub_if(x2 + r - x1, r) + df, r);
                        let b = modr(num * inv);
                        if b == 0 {
                            continue;
                        }
                        let back = sub_if(modr(j1 * b) + f[j1 as usize], r);
                        let a = sub_if(x1 + r - back, r);
                        self.members.push(b * r + a);
                    }
                }
            }
        }
        self.members.sort_unstable();
        self.members.dedup();

        let full = (1usize << s) - 1;
        self.within.clear();
        self.within.resize(1 << s, 0);
        self.held.clear();
        self.held.resize(1 << s, 0);
        // held[{x}] = W(x): the pairs at x, summed into every mask below.
        for &member in &self.members {
            let (b, a) = (member / r, member % r);
            let mut mask = 0usize;
            let mut y = a; // a + j b mod r
            for &fj in f {
                let probe = sub_if(y + fj, r);
                if let Some(ix) = self.set.iter().position(|&x| x == probe) {
                    mask |= 1 << ix;
                    self.held[1 << ix] += 1;
                }
                y = sub_if(y + b, r);
            }
            self.within[mask] += 1;
        }
        // Subset sums of `within`; `held` of a mask from its lowest bit.
        for bit in 0..s {
            for mask in 0..=full {
                if mask & 1 << bit != 0 {
                    self.within[mask] += self.within[mask ^ 1 << bit];
                }
            }
        }
        for mask in 1..=full {
            let low = mask & mask.wrapping_neg();
            if mask != low {
                self.held[mask] = self.held[mask ^ low] + self.held[low];
            }
        }

        let multi = self.members.len() as u64;
        let per_probe = (r - 1) * k;
        let pairs_total = (r * (r - 1)) as f64;
        let (mut sum, mut magnitude, mut error) = (0.0, 0.0, 0.0);
        for t in 0..=full {
            let size = t.count_ones() as u64;
            let hit = per_probe * size + multi - self.held[t] - self.within[full ^ t];
            let exponent = self.n * (-(hit as f64 / pairs_total).min(1.0)).ln_1p();
            let term = exponent.exp();
            // The quotient, ln_1p and product are each within an ulp or
            // two, an error exp multiplies by the exponent; exp adds its own.
            // Where every member meets T (hit = r (r - 1)) the exponent is
            // -inf and the term exactly 0.
            if term > 0.0 {
                error += term * (exponent.abs() * 4.0 + 2.0) * f64::EPSILON;
            }
            magnitude += term;
            sum += if size.is_multiple_of(2) { term } else { -term };
        }
        // Summing 2^s terms in order: at most (2^s) ulps of their magnitude.
        error += (full + 1) as f64 * f64::EPSILON * magnitude;
        self.total += sum;
        self.magnitude += sum.abs();
        self.error += error;
    }
}

/// `x mod r` for `x < 2 r`.
#[inline(always)]
fn sub_if(x: u64, r: u64) -> u64 {
    if x >= r { x - r } else { x }
}

/// `x mod r` for `x < r^2`, r below `2^32`, by a multiply instead of a
/// division (Barrett: the quotient estimate is low by at most one).
#[derive(Clone, Copy)]
struct Barrett {
    r: u64,
    /// `floor(2^64 / r)`.
    inverse: u64,
}

impl Barrett {
    fn new(r: u64) -> Self {
        Self {
            r,
            inverse: (u128::from(u64::MAX) + 1).div_euclid(u128::from(r)) as u64,
        }
    }

    #[inline(always)]
    fn reduce(self, x: u64) -> u64 {
        let q = ((u128::from(x) * u128::from(self.inverse)) >> 64) as u64;
        sub_if(x - q * self.r, self.r)
    }
}

/// `base^exp mod m` for m below `2^32`.
fn pow_mod(mut base: u64, mut exp: u64, m: u64) -> u64 {
    let mut acc = 1 % m;
    base %= m;
    while exp > 0 {
        if exp & 1 == 1 {
            acc = acc * base % m;
        }
        base = base * base % m;
        exp >>= 1;
    }
    acc
}
