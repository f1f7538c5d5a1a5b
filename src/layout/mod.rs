//! Filter layouts: how the k probes of a key are placed in the bit array.
//!
//! Each layout has its own module with its own sizing rule, false-positive
//! formula and cardinality estimate; the builder and the filter dispatch on
//! [`Layout`]. A layout never borrows another layout's formula: sizing a
//! partitioned (or blocked) filter with the classic formula is how peers
//! shipped filters that miss their target rate.

// `forbid` would extend to `blocked::avx2`, the one submodule with
// `unsafe` (the AVX2 probe); every other layout module forbids it.
#![deny(unsafe_code)]

pub(crate) mod blocked;
pub(crate) mod flat;

use flat::{classic, partitioned};
#[cfg(test)]
mod tests;

use std::ops::RangeInclusive;

use crate::Error;
use crate::rates::Overlaps;
use crate::scheme::Scheme;
use crate::util::limits::MAX_HASHES;

/// Where the k probes of a key go.
///
/// The default is [`Blocked`](Layout::Blocked), chosen by measurement
/// (`docs/bench-notes/2026-11-23.md`, "Defaults"): a query reads one cache
/// line per key instead of classic's k, for about 0.3 more bits per key at
/// 1%, and its sizing meets the requested rate at every n measured, from 1
/// key up.
///
/// The explicit discriminants are the layout's id in the binary format and
/// never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
#[repr(u8)]
pub enum Layout {
    /// One array of m bits; each probe anywhere in it. The most accurate
    /// layout per bit; each probe may touch another cache line.
    Classic = 1,
    /// k disjoint sub-arrays of `m / k` bits; probe i goes to sub-array i
    /// (the paper's partition scheme, Sec. 5.1; Yu et al.'s "Count-Min Bloom
    /// filter"). Slightly less accurate than classic; the probes of a key are
    /// always distinct.
    Partitioned = 2,
    /// `m / 512` cache-line blocks; a key's k bits all lie in one block,
    /// anywhere inside it. One cache miss per key whatever k; needs a little
    /// more space than classic (9.92 bits/key for 1%, classic 9.59). k from
    /// 1 to 64. See `src/layout/blocked/`. The default layout.
    #[default]
    Blocked = 3,
    /// The paper's partition scheme inside a cache line: the 512-bit block
    /// is split into k segments of `512 / k` bits and a key sets one bit in
    /// each (k = 8: one bit per u64 word). k from 1 to 64; a power of two
    /// wastes no bit of the block (other k leave `512 mod k` bits unused). The
    /// cheapest probe (one vector compare for k = 8 or 16); 10.10 bits/key
    /// for 1% at k = 8. Not Parquet's split-block filter
    /// ([`ParquetFilter`](crate::parquet::ParquetFilter): 256-bit
    /// blocks of eight 32-bit words, always eight probes, XXH64).
    SplitBlock = 4,
}

crate::error::named_enum!(Layout, "layout");

impl Layout {
    /// The scheme a filter of this layout gets unless one is chosen
    /// ([`Builder::scheme`](crate::Builder::scheme)), by measurement:
    ///
    /// * blocked layouts: [`Scheme::DoubleHashing`]. Their in-block line tests
    ///   come from h2 alone (salted multiplies); every two-hash scheme
    ///   sets the same bits, so the cheapest name is the honest one.
    /// * classic and partitioned: enhanced double hashing with `f(i) =
    ///   i^3` ([`Scheme::default`]), chosen when plain double hashing
    ///   missed the requested rate on small filters. The builder now sizes
    ///   each scheme by a rate that counts its coinciding probe sequences,
    ///   so both meet it; the cube still gives smaller classic filters at
    ///   small n (`docs/bench-notes/2026-11-23.md`, "Defaults";
    ///   `docs/bench-notes/2026-11-25.md`, "Hash engine, index lanes and
    ///   kernel layer").
    pub fn default_scheme(self) -> Scheme {
        match self {
            Layout::Blocked | Layout::SplitBlock => Scheme::DoubleHashing,
            Layout::Classic | Layout::Partitioned => Scheme::default(),
        }
    }

    /// A short stable name (used in messages and by the CLI).
    pub fn name(self) -> &'static str {
        match self {
            Layout::Classic => "classic",
            Layout::Partitioned => "partitioned",
            Layout::Blocked => "blocked",
            Layout::SplitBlock => "split-block",
        }
    }

    /// Every layout.
    pub const ALL: [Layout; 4] = [
        Layout::Classic,
        Layout::Partitioned,
        Layout::Blocked,
        Layout::SplitBlock,
    ];

    /// Whether every key lives in one 512-bit block (one cache line):
    /// [`Blocked`](Layout::Blocked) and [`SplitBlock`](Layout::SplitBlock).
    pub fn is_blocked(self) -> bool {
        matches!(self, Layout::Blocked | Layout::SplitBlock)
    }

    /// The m this layout stores for a request of `m` bits and k probes
    /// (both already in range): classic as asked, partitioned rounded down
    /// to k equal sub-arrays, the blocked layouts up to whole 512-bit
    /// blocks. The one rule the builder sizes by and the format checks
    /// loaded files against, without building anything.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming `bits` for a partitioned filter of
    /// fewer than k bits.
    pub(crate) fn stored_bits(self, m: u64, k: u32) -> Result<u64, Error> {
        match self {
            Layout::Classic => Ok(m),
            Layout::Partitioned => {
                let part = m / u64::from(k);
                if part == 0 {
                    return Err(Error::invalid(
                        "bits",
                        format!("the partitioned layout needs at least k = {k} bits, got {m}"),
                    ));
                }
                Ok(part * u64::from(k))
            }
            // Whole 512-bit blocks; MAX_BITS is a multiple of 512.
            Layout::Blocked | Layout::SplitBlock => Ok(m.next_multiple_of(blocked::BLOCK_BITS)),
        }
    }

    /// The `(bits, hashes)` this layout needs to hold `n` keys at rate `p`
    /// with `scheme` (p already validated), with k fixed when given.
    pub(crate) fn size_for(
        self,
        scheme: Scheme,
        n: u64,
        p: f64,
        k: Option<u32>,
    ) -> Result<(u64, u32), Error> {
        if self.is_blocked() {
            return blocked::size_for(n, p, k, |m, k| self.fpr(scheme, m, n, k));
        }
        let step = match self {
            Layout::Partitioned => u64::from,
            _ => |_| 1,
        };
        if n == 0 {
            let k = k.unwrap_or(1);
            return Ok((MIN_SIZED_BITS.next_multiple_of(step(k)), k));
        }
        let bits_for = |k: u32, below: Option<u64>, fpr: &dyn Fn(u64) -> f64| {
            let guess = crate::rates::classic_bits_guess(n, p, k);
            crate::rates::smallest_bits_search(p, step(k), guess, below, fpr)
        };
        // The exact classic rate costs O(k^2) per evaluation and a search
        // evaluates it ~80 times per k: pick the candidate k by the
        // asymptotic rate (same two-hash terms), then size by the exact
        // ideal rate only around it. The asymptotic and exact rates differ
        // by O(k/m), which moves the best k by at most one.
        let window = match (k, self) {
            (None, Layout::Classic) => {
                let (_, k_est) = best_over_k(p, None, |k, below| {
                    bits_for(k, below, &|m| {
                        self.fpr_with(scheme, m, n, k, crate::rates::classic_fpr)
                    })
                })?;
                Some(k_est.saturating_sub(1).max(1)..=(k_est + 1).min(MAX_HASHES))
            }
            (Some(k), _) => Some(k..=k),
            (None, _) => None,
        };
        let (m, k) = best_over_k_in(p, window, |k, below| {
            bits_for(k, below, &|m| self.fpr_with(scheme, m, n, k, classic::fpr))
        })?;
        let m = m.max(MIN_SIZED_BITS.next_multiple_of(step(k)));
        if self == Layout::Classic && scheme.is_two_hash() && k >= 2 {
            return Ok((self.enumerated_bits(scheme, m, n, p, k)?, k));
        }
        // The builder grows the range to a prime (`built_bits`).
        Ok((m, k))
    }

    /// The classic two-hash m sized by the model, checked by the rate the
    /// filter will report: the range it is built with (m grown to a prime)
    /// and then grown, a prime at a time, until its rate
    /// ([`fpr`](Self::fpr): the enumeration where it applies) meets p. The
    /// search sizes by the model with its margins, whose evaluations are
    /// cheap; the enumeration (up to about 1.5 ms) runs once here.
    /// The margins bound the enumeration wherever it was checked, so this
    /// seldom grows m; it makes the target hold by the exact rate wherever
    /// the enumeration applies.
    fn enumerated_bits(self, scheme: Scheme, m: u64, n: u64, p: f64, k: u32) -> Result<u64, Error> {
        let mut m = prime_range(m, 1);
        while self.fpr(scheme, m, n, k) > p {
            let grown = prime_range(m + 1 + m / 1024, 1);
            if grown <= m {
                return Err(too_few_bits(p));
            }
            m = grown;
        }
        Ok(m)
    }

    /// The m a filter of this layout and scheme is built with for a request
    /// of `m` bits and k probes: [`stored_bits`](Self::stored_bits), and for
    /// a two-hash scheme on the classic or partitioned layout the range (m,
    /// or m / k) grown to the next prime, where the rates of
    /// [`fpr`](Self::fpr) hold (`prime_range`). Files keep the m they were
    /// written with: loading checks [`stored_bits`](Self::stored_bits) only.
    pub(crate) fn built_bits(self, scheme: Scheme, m: u64, k: u32) -> Result<u64, Error> {
        let m = self.stored_bits(m, k)?;
        Ok(match self {
            Layout::Classic if scheme.is_two_hash() => prime_range(m, 1),
            Layout::Partitioned if scheme.is_two_hash() => prime_range(m, u64::from(k)),
            _ => m,
        })
    }

    /// The optimal k for m bits and n keys in this layout.
    pub(crate) fn optimal_hashes(self, m: u64, n: u64) -> u32 {
        if self.is_blocked() {
            return blocked::optimal_hashes(blocked::Segments::of(self), m, n);
        }
        crate::rates::optimal_hashes(m, n)
    }

    /// The expected false-positive rate after n keys in m bits with k probes
    /// per key, derived by `scheme`.
    ///
    /// * Every layout with [`Scheme::Independent`], and any scheme with
    ///   k = 1: the layout's exact rate under ideal hashing.
    /// * Partitioned with a two-hash scheme: exact for a prime sub-array
    ///   size `m / k` (the builder's), in closed form
    ///   ([`rates`](crate::rates), "The two-hash rates").
    /// * Classic with a two-hash scheme over a prime m: exact by
    ///   enumeration of every query stride where that costs at most about
    ///   1.5 ms (plain double hashing, which needs one stride, up to k = 12;
    ///   the enhanced schemes at k = 3 up to m of about 1,100 and at k = 4
    ///   up to about 300); elsewhere
    ///   the exact rate under ideal hashing
    ///   ([`classic_fpr_exact`](crate::rates::classic_fpr_exact)) plus the
    ///   first-order model of what the probe sequences add
    ///   ([`pair_collision_rate`](crate::rates::pair_collision_rate) and
    ///   [`partial_overlap_rate`](crate::rates::partial_overlap_rate)),
    ///   raised by margins that make it an upper bound on the exact rate
    ///   wherever the enumeration can check it ([`rates`](crate::rates),
    ///   "The two-hash rates").
    /// * Blocked layouts: the exact mixture over a block's load, plus the
    ///   chance that a query and a member share the block and all of h2.
    ///
    /// This is the formula the builder sizes by.
    /// A filter's [`expected_fpr`](crate::BloomFilter::expected_fpr) adds
    /// the same excess over ideal hashing to its rate from the fill.
    ///
    /// Degenerate arguments give the rate they mean rather than a panic: with
    /// `k = 0` no probe can reject a key (1.0); with `n = 0` nothing is set
    /// (0.0, for k >= 1). For the classic layout, k above
    /// [`BloomFilter::MAX_HASHES`](crate::BloomFilter::MAX_HASHES) (no filter has it) gives
    /// Bloom's formula, a lower bound; see
    /// [`classic_fpr_exact`](crate::rates::classic_fpr_exact). For the
    /// partitioned layout it gives the rate under ideal hashing.
    pub fn fpr(self, scheme: Scheme, m: u64, n: u64, k: u32) -> f64 {
        match self.two_hash_exact(scheme, m, n, k) {
            Some(rate) => rate,
            None => self.fpr_with(scheme, m, n, k, classic::fpr),
        }
    }

    /// A two-hash scheme's exact rate where this layout has one
    /// (partitioned always; classic over a prime m within the enumeration's
    /// budget); `None` for the others, the blocked layouts, k < 2 and k
    /// above [`MAX_HASHES`].
    fn two_hash_exact(self, scheme: Scheme, m: u64, n: u64, k: u32) -> Option<f64> {
        // No filter has k above MAX_HASHES; there (the public rate's
        // degenerate arguments) the ideal rate stands, as for the classic
        // layout's exact formula.
        if !scheme.is_two_hash() || !(2..=MAX_HASHES).contains(&k) {
            return None;
        }
        match self {
            Layout::Classic => classic::two_hash_fpr(scheme, m, n, k),
            Layout::Partitioned => Some(partitioned::two_hash_fpr(m, n, k)),
            Layout::Blocked | Layout::SplitBlock => None,
        }
    }

    /// [`fpr`](Self::fpr) as cheap to evaluate as a sizing search needs:
    /// the classic layout by the model, with its ideal rate given by
    /// `classic_rate` (the exact one, or the asymptotic one for a cheaper
    /// estimate); the others as in [`fpr`](Self::fpr).
    fn fpr_with(
        self,
        scheme: Scheme,
        m: u64,
        n: u64,
        k: u32,
        classic_rate: fn(u64, u64, u32) -> f64,
    ) -> f64 {
        if k == 0 {
            return 1.0;
        }
        if self == Layout::Partitioned
            && let Some(rate) = self.two_hash_exact(scheme, m, n, k)
        {
            return rate;
        }
        let ideal = match self {
            Layout::Classic => classic_rate(m, n, k),
            Layout::Partitioned => partitioned::fpr(m, n, k),
            Layout::Blocked | Layout::SplitBlock => {
                blocked::fpr(blocked::Segments::of(self), m, n, k)
            }
        };
        self.model_coincidences(scheme, m, n, k, ideal)
    }

    /// A rate `ideal` of k independent hashes (a filter's rate from its
    /// fill) raised by what `scheme`'s probe sequences add for n keys in m
    /// bits: the exact rate's excess over ideal hashing's where
    /// [`fpr`](Self::fpr) is exact (it may be negative: plain double
    /// hashing's query probes never repeat), else the model's terms.
    pub(crate) fn with_coincidences(
        self,
        scheme: Scheme,
        m: u64,
        n: u64,
        k: u32,
        ideal: f64,
    ) -> f64 {
        match self.two_hash_exact(scheme, m, n, k) {
            Some(exact) => {
                let independent = self.fpr_with(Scheme::Independent, m, n, k, classic::fpr);
                (ideal + (exact - independent)).clamp(0.0, 1.0)
            }
            None => self.model_coincidences(scheme, m, n, k, ideal),
        }
    }

    /// `ideal` raised by the model of what `scheme`'s probe sequences add
    /// (the classic and blocked layouts; the partitioned layout's rate is
    /// exact): on the blocked layouts, the chance that a query and a member
    /// share the block and all of h2; on the classic layout, the chance that
    /// a query's probes coincide with all of one member's
    /// ([`pair_collision_rate`](crate::rates::pair_collision_rate)) and that
    /// members cover several of them
    /// ([`partial_overlap_rate`](crate::rates::partial_overlap_rate)),
    /// raised by the margins of `rates::model_margin`.
    fn model_coincidences(self, scheme: Scheme, m: u64, n: u64, k: u32, ideal: f64) -> f64 {
        if !scheme.is_two_hash() || k < 2 {
            return ideal;
        }
        if self.is_blocked() {
            // A query coincides with a member on every probe when they share
            // the block and all 64 bits of h2 (k >= 2 uses both halves).
            let blocks = (m / blocked::BLOCK_BITS).max(1) as f64;
            let q = 2f64.powi(-64) / blocks;
            let coincide = -(n as f64 * (-q).ln_1p()).exp_m1();
            return coincide + (1.0 - coincide) * ideal;
        }
        if self == Layout::Partitioned {
            // Only for k above MAX_HASHES (else the rate is exact): the
            // ideal rate.
            return ideal;
        }
        let overlaps = classic::overlaps(scheme);
        // A sequence read backwards is another member's unless f(i) = i^3
        // breaks the symmetry (`rates/coincidence.rs`); with k <= 3 nothing
        // can (reversal keeps f's second difference).
        let sets_per_pair = if overlaps == Overlaps::None && k > 3 {
            1.0
        } else {
            2.0
        };
        let margin = crate::rates::model_margin(overlaps, m, n, k);
        let coincide =
            crate::rates::pair_collision_rate(m, n, sets_per_pair * (1.0 + margin.identical));
        let partial = crate::rates::partial_overlap_rate(overlaps, m, n, k);
        let rest = ((ideal + partial) * (1.0 + margin.light)).min(1.0);
        ((coincide + (1.0 - coincide) * rest) * (1.0 + margin.whole)).min(1.0)
    }
}

/// The least number of bits the builder sizes a filter to from (n, p).
///
/// Storage comes in 512-bit blocks, so a smaller m saves nothing; and at
/// tiny m the two-hash schemes are measurably worse than ideal hashing (their
/// rate converges to the ideal one as O(1/n), Kirsch and Mitzenmacher Sec. 6):
/// n = 1 at 1% sized to 11 bits measured 1.16%. One block keeps tiny filters
/// below their target. Explicit `bits(m)` is not affected.
pub(crate) const MIN_SIZED_BITS: u64 = 512;

/// m bits in `parts` equal ranges (classic 1, partitioned k), grown so
/// that the range is prime when a prime range fits in `MAX_BITS` (else m
/// unchanged). A two-hash probe sequence `a + i b` then has every stride b
/// coprime to its range, as the paper's analysis assumes (a prime m): over
/// a composite range, strides sharing a factor with it revisit bits. The
/// rate only falls as m grows, so the target stays met. Measured (classic,
/// double hashing, explicit m): at m = 966 and n = 100, k = 7, 1.093%
/// against the formula's 0.997%; at the prime 967, 1.013%; at p = 1e-6
/// (n = 1000, k = 24) 6.3x the formula at m = 44,738 and 2.4x at 44,741.
///
/// A power-of-two range, whose strides are odd and so coprime to it, is
/// grown too: the differences of two odd strides are even, so two keys'
/// sequences meet on every other probe far more often than over a prime
/// (partitioned, n = 5, k = 4: 4.3% at m = 64, in
/// sub-arrays of 16 bits, against 1.93% at m = 68, in prime sub-arrays of 17,
/// whose rate is 2.28%).
fn prime_range(m: u64, parts: u64) -> u64 {
    let range = m / parts;
    crate::util::primes::next_prime(range)
        .map(|r| r * parts)
        .filter(|&grown| grown <= crate::util::limits::MAX_BITS)
        .unwrap_or(m)
}

/// Tries k over a window around the optimum for `p` and keeps the smallest m
/// (the smaller k on a tie); `bits_for(k)` returns the smallest m for that k.
pub(crate) fn best_over_k(
    p: f64,
    fixed_k: Option<u32>,
    bits_for: impl Fn(u32, Option<u64>) -> Option<u64>,
) -> Result<(u64, u32), Error> {
    best_over_k_in(p, fixed_k.map(|k| k..=k), bits_for)
}

/// [`best_over_k`] over `window`, or, when `None`, the default window: k from
/// half to three more than `log2(1/p)`, the asymptotic optimum (tiny n
/// favours a smaller k), within `1..=MAX_HASHES`.
fn best_over_k_in(
    p: f64,
    window: Option<RangeInclusive<u32>>,
    bits_for: impl Fn(u32, Option<u64>) -> Option<u64>,
) -> Result<(u64, u32), Error> {
    let candidates = window.unwrap_or_else(|| {
        // Clamp before the arithmetic: for subnormal p, 1/p is infinite and
        // the cast saturates at u32::MAX.
        let k0 = ((1.0 / p).log2().round().max(1.0) as u32).min(MAX_HASHES);
        (k0 / 2).max(1)..=(k0 + 3).min(MAX_HASHES)
    });
    best_of(p, candidates, bits_for)
}

/// The smallest `(m, k)` over the ks tried (the first k on a tie), or an
/// error naming `fpr` when no k reaches p within `MAX_BITS`: the one search
/// loop of every layout's sizing. `bits_for(k, below)` is the smallest m
/// for k, searched only below `below` (the best m so far) when given:
/// `None` when k cannot beat it (one rate evaluation instead of a search).
pub(crate) fn best_of(
    p: f64,
    ks: impl IntoIterator<Item = u32>,
    bits_for: impl Fn(u32, Option<u64>) -> Option<u64>,
) -> Result<(u64, u32), Error> {
    let mut best: Option<(u64, u32)> = None;
    for k in ks {
        if let Some(m) = bits_for(k, best.map(|(bm, _)| bm))
            && best.is_none_or(|(bm, _)| m < bm)
        {
            best = Some((m, k));
        }
    }
    best.ok_or_else(|| too_few_bits(p))
}

/// The error of a rate that no size within `MAX_BITS` reaches, naming
/// `fpr`.
fn too_few_bits(p: f64) -> Error {
    Error::invalid(
        "fpr",
        format!(
            "a rate of {} needs more than the maximum of {} bits for this many items \
             with at most {MAX_HASHES} hashes",
            crate::util::limits::format_rate(p),
            crate::util::limits::MAX_BITS
        ),
    )
}
