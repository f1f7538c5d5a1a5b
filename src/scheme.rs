//! Index schemes: how the k probe positions of a key are derived.
//!
//! Kirsch and Mitzenmacher (Sec. 5.2) show that for the (enhanced) double
//! hashing scheme
//!
//! ```text
//! g_i(x) = h1(x) + i * h2(x) + f(i)   (mod r),   i = 0 .. k-1
//! ```
//!
//! with h1, h2 independent and uniform over `[0, r)`, the false-positive
//! probability tends to the standard filter's `(1 - e^{-k/c})^k`. The proof
//! holds for any r: a pair of indices collides with probability at most
//! `gcd(|i - j|, r) / r <= k / r`.
//!
//! # How lesshash maps 64-bit hashes onto `[0, r)`
//!
//! * `a = h1 * r >> 64` and `b = 1 + h2 * (r - 1) >> 64` (multiply-high, the
//!   "fastrange" reduction): uniform up to a bias of `r / 2^64`, correct for
//!   every r up to `2^64`, and never the 32-bit saturation that made peers'
//!   filters useless beyond `2^32` bits.
//! * `b` is never 0 (which would put all k probes on one bit) and is odd when
//!   r is a power of two (so the sequence does not cycle through a subgroup).
//! * The sequence itself is computed modulo r with additions only: each step
//!   adds two values below r and subtracts r once at most. For one key
//!   ([`for_each_index`], [`Progression::for_each`]) that is one chain
//!   `x_{i+1} = x_i + b` plus `f(i)` from a constant table (one more
//!   addition per probe, off the chain); the batch kernels run the
//!   recurrences of `Progression::run` on several keys at once.
//!   [`reference_index`] computes the same value with a direct 128-bit
//!   formula and is the oracle every fast path and SIMD kernel is tested
//!   against.
//!
//! Note that computing `h1 + i*h2 + f(i)` in 64-bit arithmetic *before*
//! reducing to r would make `f(i)` (at most `k^3`) vanish in the high bits
//! that the reduction keeps: enhanced double hashing must work modulo r.

#![forbid(unsafe_code)]

use crate::hash::{independent_hash, split};
use crate::simd::lanes::Lanes64;

/// How the k probe positions of a key are derived from its hash(es).
///
/// The names follow Kirsch and Mitzenmacher, "Less Hashing, Same Performance".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// The standard Bloom filter: k independent hash computations (XXH3-64
    /// with k different seeds). The baseline the paper compares against; it
    /// hashes each key k times.
    Independent,
    /// Double hashing: `g_i = h1 + i*h2 (mod r)` from one XXH3-128.
    DoubleHashing,
    /// Enhanced (the paper says "extended") double hashing:
    /// `g_i = h1 + i*h2 + f(i) (mod r)` from one XXH3-128.
    EnhancedDoubleHashing(Enhancement),
}

/// The default is enhanced double hashing with `f(i) = i^3`: as cheap as
/// plain double hashing (one addition more per probe) and it breaks the
/// arithmetic progressions that make plain double hashing repeat probes
/// when `b` shares a factor with the range.
impl Default for Scheme {
    fn default() -> Self {
        Scheme::EnhancedDoubleHashing(Enhancement::Cube)
    }
}

/// The function `f(i)` added by [`Scheme::EnhancedDoubleHashing`]. The
/// paper's experiments (Sec. 8) use both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Enhancement {
    /// `f(i) = i^2`.
    Square,
    /// `f(i) = i^3`.
    Cube,
}

crate::error::named_enum!(Scheme, "scheme", aliases = Scheme::ALIASES);

impl Scheme {
    /// Every scheme, in the order the paper lists them.
    pub const ALL: [Scheme; 4] = [
        Scheme::Independent,
        Scheme::DoubleHashing,
        Scheme::EnhancedDoubleHashing(Enhancement::Square),
        Scheme::EnhancedDoubleHashing(Enhancement::Cube),
    ];

    /// Whether the scheme derives all probes from one 128-bit hash (and so
    /// supports pre-hashed keys).
    #[inline]
    pub fn is_two_hash(self) -> bool {
        !matches!(self, Scheme::Independent)
    }

    /// Hash computations per key: k for `Independent`, 1 otherwise.
    #[inline]
    pub fn hashes_per_key(self, k: u32) -> u32 {
        if self.is_two_hash() { 1 } else { k }
    }

    /// A short stable name (used in messages and by the CLI).
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Independent => "independent",
            Scheme::DoubleHashing => "double",
            Scheme::EnhancedDoubleHashing(Enhancement::Square) => "enhanced-square",
            Scheme::EnhancedDoubleHashing(Enhancement::Cube) => "enhanced-cube",
        }
    }

    /// Other names [`FromStr`](core::str::FromStr) accepts: `standard` (the
    /// paper's name for k independent hashes) and `enhanced` (the default
    /// enhanced scheme, the cube).
    pub const ALIASES: &'static [(&'static str, Scheme)] = &[
        ("standard", Scheme::Independent),
        ("enhanced", Scheme::EnhancedDoubleHashing(Enhancement::Cube)),
    ];

    /// `f(i)` of the scheme (0 for plain double hashing).
    #[inline]
    fn f(self, i: u32) -> u128 {
        let i = u128::from(i);
        match self {
            Scheme::EnhancedDoubleHashing(Enhancement::Square) => i * i,
            Scheme::EnhancedDoubleHashing(Enhancement::Cube) => i * i * i,
            _ => 0,
        }
    }
}

/// The most probes the enhanced tables cover: [`BloomFilter::MAX_HASHES`](crate::BloomFilter::MAX_HASHES).
const MAX_TERMS: u32 = crate::util::limits::MAX_HASHES;

/// The largest range the table path takes: sums of two values below r stay
/// below `2^64` (filters' ranges are at most `MAX_BITS = 2^46`).
const TABLE_MAX_RANGE: u64 = 1 << 63;

/// `f(i)` of an enhancement for `i < MAX_TERMS`, the table of `f` values
/// (`i^2`, `i^3`) shared by every filter.
const fn powers(exp: u32) -> [u64; MAX_TERMS as usize] {
    let mut t = [0u64; MAX_TERMS as usize];
    let mut i = 0;
    while i < t.len() {
        t[i] = (i as u64).pow(exp);
        i += 1;
    }
    t
}

/// `i^2` for `i < MAX_TERMS`.
static SQUARES: [u64; MAX_TERMS as usize] = powers(2);
/// `i^3` for `i < MAX_TERMS`.
static CUBES: [u64; MAX_TERMS as usize] = powers(3);

impl Enhancement {
    /// The table of `f(i)` for `i < MAX_TERMS`.
    #[inline(always)]
    fn table(self) -> &'static [u64; MAX_TERMS as usize] {
        match self {
            Enhancement::Square => &SQUARES,
            Enhancement::Cube => &CUBES,
        }
    }
}

/// Reduces a 64-bit hash to `[0, range)` with a 64x64->128 multiply-high.
#[inline(always)]
pub fn reduce(hash: u64, range: u64) -> u64 {
    ((u128::from(hash) * u128::from(range)) >> 64) as u64
}

/// The starting point `a` and stride `b` of the double-hashing sequence of a
/// 128-bit key hash over `[0, range)`. See the module docs for the rules.
#[inline(always)]
pub fn start_and_stride(hash: u128, range: u64) -> (u64, u64) {
    start_and_stride_in(hash, range, range.is_power_of_two())
}

/// [`start_and_stride`] with `pow2` (whether `range` is a power of two)
/// given: the one definition, which [`Progression::start_and_stride`]
/// calls with the flag it computed at construction.
#[inline(always)]
fn start_and_stride_in(hash: u128, range: u64, pow2: bool) -> (u64, u64) {
    let (h1, h2) = split(hash);
    let a = reduce(h1, range);
    let b = if range <= 1 {
        0
    } else {
        // For a power-of-two range, an even stride would revisit positions
        // after range/gcd steps; odd strides are coprime to the range. The
        // result stays below range because range - 1 is odd.
        (1 + reduce(h2, range - 1)) | u64::from(pow2)
    };
    (a, b)
}

/// The oracle: index `i` of a two-hash `scheme` over `[0, range)`, from the
/// start and stride of [`start_and_stride`], by the direct formula
/// `(a + i*b + f(i)) mod range` in 128-bit arithmetic.
///
/// # Panics
/// If `range` is 0 (callers validate ranges at construction).
pub fn reference_index(scheme: Scheme, a: u64, b: u64, i: u32, range: u64) -> u64 {
    let value = u128::from(a) + u128::from(i) * u128::from(b) + scheme.f(i);
    (value % u128::from(range)) as u64
}

/// The oracle for a whole key: the k indices over `[0, range)` of a key's
/// bytes under `scheme` and `seed`. Allocates; for tests and tools.
///
/// # Panics
/// If `range` is 0, like [`reference_index`] (a filter's range is at least
/// 1; callers validate ranges at construction).
pub fn reference_indices(scheme: Scheme, bytes: &[u8], seed: u64, range: u64, k: u32) -> Vec<u64> {
    reference_indices_in(crate::HashFamily::Xxh3, scheme, bytes, seed, range, k)
}

/// [`reference_indices`] with the two-hash schemes' hash from `family`
/// (`Independent` hashes by seeded XXH3-64 in every family).
///
/// # Panics
/// As [`reference_indices`].
pub fn reference_indices_in(
    family: crate::HashFamily,
    scheme: Scheme,
    bytes: &[u8],
    seed: u64,
    range: u64,
    k: u32,
) -> Vec<u64> {
    match scheme {
        Scheme::Independent => (0..k)
            .map(|i| reduce(independent_hash(bytes, seed, i), range))
            .collect(),
        s => {
            let (a, b) = start_and_stride(family.hash_key(bytes, seed), range);
            (0..k).map(|i| reference_index(s, a, b, i, range)).collect()
        }
    }
}

/// Calls `f(i, index)` for the first k indices of a two-hash scheme over
/// `[0, range)`, stopping early (and returning `false`) when `f` does.
///
/// Incremental: after the two multiply-highs of [`start_and_stride`], each
/// further index costs one modular addition on the chain, plus one off it
/// for the enhanced schemes ([`Progression::for_each`]). Equal to
/// [`reference_index`] for every i (tested).
///
/// `scheme` must be a two-hash scheme; `Independent` is treated as double
/// hashing here (callers dispatch it before). A filter keeps a
/// [`Progression`] instead, which pays the constant reductions once.
#[inline(always)]
pub fn for_each_index(
    scheme: Scheme,
    hash: u128,
    range: u64,
    k: u32,
    f: impl FnMut(u32, u64) -> bool,
) -> bool {
    Progression::new(scheme, range).for_each(hash, k, f)
}

/// A two-hash scheme's index sequence over a fixed `[0, range)`, with the
/// per-range constants (`1 % range`, `2 % range`, `6 % range`, whether the
/// range is a power of two) computed once, at construction, instead of once
/// per key: a query then costs two multiply-highs and k rounds of
/// additions, no division.
///
/// Two ways to the same indices, both tested bit for bit against
/// [`reference_index`]:
///
/// * one key ([`for_each`](Self::for_each)): the chain `x_i = a + i*b mod
///   r` and `f(i)` (`i^2`, `i^3`) read from a constant table of
///   [`BloomFilter::MAX_HASHES`](crate::BloomFilter::MAX_HASHES) values shared by every
///   filter, where every `f(i) < range` for `i < k` (so the table needs no
///   reduction per filter and the struct stays small: it is `Copy` and
///   lives in every geometry and kernel spec). One dependent addition per
///   probe for every scheme, where the cube's recurrence chains three;
/// * the recurrences (`Progression::run`, over the lane trait `Lanes64`),
///   written once for scalar code and the SIMD kernels (keys in lanes),
///   and the single-key fallback for the smallest enhanced filters
///   (`f(k - 1) >= range`) and ranges above `2^63`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progression {
    scheme: Scheme,
    range: u64,
    /// `1 % range`, `2 % range`, `6 % range`: the constant terms of the
    /// square and cube recurrences.
    one: u64,
    two: u64,
    six: u64,
    pow2: bool,
}

impl Progression {
    /// The progression of `scheme` over `[0, range)`; `range` at least 1.
    #[inline]
    pub fn new(scheme: Scheme, range: u64) -> Self {
        let range = range.max(1);
        Self {
            scheme,
            range,
            one: 1 % range,
            two: 2 % range,
            six: 6 % range,
            pow2: range.is_power_of_two(),
        }
    }

    /// The range.
    #[inline(always)]
    pub fn range(&self) -> u64 {
        self.range
    }

    /// The scheme.
    #[inline(always)]
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// [`start_and_stride`] without the per-call power-of-two test.
    #[inline(always)]
    pub fn start_and_stride(&self, hash: u128) -> (u64, u64) {
        start_and_stride_in(hash, self.range, self.pow2)
    }

    /// Calls `f(i, index)` for the first k indices of the key with this
    /// hash, in order, stopping early (returning `false`) when `f` does.
    ///
    /// By the chain and the `f(i)` table (`chain_and_table`) wherever
    /// that applies (`uses_table`: every filter but the smallest enhanced
    /// ones), else by the recurrence (`run`). Both are [`reference_index`]
    /// exactly.
    #[inline(always)]
    pub fn for_each(&self, hash: u128, k: u32, f: impl FnMut(u32, u64) -> bool) -> bool {
        let (x, b) = self.start_and_stride(hash);
        self.lanes(x, b, k, f)
    }

    /// [`for_each`](Self::for_each) from starts `x` and strides `b` (from
    /// [`start_and_stride`](Self::start_and_stride)), for one key or a
    /// vector of keys ([`Lanes64`]; the SIMD kernels keep keys in lanes):
    /// the chain and the `f(i)` table wherever that applies, else the
    /// recurrence.
    #[inline(always)]
    pub(crate) fn lanes<V: Lanes64>(
        &self,
        x: V,
        b: V,
        k: u32,
        f: impl FnMut(u32, V) -> bool,
    ) -> bool {
        if self.uses_table(k) {
            return match self.scheme {
                Scheme::EnhancedDoubleHashing(e) => {
                    self.chain_and_table::<V, true>(x, b, k, e.table(), f)
                }
                _ => self.chain_and_table::<V, false>(x, b, k, &SQUARES, f),
            };
        }
        self.run(x, b, k, f)
    }

    /// Whether [`for_each`](Self::for_each) takes the table path for k
    /// probes: the range is at most `2^63` (so two values below it add
    /// without a carry; filters' ranges are at most `MAX_BITS = 2^46`)
    /// and, for the enhanced schemes, k is at most [`MAX_HASHES`] and
    /// `f(k - 1) < range`, so that every `f(i)` is its own residue (for
    /// the cube: ranges above 343 bits at k = 8, above 250047 at k = 64).
    /// A compare or two per key, on values fixed per filter.
    ///
    /// [`MAX_HASHES`]: crate::util::limits::MAX_HASHES
    #[inline(always)]
    fn uses_table(&self, k: u32) -> bool {
        self.range <= TABLE_MAX_RANGE
            && match self.scheme {
                Scheme::EnhancedDoubleHashing(e) => {
                    k <= MAX_TERMS && e.table()[k.max(1) as usize - 1] < self.range
                }
                _ => true,
            }
    }

    /// The k indices of one key as `x_i + f(i)`: the double-hashing
    /// chain `x_{i+1} = x_i + b (mod r)` and, for the enhanced schemes, the
    /// term `f(i)` from a constant table (the caller checks `table[i] <
    /// range` for `i < k`, so `f(i) mod r = f(i)`) added with one more
    /// modular addition that nothing else waits for. Each addition is of
    /// two values below r, reduced by one conditional subtraction, with no
    /// carry to track since `r <= 2^63`: modulo r at every step, never a
    /// wide sum reduced at the end (see the module docs).
    ///
    /// Against the recurrence ([`run`](Self::run)) this is one dependent
    /// addition per probe for every scheme instead of three chained ones
    /// for the cube (two for the square), and a cheaper addition (the
    /// recurrence's exact-for-any-r one tracks the carry). Splitting the
    /// chain into 2 or 4 interleaved chains (starts `a + jb`, step `2b` or
    /// `4b`) measured no faster: the extra set-up additions cost as much
    /// as the shorter chain saves when keys follow each other. `f` is
    /// called in order of i.
    #[inline(always)]
    fn chain_and_table<V: Lanes64, const ENHANCED: bool>(
        &self,
        a: V,
        b: V,
        k: u32,
        table: &[u64; MAX_TERMS as usize],
        mut f: impl FnMut(u32, V) -> bool,
    ) -> bool {
        let (r, r1) = (V::splat(self.range), V::splat(self.range - 1));
        let terms = &table[..(k as usize).min(table.len())];
        let mut x = a;
        for i in 0..k {
            let g = if ENHANCED {
                x.add_mod_small(V::splat(terms[i as usize]), r, r1)
            } else {
                x
            };
            if !f(i, g) {
                return false;
            }
            x = x.add_mod_small(b, r, r1);
        }
        true
    }

    /// The scheme's recurrence from starts `x` and strides `b` (from
    /// [`start_and_stride`](Self::start_and_stride)), for one key or for a
    /// vector of keys ([`Lanes64`]): calls `f(i, indices)` for i in 0..k,
    /// stopping early (returning `false`) when `f` does. The one place the
    /// square and cube recurrences are written: the fallback of
    /// [`lanes`](Self::lanes) where the table does not apply.
    #[inline(always)]
    pub(crate) fn run<V: Lanes64>(
        &self,
        mut x: V,
        b: V,
        k: u32,
        mut f: impl FnMut(u32, V) -> bool,
    ) -> bool {
        let (r, r1) = (V::splat(self.range), V::splat(self.range - 1));
        match self.scheme {
            Scheme::EnhancedDoubleHashing(Enhancement::Square) => {
                // g_{i+1} - g_i = b + 2i + 1; the difference grows by 2 per step.
                let two = V::splat(self.two);
                let mut y = b.add_mod(V::splat(self.one), r, r1);
                for i in 0..k {
                    if !f(i, x) {
                        return false;
                    }
                    x = x.add_mod(y, r, r1);
                    y = y.add_mod(two, r, r1);
                }
            }
            Scheme::EnhancedDoubleHashing(Enhancement::Cube) => {
                // g_{i+1} - g_i = b + 3i^2 + 3i + 1, whose own difference is
                // 6(i + 1); that one grows by 6 per step.
                let six = V::splat(self.six);
                let mut y = b.add_mod(V::splat(self.one), r, r1);
                let mut z = six;
                for i in 0..k {
                    if !f(i, x) {
                        return false;
                    }
                    x = x.add_mod(y, r, r1);
                    y = y.add_mod(z, r, r1);
                    z = z.add_mod(six, r, r1);
                }
            }
            _ => {
                for i in 0..k {
                    if !f(i, x) {
                        return false;
                    }
                    x = x.add_mod(b, r, r1);
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const TWO_HASH: [Scheme; 3] = [
        Scheme::DoubleHashing,
        Scheme::EnhancedDoubleHashing(Enhancement::Square),
        Scheme::EnhancedDoubleHashing(Enhancement::Cube),
    ];

    /// `reduce` is `floor(hash * range / 2^64)`: in range, monotone in the
    /// hash, and exact at the ends.
    #[test]
    fn reduce_is_the_multiply_high() {
        for range in [1u64, 2, 3, 1000, 1 << 40, u64::MAX] {
            assert_eq!(reduce(0, range), 0);
            assert_eq!(reduce(u64::MAX, range), range - 1);
            assert_eq!(reduce(1 << 63, range), range / 2);
            let p = Progression::new(Scheme::DoubleHashing, range);
            assert_eq!(p.range(), range);
        }
        assert_eq!(reduce(3 << 62, 4), 3);
    }

    fn incremental(scheme: Scheme, hash: u128, range: u64, k: u32) -> Vec<u64> {
        let mut out = Vec::new();
        for_each_index(scheme, hash, range, k, |_, x| {
            out.push(x);
            true
        });
        out
    }

    fn direct(scheme: Scheme, hash: u128, range: u64, k: u32) -> Vec<u64> {
        let (a, b) = start_and_stride(hash, range);
        (0..k)
            .map(|i| reference_index(scheme, a, b, i, range))
            .collect()
    }

    /// The table path, called directly where [`Progression::for_each`]
    /// takes it (`None` elsewhere).
    fn table_path(scheme: Scheme, hash: u128, range: u64, k: u32) -> Option<Vec<u64>> {
        let p = Progression::new(scheme, range);
        if !p.uses_table(k) {
            return None;
        }
        let (a, b) = p.start_and_stride(hash);
        let mut out = Vec::new();
        let push = |_, x| {
            out.push(x);
            true
        };
        match scheme {
            Scheme::EnhancedDoubleHashing(e) => {
                p.chain_and_table::<u64, true>(a, b, k, e.table(), push)
            }
            _ => p.chain_and_table::<u64, false>(a, b, k, &SQUARES, push),
        };
        Some(out)
    }

    /// The recurrence alone ([`Progression::run`]).
    fn recurrence(scheme: Scheme, hash: u128, range: u64, k: u32) -> Vec<u64> {
        let p = Progression::new(scheme, range);
        let (a, b) = p.start_and_stride(hash);
        let mut out = Vec::new();
        p.run(a, b, k, |_, x| {
            out.push(x);
            true
        });
        out
    }

    /// Ranges at the edges of every path: 1 to 3, small primes, powers of
    /// two and their neighbours, the cube and square bounds of the tables,
    /// around `MAX_BITS`, and around and above the table path's bound.
    fn edge_ranges() -> Vec<u64> {
        let mut ranges = vec![1, 2, 3, 5, 7, 11, 13, 61, 127, 131, 257, 8191, 131_071];
        for e in [1, 2, 5, 10, 17, 31, 32, 33, 45, 46, 47, 62, 63] {
            let p = 1u64 << e;
            ranges.extend([p - 1, p, p + 1]);
        }
        for t in [&SQUARES, &CUBES] {
            for i in [7, 8, 15, 16, 63] {
                ranges.extend([t[i] - 1, t[i], t[i] + 1].into_iter().filter(|&r| r > 0));
            }
        }
        let max_bits = crate::util::limits::MAX_BITS;
        ranges.extend([max_bits - 59, max_bits - 1, 70_368_744_177_643]); // a prime below 2^46
        ranges.extend([u64::MAX, u64::MAX - 58, (1 << 63) + 29]);
        ranges
    }

    #[test]
    fn table_path_equals_reference_on_edge_ranges() {
        let mut rng = 0x0123_4567_89ab_cdefu64;
        let mut next = || {
            rng = rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = rng;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut taken = 0;
        for range in edge_ranges() {
            for k in 0..=64 {
                for _ in 0..4 {
                    let hash = u128::from(next()) << 64 | u128::from(next());
                    for s in TWO_HASH {
                        let want = direct(s, hash, range, k);
                        assert_eq!(
                            incremental(s, hash, range, k),
                            want,
                            "{s:?} r={range} k={k}"
                        );
                        assert_eq!(recurrence(s, hash, range, k), want, "{s:?} r={range} k={k}");
                        if let Some(got) = table_path(s, hash, range, k) {
                            assert_eq!(got, want, "{s:?} r={range} k={k}");
                            taken += 1;
                        }
                    }
                }
            }
        }
        assert!(taken > 10_000, "table path taken {taken} times");
        // Every filter range of the default scheme with k <= 8 above 343
        // bits takes it.
        assert!(table_path(Scheme::default(), 1, 344, 8).is_some());
        assert!(table_path(Scheme::default(), 1, 343, 8).is_none());
        assert!(table_path(Scheme::DoubleHashing, 1, 1, 64).is_some());
    }

    #[test]
    fn table_path_stops_where_f_does() {
        for s in TWO_HASH {
            for k in 1..=64 {
                for stop in 0..k {
                    let mut seen = Vec::new();
                    let done =
                        Progression::new(s, 1_000_003).for_each(0xfeed << 70 | 99, k, |i, x| {
                            seen.push((i, x));
                            i < stop
                        });
                    assert!(!done);
                    let want = direct(s, 0xfeed << 70 | 99, 1_000_003, stop + 1);
                    let got: Vec<u64> = seen.iter().map(|&(_, x)| x).collect();
                    assert_eq!(got, want);
                    assert!(seen.iter().zip(0..).all(|(&(i, _), j)| i == j));
                }
            }
        }
    }

    proptest! {
        #[test]
        fn table_path_equals_reference_up_to_max_bits(
            hash: u128,
            range in 1u64..=crate::util::limits::MAX_BITS,
            k in 1u32..=64,
        ) {
            for s in TWO_HASH {
                let want = direct(s, hash, range, k);
                if let Some(got) = table_path(s, hash, range, k) {
                    prop_assert_eq!(got, want.clone());
                }
                prop_assert_eq!(recurrence(s, hash, range, k), want);
            }
        }

        #[test]
        fn incremental_equals_reference(hash: u128, range in 1u64..=u64::MAX, k in 1u32..=64) {
            for s in TWO_HASH {
                prop_assert_eq!(incremental(s, hash, range, k), direct(s, hash, range, k));
            }
        }

        #[test]
        fn incremental_equals_reference_small_ranges(hash: u128, range in 1u64..200, k in 1u32..=64) {
            for s in TWO_HASH {
                let got = incremental(s, hash, range, k);
                prop_assert!(got.iter().all(|&x| x < range));
                prop_assert_eq!(got, direct(s, hash, range, k));
            }
        }

        #[test]
        fn stride_nonzero_and_odd_for_powers_of_two(hash: u128, log in 1u32..63) {
            let range = 1u64 << log;
            let (a, b) = start_and_stride(hash, range);
            prop_assert!(a < range && b < range && b % 2 == 1);
        }
    }

    #[test]
    fn early_exit_stops() {
        let mut calls = 0;
        let done = for_each_index(Scheme::DoubleHashing, 12345, 1000, 8, |i, _| {
            calls += 1;
            i < 2
        });
        assert!(!done);
        assert_eq!(calls, 3);
    }

    #[test]
    fn range_one_maps_everything_to_zero() {
        for s in Scheme::ALL {
            assert_eq!(reference_indices(s, b"x", 1, 1, 5), vec![0; 5]);
        }
    }

    #[test]
    fn names_round_trip() {
        for s in Scheme::ALL {
            assert_eq!(s.name().parse::<Scheme>(), Ok(s));
            assert_eq!(s.to_string(), s.name());
        }
        assert_eq!(Ok(Scheme::default()), "enhanced".parse());
        assert_eq!(Ok(Scheme::Independent), "standard".parse());
        let e = "enhanced_cube".parse::<Scheme>().unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown scheme \"enhanced_cube\": expected one of 'independent', 'double', \
             'enhanced-square', 'enhanced-cube'"
        );
        assert_eq!((e.what(), e.name()), ("scheme", "enhanced_cube"));
        assert_eq!(format!("[{:>8}]", Scheme::DoubleHashing), "[  double]");
    }

    #[test]
    fn high_bits_used_beyond_2_pow_32() {
        // m = 2^36 + 12345 bits, nothing allocated: indices must spread over
        // the whole range, including above 2^32 (no 32-bit saturation).
        let range = (1u64 << 36) + 12345;
        let mut max = 0;
        let mut above = 0usize;
        let mut buckets = [0usize; 16];
        for key in 0u64..20_000 {
            for s in Scheme::ALL {
                for x in reference_indices(s, &key.to_le_bytes(), 7, range, 7) {
                    assert!(x < range);
                    max = max.max(x);
                    above += usize::from(x >= 1 << 32);
                    buckets[(x / range.div_ceil(16)) as usize] += 1;
                }
            }
        }
        assert!(max > range - range / 1000, "max index {max} too small");
        assert!(above > 0);
        // Each sixteenth of the range gets its share (560k indices, 35k per bucket).
        for (i, &b) in buckets.iter().enumerate() {
            assert!((33_000..37_000).contains(&b), "bucket {i}: {b}");
        }
    }
}
