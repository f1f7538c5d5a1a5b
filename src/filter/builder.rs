//! [`Builder`]: validated construction of filters.

#![forbid(unsafe_code)]

use crate::Error;
use crate::filter::BloomFilter;
use crate::geometry::Geometry;
use crate::hash::{DEFAULT_SEED, HashFamily, Key};
use crate::key_kind::KeyKind;
use crate::layout::Layout;
use crate::scheme::Scheme;
use crate::simd::kernel::Kernel;
use crate::tuning::Tuning;
use crate::util::limits::{MAX_BITS, MAX_HASHES, check_fpr};
use crate::util::prefetch::Prefetch;

/// Builds a [`BloomFilter`] from either
///
/// * `expected_items(n)` and `fpr(p)`: the layout's own formula picks the
///   smallest m (and, unless `hashes(k)` fixes it, the k) reaching p; or
/// * `bits(m)` and `hashes(k)`: explicit geometry (`hashes` may be left out
///   when `expected_items` is given: the optimal k for m/n is used).
///
/// Invalid or contradictory parameters give [`Error::InvalidParameter`]
/// naming the parameter; nothing is clamped silently.
///
/// ```
/// use lesshash::{BloomFilter, Layout, Scheme};
///
/// let filter = BloomFilter::builder()
///     .expected_items(1_000_000)
///     .fpr(0.01)
///     .layout(Layout::Classic)
///     .scheme(Scheme::DoubleHashing)
///     .seed(7)
///     .build()?;
/// assert_eq!(filter.num_hashes(), 7);
/// assert!((filter.num_bits() as f64 / 1e6 - 9.59).abs() < 0.05);
///
/// let err = BloomFilter::builder().expected_items(10).fpr(1.5).build().unwrap_err();
/// assert!(err.to_string().contains("`fpr`"));
/// # Ok::<(), lesshash::Error>(())
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct Builder {
    items: Option<u64>,
    fpr: Option<f64>,
    bits: Option<u64>,
    hashes: Option<u32>,
    layout: Layout,
    scheme: Option<Scheme>,
    hash_family: HashFamily,
    seed: u64,
    kernel: Option<Kernel>,
    prefetch: Prefetch,
    prefetch_distance: u32,
    key_kind: KeyKind,
}

impl Default for Builder {
    fn default() -> Self {
        Self {
            items: None,
            fpr: None,
            bits: None,
            hashes: None,
            layout: Layout::default(),
            scheme: None,
            hash_family: HashFamily::default(),
            seed: DEFAULT_SEED,
            kernel: None,
            prefetch: Prefetch::Auto,
            prefetch_distance: Prefetch::DEFAULT_DISTANCE,
            key_kind: KeyKind::Unrecorded,
        }
    }
}

/// Construction, where the builder lives.
impl BloomFilter {
    /// A [`Builder`] with the defaults (the [`Blocked`](Layout::Blocked)
    /// layout, its [`default_scheme`](Layout::default_scheme), the default
    /// seed).
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// A filter for `expected_items` keys at false-positive rate `fpr`,
    /// with the defaults: the [`Blocked`](Layout::Blocked) layout (one
    /// cache line per key), its default scheme, the default seed.
    ///
    /// # Errors
    /// As [`Builder::build`].
    pub fn with_fpr(expected_items: u64, fpr: f64) -> Result<Self, Error> {
        Builder::default()
            .expected_items(expected_items)
            .fpr(fpr)
            .build()
    }
}

impl Builder {
    /// The number of distinct keys the filter is sized for (0 builds a valid
    /// minimal filter).
    pub fn expected_items(mut self, n: u64) -> Self {
        self.items = Some(n);
        self
    }

    /// The target false-positive rate, strictly between 0 and 1.
    pub fn fpr(mut self, p: f64) -> Self {
        self.fpr = Some(p);
        self
    }

    /// The number of bits m (explicit geometry). For the partitioned layout
    /// m is rounded down to a multiple of k, for the blocked layouts up to a
    /// multiple of 512; with a two-hash scheme (every scheme but
    /// [`Independent`](Scheme::Independent)) the classic layout's m and the
    /// partitioned layout's sub-arrays grow to the next prime, so that every
    /// stride is coprime to the range as the rate's analysis assumes (a few
    /// bits more: 1000 -> 1009). `num_bits()` reports the bits in use.
    pub fn bits(mut self, m: u64) -> Self {
        self.bits = Some(m);
        self
    }

    /// The number of probes k per key, 1 to [`BloomFilter::MAX_HASHES`].
    pub fn hashes(mut self, k: u32) -> Self {
        self.hashes = Some(k);
        self
    }

    /// The layout (default [`Layout::Blocked`], [`Layout::default`]).
    pub fn layout(mut self, layout: Layout) -> Self {
        self.layout = layout;
        self
    }

    /// The index scheme (default: the layout's
    /// [`default_scheme`](Layout::default_scheme)).
    pub fn scheme(mut self, scheme: Scheme) -> Self {
        self.scheme = Some(scheme);
        self
    }

    /// The hash seed (default [`DEFAULT_SEED`]). Filters to be combined must
    /// share it.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// The 128-bit hash family (default [`HashFamily::Xxh3`]), recorded in
    /// the filter's file. Filters to be combined must share it; pre-hashed
    /// keys must be hashed in it ([`HashFamily::hash_key`]).
    pub fn hash_family(mut self, family: HashFamily) -> Self {
        self.hash_family = family;
        self
    }

    /// The kind of keys the filter will hold ([`KeyKind`]; default
    /// `Unrecorded`, which every query accepts), recorded in its file so
    /// that a query with keys of another kind fails instead of answering
    /// "absent" for every key. Typed interfaces (Arrow arrays, Python, the
    /// command line) record it themselves.
    pub fn key_kind(mut self, kind: KeyKind) -> Self {
        self.key_kind = kind;
        self
    }

    /// Validates the parameters, sizes and allocates the filter.
    pub fn build(self) -> Result<BloomFilter, Error> {
        let (m, k) = self.geometry()?;
        self.check_family()?;
        let kernel = match self.kernel {
            Some(kernel) => {
                kernel.check_available()?;
                kernel
            }
            None => Kernel::auto(),
        };
        let tuning = Tuning {
            kernel,
            prefetch: self.prefetch,
            prefetch_distance: Prefetch::check_distance(self.prefetch_distance)?,
        };
        let mut filter = BloomFilter::from_geometry(
            Geometry::new(
                self.layout,
                self.chosen_scheme(),
                self.hash_family,
                self.seed,
                m,
                k,
            )
            .with_tuning(tuning),
        )?;
        filter.set_key_kind(self.key_kind);
        Ok(filter)
    }

    /// The hash family applies to the two-hash schemes: `Independent`
    /// hashes by seeded XXH3-64 whatever the family, so a family other
    /// than XXH3 there is refused rather than recorded without effect.
    fn check_family(&self) -> Result<(), Error> {
        if self.hash_family != HashFamily::Xxh3 && !self.chosen_scheme().is_two_hash() {
            return Err(Error::invalid(
                "hash_family",
                format!(
                    "{} applies to the two-hash schemes; the independent scheme hashes with seeded XXH3-64 (use xxh3-128)",
                    self.hash_family.name()
                ),
            ));
        }
        Ok(())
    }

    /// The scheme set, else the layout's default.
    fn chosen_scheme(&self) -> Scheme {
        self.scheme.unwrap_or(self.layout.default_scheme())
    }

    /// The index routine of the filter's batch paths and the vector line test
    /// its single-key calls use (default [`Kernel::auto`]). Never changes
    /// an answer, only speed; for benchmarks and for pinning a kernel.
    /// `build` fails with [`Error::InvalidParameter`] naming `kernel` if
    /// this CPU lacks it.
    pub fn kernel(mut self, kernel: Kernel) -> Self {
        self.kernel = Some(kernel);
        self
    }

    /// Whether the filter's batch paths prefetch (default
    /// [`Prefetch::Auto`]: above [`Prefetch::AUTO_MIN_BYTES`](crate::Prefetch::AUTO_MIN_BYTES)).
    pub fn prefetch(mut self, prefetch: Prefetch) -> Self {
        self.prefetch = prefetch;
        self
    }

    /// How far ahead the batch paths prefetch, in chunks of
    /// [`CHUNK`](crate::filter::batch::CHUNK) keys (default
    /// [`Prefetch::DEFAULT_DISTANCE`](crate::Prefetch::DEFAULT_DISTANCE),
    /// chosen by measurement). Never changes an answer; for tuning to
    /// another memory system. `build` fails with
    /// [`Error::InvalidParameter`] naming `prefetch_distance` outside 1 to
    /// [`Prefetch::MAX_DISTANCE`](crate::Prefetch::MAX_DISTANCE).
    pub fn prefetch_distance(mut self, chunks: u32) -> Self {
        self.prefetch_distance = chunks;
        self
    }

    /// The bit positions `key` would get in the filter these parameters
    /// build, in probe order, without allocating the filter (for tools, and
    /// for checking addressing at sizes too large to allocate in a test):
    /// the same positions as [`BloomFilter::positions`] on the built filter.
    ///
    /// # Errors
    /// As [`geometry`](Self::geometry).
    pub fn positions<K: Key + ?Sized>(&self, key: &K) -> Result<Vec<u64>, Error> {
        let (m, k) = self.geometry()?;
        self.check_family()?;
        let geometry = Geometry::new(
            self.layout,
            self.chosen_scheme(),
            self.hash_family,
            self.seed,
            m,
            k,
        );
        Ok(key.with_bytes(|bytes| geometry.reference_positions(bytes)))
    }

    /// The `(bits, hashes)` the parameters call for, without allocating.
    pub fn geometry(&self) -> Result<(u64, u32), Error> {
        if let Some(k) = self.hashes
            && (k == 0 || k > MAX_HASHES)
        {
            return Err(Error::invalid(
                "hashes",
                format!("must be between 1 and {MAX_HASHES}, got {k}"),
            ));
        }
        let (m, k) = match (self.bits, self.fpr) {
            (Some(_), Some(_)) => {
                return Err(Error::invalid(
                    "fpr",
                    "conflicts with `bits`: give either (expected_items, fpr) or (bits, hashes)",
                ));
            }
            (Some(m), None) => {
                if m == 0 || m > MAX_BITS {
                    return Err(Error::invalid(
                        "bits",
                        format!("must be between 1 and {MAX_BITS}, got {m}"),
                    ));
                }
                let k = match (self.hashes, self.items) {
                    (Some(k), _) => k,
                    (None, Some(n)) => self.layout.optimal_hashes(m, n),
                    (None, None) => {
                        return Err(Error::invalid(
                            "hashes",
                            "required with `bits` unless `expected_items` is given",
                        ));
                    }
                };
                (m, k)
            }
            (None, Some(p)) => {
                let p = check_fpr(p)?;
                let n = self
                    .items
                    .ok_or_else(|| Error::invalid("expected_items", "required with `fpr`"))?;
                self.layout
                    .size_for(self.chosen_scheme(), n, p, self.hashes)?
            }
            (None, None) => {
                return Err(Error::invalid(
                    "fpr",
                    "missing: give (expected_items, fpr) or (bits, hashes)",
                ));
            }
        };
        Ok((self.layout.built_bits(self.chosen_scheme(), m, k)?, k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(b: Builder) -> String {
        b.build().unwrap_err().to_string()
    }

    #[test]
    fn each_invalid_parameter_names_itself() {
        let b = || BloomFilter::builder();
        for (builder, name) in [
            (b().expected_items(10).fpr(0.0), "`fpr`"),
            (b().expected_items(10).fpr(1.0), "`fpr`"),
            (b().expected_items(10).fpr(f64::NAN), "`fpr`"),
            (b().expected_items(10).fpr(-1.0), "`fpr`"),
            (b().fpr(0.01), "`expected_items`"),
            (b(), "`fpr`"),
            (b().bits(0).hashes(3), "`bits`"),
            (b().bits(MAX_BITS + 1).hashes(3), "`bits`"),
            (b().bits(100), "`hashes`"),
            (b().bits(100).hashes(0), "`hashes`"),
            (b().bits(100).hashes(MAX_HASHES + 1), "`hashes`"),
            (b().bits(100).hashes(3).fpr(0.1), "`fpr`"),
            (b().layout(Layout::Partitioned).bits(3).hashes(4), "`bits`"),
            (b().expected_items(u64::MAX).fpr(1e-12), "`fpr`"),
        ] {
            let msg = err(builder);
            assert!(msg.contains(name), "expected {name} in: {msg}");
        }
    }

    #[test]
    fn the_defaults_are_blocked_and_each_layouts_scheme() {
        let f = BloomFilter::with_fpr(1_000_000, 0.01).unwrap();
        assert_eq!(
            (f.layout(), f.scheme()),
            (Layout::Blocked, Scheme::DoubleHashing)
        );
        assert_eq!(f.num_hashes(), 6);
        let c = f.num_bits() as f64 / 1e6;
        assert!((c - 9.92).abs() < 0.05, "{c}");
        for layout in Layout::ALL {
            let f = BloomFilter::builder().layout(layout).bits(4096).hashes(4);
            assert_eq!(f.build().unwrap().scheme(), layout.default_scheme());
        }
        assert_eq!(Layout::Classic.default_scheme(), Scheme::default());
        let chosen = BloomFilter::builder().scheme(Scheme::Independent).bits(512);
        assert_eq!(
            chosen.hashes(3).build().unwrap().scheme(),
            Scheme::Independent
        );
    }

    #[test]
    fn classic_one_percent_is_9_59_bits_per_key() {
        let (m, k) = BloomFilter::builder()
            .layout(Layout::Classic)
            .expected_items(1_000_000)
            .fpr(0.01)
            .geometry()
            .unwrap();
        assert_eq!(k, 7);
        let c = m as f64 / 1e6;
        assert!((c - 9.59).abs() < 0.05, "{c}");
    }

    #[test]
    fn sizing_meets_the_target_by_the_layouts_own_formula() {
        for layout in Layout::ALL {
            for n in [0u64, 1, 2, 10, 1000, 1_000_000, 1_000_000_000] {
                for p in [0.5, 0.1, 0.01, 1e-3, 1e-6, 1e-12] {
                    let (m, k) = BloomFilter::builder()
                        .layout(layout)
                        .expected_items(n)
                        .fpr(p)
                        .geometry()
                        .unwrap();
                    let fpr = layout.fpr(Scheme::default(), m, n, k);
                    assert!(fpr <= p, "{layout:?} n={n} p={p}: m={m} k={k} gives {fpr}");
                    if n > 100 && p >= 1e-6 {
                        // Not oversized either: within 2% of the bits needed.
                        let smaller = layout.fpr(Scheme::default(), m * 98 / 100, n, k);
                        assert!(smaller > p, "{layout:?} n={n} p={p}: oversized");
                    }
                }
            }
        }
    }

    #[test]
    fn n_zero_builds_a_minimal_filter() {
        for layout in Layout::ALL {
            let f = BloomFilter::builder()
                .layout(layout)
                .expected_items(0)
                .fpr(0.01)
                .build()
                .unwrap();
            // One block; the flat layouts' two-hash range grown to the next
            // prime (521).
            let bits = if layout.is_blocked() { 512 } else { 521 };
            assert_eq!((f.num_bits(), f.num_hashes()), (bits, 1));
            assert!(!f.contains("anything"));
        }
    }

    #[test]
    fn extreme_rates_are_sized_or_refused_by_name() {
        // Subnormal p: 1/p is infinite; must be an error naming `fpr`, not an
        // overflow in the choice of k.
        for p in [5e-324, 1e-300] {
            let e = err(Builder::default().expected_items(5).fpr(p));
            assert!(e.contains("`fpr`"), "{e}");
        }
        // p = 1e-40 asks for k ~ 133 > MAX_HASHES: the k window is clamped,
        // not empty, and with independent hashes (no pair-collision floor)
        // a filter exists.
        let (m, k) = Builder::default()
            .layout(Layout::Classic)
            .scheme(Scheme::Independent)
            .expected_items(5)
            .fpr(1e-40)
            .geometry()
            .unwrap();
        assert!(k <= MAX_HASHES && m <= MAX_BITS);
        let rate = Layout::Classic.fpr(Scheme::Independent, m, 5, k);
        assert!(rate <= 1e-40, "{rate}");
    }

    #[test]
    fn fixed_k_is_kept() {
        let (_, k) = BloomFilter::builder()
            .expected_items(1000)
            .fpr(0.01)
            .hashes(3)
            .geometry()
            .unwrap();
        assert_eq!(k, 3);
        let (m, k) = BloomFilter::builder()
            .layout(Layout::Classic)
            .expected_items(1000)
            .bits(16_000)
            .geometry()
            .unwrap();
        // The two-hash default's range grown to the next prime; independent
        // hashes keep m as asked.
        assert_eq!((m, k), (16_001, 11));
        let (m, k) = BloomFilter::builder()
            .layout(Layout::Classic)
            .scheme(Scheme::Independent)
            .expected_items(1000)
            .bits(16_000)
            .geometry()
            .unwrap();
        assert_eq!((m, k), (16_000, 11));
    }
}
