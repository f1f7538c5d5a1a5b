//! Count-Min sketches: the paper's two-hash sketch (Sec. 9) beside the
//! classic d-hash sketch. The guarantee, the two constructions and the
//! sizing rules are documented on [`CountMinSketch`].

#![forbid(unsafe_code)]

mod builder;
pub(crate) mod format;
#[cfg(feature = "rayon")]
mod par;

pub use builder::{CountMinBuilder, CountMinDimensions, two_hash_bound};

use crate::Error;
use crate::hash::{Key, Secrets, hash_into_by, hash128, independent_hash, independent_seed, split};
use crate::scheme::reduce;
use crate::simd::kernel::Kernel;
use crate::util::bits::AlignedWords;
use crate::util::limits::MAX_BITS;

/// The most counters a sketch may have (public path:
/// [`CountMinSketch::MAX_COUNTERS`]).
pub(crate) const MAX_COUNTERS: u64 = MAX_BITS / 64;

/// The most tables a sketch may have (public path:
/// [`CountMinSketch::MAX_ROWS`]).
pub(crate) const MAX_ROWS: u32 = 1024;

/// How the tables of a [`CountMinSketch`] are indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CountMinScheme {
    /// The classic sketch: table `j` uses its own XXH3-64 (seeded per table),
    /// so a key is hashed `d` times. The baseline of the paper's Sec. 9.1.
    Independent,
    /// The paper's Sec. 9.2: `g_j = h1 + j*h2 mod w`, `w` prime, from one
    /// XXH3-128 per key (per copy).
    #[default]
    DoubleHashing,
}

crate::error::named_enum!(CountMinScheme, "scheme");

impl CountMinScheme {
    /// Every scheme, in the order of their format ids.
    pub const ALL: [CountMinScheme; 2] =
        [CountMinScheme::Independent, CountMinScheme::DoubleHashing];

    /// A short stable name (used in messages).
    pub fn name(self) -> &'static str {
        match self {
            CountMinScheme::Independent => "independent",
            CountMinScheme::DoubleHashing => "double",
        }
    }
}

/// A Count-Min sketch: frequency estimates for a stream of `(key, count)`
/// updates that never underestimate.
///
/// Built with [`CountMinSketch::with_error`] or [`CountMinSketch::builder`];
/// the scheme and dimensions are fixed for the sketch's life.
///
/// ```
/// use lesshash::CountMinSketch;
///
/// let mut sketch = CountMinSketch::with_error(0.01, 0.01)?;
/// for word in "the cat and the hat and the bat".split(' ') {
///     sketch.add(word, 1);
/// }
/// assert!(sketch.estimate("the") >= 3);
/// let mut counts = [0u64; 2];
/// sketch.estimate_batch(&["and", "dog"], &mut counts)?;
/// assert!(counts[0] >= 2);
/// # Ok::<(), lesshash::Error>(())
/// ```
///
/// A Count-Min sketch (Cormode and Muthukrishnan) summarises a stream of
/// updates `(item, count)` with positive counts in `d` tables of `w` counters.
/// An update adds its count to one counter per table; a point query returns
/// the minimum of the item's counters. With `a_i` the true total of item `i`
/// and `||a||` the total of all counts (the L1 norm, [`CountMinSketch::total`]),
///
/// ```text
/// estimate(i) >= a_i   always, and   Pr[estimate(i) > a_i + epsilon*||a||] <= delta.
/// ```
///
/// # The two constructions
///
/// [`CountMinScheme::Independent`] is the classic sketch (Sec. 9.1): width
/// `w = ceil(e/epsilon)`, depth `d = ceil(ln 1/delta)`, and table `j` indexed
/// by its own hash function. lesshash uses XXH3-64 with `d` different seeds
/// (the same family as the Bloom filter's `Scheme::Independent`), so each
/// update or query hashes the key `d` times.
///
/// [`CountMinScheme::DoubleHashing`] is Kirsch and Mitzenmacher's
/// modification (Sec. 9.2): `w` is **prime**, and table `j = 0 .. d-1` is
/// indexed by
///
/// ```text
/// g_j(x) = h1(x) + j * h2(x)   (mod w)
/// ```
///
/// with `h1`, `h2` uniform on `[0, w)`. One XXH3-128 per key gives both.
///
/// ## Theorem 9.1
///
/// For the two-hash sketch with prime `w` and `d` tables,
///
/// ```text
/// estimate(i) >= a_i   and   Pr[estimate(i) > a_i + epsilon*||a||] <= 2/(epsilon*w^2) + (2/(epsilon*w))^d.
/// ```
///
/// The proof splits the error into `A_i`, the count of items whose `(h1, h2)`
/// pair equals that of `i` (they share all `d` counters; `E[A_i] <= ||a||/w^2`),
/// and `B_{j,i}`, the rest of table `j`'s collisions (`E[B_{j,i}] <= ||a||/w`).
/// Because `w` is prime, `g_j(z) = g_j(i)` for two different `j` forces
/// `(h1, h2)(z) = (h1, h2)(i)`: any other item collides with `i` in **at most
/// one** table, the `B_{j,i}` are negatively dependent, and Markov's
/// inequality per table multiplies over the tables. The argument needs the
/// `d` values of `j` to be distinct modulo `w`, so `d <= w` (the builder
/// enforces it).
///
/// The theorem's "in particular" clause reads, in the source text, "for
/// `w >= 2e/epsilon` and `delta >= ln 1/epsilon(1 - 1/2e^2)`"; the last line
/// of the proof shows what is meant: `d >= ln(1 / (epsilon * (1 - 1/(2e^2))))`
/// (the `delta` is a typo for `d`). Then `2/(epsilon*w^2) <= epsilon/(2e^2)` and
/// `(2/(epsilon*w))^d <= e^-d <= epsilon*(1 - 1/(2e^2))`, so one sketch fails
/// with probability at most `epsilon`. For a smaller `delta` the paper builds
/// independent **copies** and answers with the minimum over all of them: `c`
/// copies that each fail with probability at most `epsilon` fail together with
/// probability at most `epsilon^c`, so `c = ceil(ln(1/delta) / ln(1/epsilon))`
/// copies suffice. (The paper's sentence says "build `2*ceil(..)` copies"; the
/// factor 2 counts hash functions, two per copy, which is the claim of the
/// section's first paragraph.)
///
/// ## How lesshash sizes a two-hash sketch from `(epsilon, delta)`
///
/// 1. `w` = the smallest prime `>= 2e/epsilon` (a
///    deterministic Miller-Rabin test: bounded time for every input).
/// 2. **One sketch** when possible: the smallest `d <= min(w, MAX_ROWS)` with
///    `2/(epsilon*w^2) + (2/(epsilon*w))^d <= delta`. This exists only if
///    `2/(epsilon*w^2) < delta` (about `delta > 0.068*epsilon`).
/// 3. **Copies** otherwise: each copy has the smallest `d` whose bound is
///    `<= epsilon` (at most the paper's `ceil(ln(1/(epsilon(1 - 1/2e^2))))`),
///    and `c` is the smallest count with `bound^c <= delta` (at most the paper's
///    `ceil(ln(1/delta) / ln(1/epsilon))`).
/// 4. When both are possible the one with fewer counters is built (ties: one
///    sketch). Both are covered by the theorem.
///
/// Copy `c` hashes the key with its own seed, so a query costs one XXH3-128
/// per copy; [`CountMinSketch::hashes_per_key`] reports it. For the common
/// settings (`delta >= 0.08*epsilon`) that is one hash. Compared at equal
/// `(epsilon, delta)` the two-hash sketch is about twice as wide as the
/// classic one (`2e/epsilon` against `e/epsilon`): the "small space increase"
/// the paper trades for hashing once. [`CountMinSketch::failure_bound`] gives
/// the bound of any built sketch for any `epsilon`.
///
/// # Details that the theorem leaves to the implementation
///
/// * **From 64 bits to `[0, w)`.** `h1` and `h2` are the low and high halves of
///   the XXH3-128, each reduced with the multiply-high `(h * w) >> 64`. Like
///   `h % w`, this maps `floor(2^64/w)` or `ceil(2^64/w)` inputs to each
///   residue, a relative bias of at most `w/2^64 <= 2^-24` for the largest
///   width accepted ([`CountMinSketch::MAX_COUNTERS`]): negligible next to the theorem's
///   Markov bounds. It avoids a 64-bit division and is the reduction the
///   crate's Bloom filters use. The classic sketch reduces each XXH3-64 the
///   same way.
/// * **`h2 = 0` is allowed.** The theorem takes `h2` uniform on all of
///   `[0, w)`, and its proof already charges items that agree with `i` on
///   `(h1, h2)` to `A_i`. A zero stride puts the item in column `h1` of every
///   table, but the tables are separate arrays, so nothing collapses (unlike a
///   Bloom filter, whose probes share one array and which therefore needs
///   `h2 != 0`). Forcing `h2 != 0` would make it non-uniform and change the
///   `1/w^2` of the proof, so lesshash keeps the paper's distribution.
/// * **Pairwise independence.** The theorem assumes `h1`, `h2` drawn from a
///   pairwise-independent family. Like the rest of the crate, lesshash treats
///   seeded XXH3 as a random function; the tests check the resulting bounds
///   on real streams.
/// * **Counters are `u64` and saturate.** 32-bit counters would halve the
///   memory but overflow after 4.3 billion unit updates, which a busy stream
///   reaches in minutes; a saturated `u64` counter needs `2^64` counts. Adds
///   saturate rather than wrap, so an estimate is always at least
///   `min(a_i, u64::MAX)`: the one-sided error survives overflow.
/// * **Conservative update** ([`CountMinBuilder::conservative`]): an update
///   raises each of the item's counters only up to `estimate + count`
///   (counters already higher stay). Every counter of an item still bounds
///   its true count from above, so estimates never underestimate and are
///   never larger than without it, often much smaller on skewed streams. The
///   counters no longer equal sums of counts, so Theorem 9.1's proof (which
///   counts collisions) does not apply as written, and merging two
///   conservative sketches gives an upper bound that is not the sketch of the
///   concatenated stream.
/// * **Merging** adds counters, so a merged sketch equals the sketch of the
///   concatenated streams (without conservative update). Both sketches must
///   have the same scheme, width, depth, copies, seed and update rule.
///
/// ```
/// use lesshash::{CountMinScheme, CountMinSketch};
///
/// // 0.1% of the stream's total as additive error, except with probability 1%.
/// let mut sketch = CountMinSketch::with_error(0.001, 0.01)?;
/// assert_eq!(sketch.width(), 5437); // the smallest prime >= 2e/0.001
/// assert_eq!(sketch.hashes_per_key(), 1);
/// sketch.add("GET /", 3);
/// sketch.add("GET /", 2);
/// sketch.add(&42u64, 1);
/// assert!(sketch.estimate("GET /") >= 5);
/// assert_eq!(sketch.total(), 6);
///
/// // The classic sketch: half as wide, one hash per table.
/// let classic = CountMinSketch::builder()
///     .epsilon(0.001)
///     .delta(0.01)
///     .scheme(CountMinScheme::Independent)
///     .build()?;
/// assert_eq!((classic.width(), classic.depth()), (2719, 5));
/// assert_eq!(classic.hashes_per_key(), 5);
/// # Ok::<(), lesshash::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct CountMinSketch {
    scheme: CountMinScheme,
    seed: u64,
    width: u64,
    depth: u32,
    copies: u32,
    conservative: bool,
    /// `||a||`, saturating.
    total: u64,
    /// Counters in use: `copies * depth * width`, row-major.
    len: usize,
    /// Counter storage (rounded up to whole cache lines; the tail stays 0).
    counters: AlignedWords,
}

/// Shows the parameters only: counters are never dumped.
impl std::fmt::Debug for CountMinSketch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CountMinSketch")
            .field("scheme", &self.scheme)
            .field("width", &self.width)
            .field("depth", &self.depth)
            .field("copies", &self.copies)
            .field("seed", &self.seed)
            .field("conservative", &self.conservative)
            .field("total", &self.total)
            .finish_non_exhaustive()
    }
}

/// The seed of copy `c`: the sketch's seed for copy 0 (so a one-copy sketch
/// hashes exactly like [`hash_key`](crate::hash_key)), spread seeds after.
#[inline]
fn copy_seed(seed: u64, copy: u32) -> u64 {
    if copy == 0 {
        seed
    } else {
        independent_seed(seed, copy)
    }
}

/// `(h1, h2)` on `[0, width)` from a 128-bit hash: multiply-high reduction
/// of the low and high halves. `h2 = 0` is kept (see the module docs).
#[inline(always)]
pub fn two_hash_start(hash: u128, width: u64) -> (u64, u64) {
    let (lo, hi) = split(hash);
    (reduce(lo, width), reduce(hi, width))
}

/// The oracle: the column of every table (copy-major, then table) that a
/// key's bytes use, by the direct formulas: `reduce(XXH3-64_j(x), w)` for the
/// classic sketch, `(h1 + j*h2) mod w` in 128-bit arithmetic for the
/// two-hash sketch. Allocates; for tests and tools.
///
/// # Panics
/// If `width` is 0.
pub fn reference_columns(
    scheme: CountMinScheme,
    bytes: &[u8],
    seed: u64,
    dims: CountMinDimensions,
) -> Vec<u64> {
    let w = dims.width;
    match scheme {
        CountMinScheme::Independent => (0..dims.depth * dims.copies)
            .map(|j| reduce(independent_hash(bytes, seed, j), w))
            .collect(),
        CountMinScheme::DoubleHashing => (0..dims.copies)
            .flat_map(|c| {
                let (h1, h2) = two_hash_start(hash128(bytes, copy_seed(seed, c)), w);
                (0..dims.depth).map(move |j| {
                    let g = u128::from(h1) + u128::from(j) * u128::from(h2);
                    (g % u128::from(w)) as u64
                })
            })
            .collect(),
    }
}

/// What maps a key to its counters (copied out of the sketch so that the
/// counters can be borrowed mutably while indexing).
#[derive(Clone, Copy)]
struct Indexer {
    scheme: CountMinScheme,
    seed: u64,
    width: u64,
    depth: u32,
    copies: u32,
}

impl Indexer {
    /// Calls `f` with the flat index of the key's counter in every table.
    ///
    /// The fast path: the two-hash strides are added modulo `w` with one
    /// compare (both terms are below `w <= 2^40`, so no overflow). Equal to
    /// [`reference_columns`] (tested).
    #[inline(always)]
    fn for_each(self, bytes: &[u8], mut f: impl FnMut(usize)) {
        let w = self.width;
        match self.scheme {
            CountMinScheme::Independent => {
                let mut base = 0u64;
                for j in 0..self.depth {
                    f((base + reduce(independent_hash(bytes, self.seed, j), w)) as usize);
                    base += w;
                }
            }
            CountMinScheme::DoubleHashing => {
                self.for_each_two_hash(|c| hash128(bytes, copy_seed(self.seed, c)), f)
            }
        }
    }

    /// [`for_each`](Self::for_each) of a two-hash key whose hash under copy
    /// c's seed is `hash(c)` (computed by the caller: one at a time, or a
    /// batch at a time by the batched XXH3-128).
    #[inline(always)]
    fn for_each_two_hash(self, hash: impl Fn(u32) -> u128, mut f: impl FnMut(usize)) {
        let w = self.width;
        let mut base = 0u64;
        for c in 0..self.copies {
            let (h1, h2) = two_hash_start(hash(c), w);
            let mut g = h1;
            for _ in 0..self.depth {
                f((base + g) as usize);
                base += w;
                g += h2;
                if g >= w {
                    g -= w;
                }
            }
        }
    }

    /// Calls `visit(i, hashes)` for every item i of a two-hash sketch's
    /// batch, `hashes[c]` the hash of its key (`key_of`) under copy c's
    /// seed: the keys hashed [`CHUNK`] at a time per copy by the batched
    /// XXH3-128 (`hash::short`; the same values as one at a time).
    fn for_each_hashed<T, K: Key>(
        self,
        items: &[T],
        key_of: impl Fn(&T) -> &K,
        mut visit: impl FnMut(usize, &[u128]),
    ) {
        let copies = self.copies as usize;
        let secrets: Vec<Secrets> = (0..self.copies)
            .map(|c| Secrets::new(crate::HashFamily::Xxh3, copy_seed(self.seed, c)))
            .collect();
        // Four keys per AVX-512 register where the process's kernel is
        // AVX-512 (a sketch has no kernel of its own).
        let vector = Kernel::auto() == Kernel::Avx512;
        let mut column = [0u128; CHUNK];
        // Key-major: key j's hashes are `hashes[j * copies..][..copies]`.
        let mut hashes = vec![0u128; copies * CHUNK];
        for (n, chunk) in items.chunks(CHUNK).enumerate() {
            let len = chunk.len();
            for (c, s) in secrets.iter().enumerate() {
                hash_into_by(chunk, &key_of, s, vector, &mut column[..len]);
                for (j, &h) in column[..len].iter().enumerate() {
                    hashes[j * copies + c] = h;
                }
            }
            for j in 0..len {
                visit(n * CHUNK + j, &hashes[j * copies..(j + 1) * copies]);
            }
        }
    }
}

/// A key as the sketch's counter loops see it: something that visits the
/// index of its counter in every table.
trait Counters {
    fn each(&self, ix: Indexer, f: impl FnMut(usize));
}

/// A key's bytes (hashed here, one at a time).
struct Bytes<'a>(&'a [u8]);

impl Counters for Bytes<'_> {
    #[inline(always)]
    fn each(&self, ix: Indexer, f: impl FnMut(usize)) {
        ix.for_each(self.0, f);
    }
}

/// A two-hash key's hashes, one per copy (hashed by a batch).
struct Hashes<'a>(&'a [u128]);

impl Counters for Hashes<'_> {
    #[inline(always)]
    fn each(&self, ix: Indexer, f: impl FnMut(usize)) {
        ix.for_each_two_hash(|c| self.0[c as usize], f);
    }
}

/// Keys hashed per step by the batch calls.
const CHUNK: usize = 32;

impl CountMinSketch {
    /// The most counters a sketch may have: 2^40 (8 TiB of `u64`), the same
    /// memory bound as [`BloomFilter::MAX_BITS`](crate::BloomFilter::MAX_BITS).
    pub const MAX_COUNTERS: u64 = MAX_COUNTERS;

    /// The most tables a sketch may have (all copies together). The classic
    /// sketch needs `ceil(ln 1/delta)` tables, 745 for the smallest positive
    /// `f64`.
    pub const MAX_ROWS: u32 = MAX_ROWS;

    /// A [`CountMinBuilder`] with the defaults (two-hash scheme, default
    /// seed, no conservative update).
    pub fn builder() -> CountMinBuilder {
        CountMinBuilder::default()
    }

    /// A two-hash sketch sized by the paper's rules for additive error
    /// `epsilon * total()` with failure probability `delta`.
    pub fn with_error(epsilon: f64, delta: f64) -> Result<Self, Error> {
        Self::builder().epsilon(epsilon).delta(delta).build()
    }

    #[inline(always)]
    fn slots(&self) -> &[u64] {
        &self.counters.words()[..self.len]
    }

    #[inline(always)]
    fn slots_mut(&mut self) -> &mut [u64] {
        let len = self.len;
        &mut self.counters.words_mut()[..len]
    }

    /// Adds `count` to the key's counter in every table (`key`: its bytes
    /// or its per-copy hashes), conservatively if the sketch is.
    #[inline(always)]
    fn add_counters(&mut self, key: impl Counters, count: u64) {
        let ix = self.indexer();
        if self.conservative {
            let target = self.estimate_counters(&key).saturating_add(count);
            let words = self.slots_mut();
            key.each(ix, |i| words[i] = words[i].max(target));
        } else {
            let words = self.slots_mut();
            key.each(ix, |i| words[i] = words[i].saturating_add(count));
        }
        self.total = self.total.saturating_add(count);
    }

    /// The minimum of the key's counters.
    #[inline(always)]
    fn estimate_counters(&self, key: &impl Counters) -> u64 {
        let words = self.slots();
        let mut min = u64::MAX;
        key.each(self.indexer(), |i| min = min.min(words[i]));
        min
    }

    /// Adds `count` occurrences of `key` (saturating at `u64::MAX`).
    #[inline]
    pub fn add<K: Key + ?Sized>(&mut self, key: &K, count: u64) {
        key.with_bytes(|bytes| self.add_counters(Bytes(bytes), count));
    }

    /// The estimated total count of `key`: never below the true count.
    #[inline]
    pub fn estimate<K: Key + ?Sized>(&self, key: &K) -> u64 {
        key.with_bytes(|bytes| self.estimate_counters(&Bytes(bytes)))
    }

    /// Adds `count` occurrences of every key of `keys` (in order; the
    /// two-hash scheme hashes them a chunk at a time).
    pub fn add_batch<K: Key>(&mut self, keys: &[K], count: u64) {
        let ix = self.indexer();
        if ix.scheme == CountMinScheme::Independent {
            for key in keys {
                self.add(key, count);
            }
            return;
        }
        ix.for_each_hashed(
            keys,
            |k| k,
            |_, hashes| self.add_counters(Hashes(hashes), count),
        );
    }

    /// Applies a stream of `(key, count)` updates in order.
    pub fn add_updates<K: Key>(&mut self, updates: &[(K, u64)]) {
        let ix = self.indexer();
        if ix.scheme == CountMinScheme::Independent {
            for (key, count) in updates {
                self.add(key, *count);
            }
            return;
        }
        ix.for_each_hashed(
            updates,
            |(k, _)| k,
            |i, hashes| self.add_counters(Hashes(hashes), updates[i].1),
        );
    }

    /// Writes into `out[i]` the estimate of `keys[i]` (the two-hash scheme
    /// hashes them a chunk at a time).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] if `out` and `keys` differ in length.
    pub fn estimate_batch<K: Key>(&self, keys: &[K], out: &mut [u64]) -> Result<(), Error> {
        Error::check_len("out", keys.len(), out.len())?;
        let ix = self.indexer();
        if ix.scheme == CountMinScheme::Independent {
            for (key, slot) in keys.iter().zip(out) {
                *slot = self.estimate(key);
            }
        } else {
            ix.for_each_hashed(
                keys,
                |k| k,
                |i, hashes| out[i] = self.estimate_counters(&Hashes(hashes)),
            );
        }
        Ok(())
    }

    /// Adds `other`'s counts into `self`: afterwards `self` is the sketch of
    /// both streams (for sketches without conservative update, exactly the
    /// sketch of the concatenated stream).
    ///
    /// # Errors
    /// [`Error::Incompatible`] naming the first parameter that differs
    /// (`scheme`, `width`, `depth`, `copies`, `seed`, `conservative`).
    pub fn merge(&mut self, other: &CountMinSketch) -> Result<(), Error> {
        fn check<T: PartialEq + std::fmt::Debug>(
            parameter: &'static str,
            left: T,
            right: T,
        ) -> Result<(), Error> {
            if left == right {
                Ok(())
            } else {
                Err(Error::Incompatible {
                    parameter,
                    left: format!("{left:?}"),
                    right: format!("{right:?}"),
                })
            }
        }
        check("scheme", self.scheme, other.scheme)?;
        check("width", self.width, other.width)?;
        check("depth", self.depth, other.depth)?;
        check("copies", self.copies, other.copies)?;
        check("seed", self.seed, other.seed)?;
        check("conservative", self.conservative, other.conservative)?;
        for (mine, theirs) in self.slots_mut().iter_mut().zip(other.slots()) {
            *mine = mine.saturating_add(*theirs);
        }
        self.total = self.total.saturating_add(other.total);
        Ok(())
    }

    /// The total of all counts added (`||a||`, the L1 norm of the stream),
    /// saturating at `u64::MAX`. The error bound is `epsilon * total()`.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Resets every counter and the total (keeps dimensions and seed).
    pub fn clear(&mut self) {
        self.counters.clear();
        self.total = 0;
    }

    /// The flat counter index of every table for `key` (fast path; for tests
    /// and tools). Allocates.
    pub fn columns<K: Key + ?Sized>(&self, key: &K) -> Vec<u64> {
        let mut out = Vec::with_capacity((self.depth * self.copies) as usize);
        let w = self.width;
        let ix = self.indexer();
        key.with_bytes(|bytes| ix.for_each(bytes, |i| out.push(i as u64 % w)));
        out
    }

    #[inline(always)]
    fn indexer(&self) -> Indexer {
        Indexer {
            scheme: self.scheme,
            seed: self.seed,
            width: self.width,
            depth: self.depth,
            copies: self.copies,
        }
    }

    /// Counters per table.
    pub fn width(&self) -> u64 {
        self.width
    }

    /// Tables per copy.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Independent copies (more than 1 only for the two-hash copies
    /// construction; see the module docs).
    pub fn copies(&self) -> u32 {
        self.copies
    }

    /// The sketch's dimensions.
    pub fn dimensions(&self) -> CountMinDimensions {
        CountMinDimensions {
            width: self.width,
            depth: self.depth,
            copies: self.copies,
        }
    }

    /// The index scheme.
    pub fn scheme(&self) -> CountMinScheme {
        self.scheme
    }

    /// The hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Whether updates are conservative.
    pub fn is_conservative(&self) -> bool {
        self.conservative
    }

    /// Hash computations per update or query: `depth` XXH3-64 for the
    /// classic sketch, one XXH3-128 per copy for the two-hash sketch.
    pub fn hashes_per_key(&self) -> u32 {
        match self.scheme {
            CountMinScheme::Independent => self.depth,
            CountMinScheme::DoubleHashing => self.copies,
        }
    }

    /// Bytes of counter storage (`8 * width * depth * copies`).
    pub fn size_in_bytes(&self) -> usize {
        self.len * 8
    }

    /// The proven bound on `Pr[estimate(i) > a_i + epsilon * total()]` for
    /// this sketch's dimensions (without conservative update):
    /// `(1/(epsilon*w))^d` for the classic sketch (Markov per independent
    /// table), Theorem 9.1's bound to the power `copies` for the two-hash
    /// sketch. NaN for an `epsilon` that is not positive.
    pub fn failure_bound(&self, epsilon: f64) -> f64 {
        if epsilon.is_nan() || epsilon <= 0.0 {
            return f64::NAN;
        }
        match self.scheme {
            CountMinScheme::Independent => (1.0 / (epsilon * self.width as f64))
                .min(1.0)
                .powf(f64::from(self.depth)),
            CountMinScheme::DoubleHashing => {
                two_hash_bound(epsilon, self.width, self.depth).powf(f64::from(self.copies))
            }
        }
    }
}

#[cfg(test)]
mod tests;
