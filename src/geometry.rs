//! [`Geometry`]: a filter's parameters and the layout's probe built from
//! them, the one path from a key to its bits.
//!
//! Everything that answers or records membership (the owned
//! [`BloomFilter`](crate::BloomFilter), a [`FilterView`](crate::FilterView)
//! over serialized bytes, an [`AtomicBloomFilter`](crate::AtomicBloomFilter),
//! the batch and parallel pipelines) goes through the layout's [`Addressing`]
//! over some storage of words ([`Words`], [`WordsMut`]). The layout is
//! matched once per call; the probe's constants (block count, segment
//! size, the scheme's reduced constants) were computed when the filter was
//! built.

#![forbid(unsafe_code)]

/// The parameter getters every filter type has (`num_bits`, `num_hashes`,
/// `layout`, `scheme`, `seed`, `hash_family`), read from its field `$field` (a
/// [`Geometry`], or the format's header for a view): written once here,
/// expanded in each type's `impl` block so that each keeps inherent methods
/// (no trait to import).
macro_rules! parameter_getters {
    ($field:ident) => {
        /// The number of bits m in use.
        pub fn num_bits(&self) -> u64 {
            self.$field.num_bits
        }

        /// The number of probes k per key.
        pub fn num_hashes(&self) -> u32 {
            self.$field.num_hashes
        }

        /// The layout.
        pub fn layout(&self) -> $crate::Layout {
            self.$field.layout
        }

        /// The index scheme.
        pub fn scheme(&self) -> $crate::Scheme {
            self.$field.scheme
        }

        /// The hash seed.
        pub fn seed(&self) -> u64 {
            self.$field.seed
        }

        /// The 128-bit hash family keys are hashed with.
        pub fn hash_family(&self) -> $crate::HashFamily {
            self.$field.hash_family
        }
    };
}
pub(crate) use parameter_getters;

use crate::hash::short::hash_one;
use crate::hash::{HashFamily, Key, Secrets};
use crate::layout::Layout;
use crate::layout::blocked::{BLOCK_BITS, Blocks, KeyRoute, Segments};
use crate::layout::flat::Flat;
use crate::scheme::Scheme;
use crate::tuning::Tuning;
use crate::util::bits::{Words, WordsMut};

/// A layout's addressing: where a key's bits are, and how to test and set
/// them (the word "probe" is kept for one of the k bit positions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Addressing {
    /// Classic and partitioned.
    Flat(Flat),
    /// Blocked and split-block.
    Blocks(Blocks),
}

/// The parameters that determine where a key's bits are (everything but the
/// bits themselves), what is derived from them, and how the probes run.
/// Equal when the defining parameters are (see its `PartialEq`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Geometry {
    pub(crate) layout: Layout,
    pub(crate) scheme: Scheme,
    pub(crate) hash_family: HashFamily,
    pub(crate) seed: u64,
    pub(crate) num_bits: u64,
    pub(crate) num_hashes: u32,
    /// The probes' range: m for classic, m/k for partitioned, the number of
    /// 512-bit blocks for the blocked layouts.
    pub(crate) range: u64,
    pub(crate) addressing: Addressing,
    pub(crate) tuning: Tuning,
    /// The one-key calls' route (a vector one for the blocked layouts
    /// with two-hash schemes on a vector kernel, else the layout's probe),
    /// resolved from the fields above whenever they change, and the seed's
    /// share of the hash, derived once (not per key).
    key_route: KeyRoute,
}

/// Two geometries are equal when the parameters that define a filter are:
/// layout, scheme, hash family, seed, m and k. `range` and `addressing` are derived
/// from them, and the [`Tuning`] (kernel, prefetch) never changes an answer,
/// so two filters differing only in how their probes run compare equal.
impl PartialEq for Geometry {
    fn eq(&self, other: &Self) -> bool {
        self.layout == other.layout
            && self.scheme == other.scheme
            && self.hash_family == other.hash_family
            && self.seed == other.seed
            && self.num_bits == other.num_bits
            && self.num_hashes == other.num_hashes
    }
}

impl Eq for Geometry {}

impl Geometry {
    /// The geometry of validated parameters (m >= k for partitioned, k >= 1),
    /// with the default [`Tuning`].
    pub(crate) fn new(
        layout: Layout,
        scheme: Scheme,
        hash_family: HashFamily,
        seed: u64,
        num_bits: u64,
        num_hashes: u32,
    ) -> Self {
        // The probes' range, and the offset between consecutive probes' ranges
        // (0 for classic, m/k for partitioned: probe i lands in
        // `[i*stride, i*stride + range)`).
        let (range, stride) = match layout {
            Layout::Classic => (num_bits, 0),
            Layout::Partitioned => {
                let part = num_bits / u64::from(num_hashes);
                (part, part)
            }
            Layout::Blocked | Layout::SplitBlock => (num_bits / BLOCK_BITS, 0),
        };
        let tuning = Tuning::default();
        let addressing = match layout {
            Layout::Classic | Layout::Partitioned => {
                Addressing::Flat(Flat::new(scheme, range, stride, num_hashes))
            }
            Layout::Blocked | Layout::SplitBlock => Addressing::Blocks(Blocks::new(
                range,
                num_hashes,
                Segments::of(layout),
                tuning.kernel,
            )),
        };
        Self {
            layout,
            scheme,
            hash_family,
            seed,
            num_bits,
            num_hashes,
            range,
            addressing,
            tuning,
            key_route: KeyRoute::layout(Secrets::new(hash_family, seed)),
        }
        .with_key_probe()
    }

    /// This geometry run with `tuning` (an available kernel).
    pub(crate) fn with_tuning(mut self, tuning: Tuning) -> Self {
        if let Addressing::Blocks(b) = &mut self.addressing {
            *b = b.with_kernel(tuning.kernel);
        }
        self.tuning = tuning;
        self.with_key_probe()
    }

    /// The hash family's and the seed's share of the hash (the
    /// short-input constants).
    #[inline(always)]
    pub(crate) fn secrets(&self) -> &Secrets {
        self.key_route.secrets()
    }

    /// This geometry with its one-key route resolved from its addressing
    /// and scheme.
    fn with_key_probe(mut self) -> Self {
        self.key_route = match &self.addressing {
            Addressing::Blocks(b) if self.scheme.is_two_hash() => b.key_route(*self.secrets()),
            _ => KeyRoute::layout(*self.secrets()),
        };
        self
    }

    /// Whether all bits of `key` are set in `words`.
    ///
    /// The blocked layouts with a two-hash scheme (the defaults) are
    /// inlined into the caller; the rest is one call away, in a function
    /// still generic over the key type, so that its hashing stays
    /// specialised to the key's length. (Inlined together, the flat and
    /// `Independent` probes' register needs made every blocked query save
    /// and restore six registers.)
    #[inline(always)]
    pub(crate) fn contains<W: Words + ?Sized, K: Key + ?Sized>(&self, words: &W, key: &K) -> bool {
        let routed = match words.as_plain() {
            Some(plain) => self.key_route.contains(plain, key),
            None => self.key_route.contains_loaded(words, key),
        };
        if let Some(found) = routed {
            return found;
        }
        match &self.addressing {
            Addressing::Blocks(p) if self.scheme.is_two_hash() => {
                key.with_bytes(|bytes| p.test(words, hash_one(bytes, self.secrets())))
            }
            _ => self.contains_other(words, key),
        }
    }

    /// [`contains`](Self::contains) for the flat layouts and the
    /// `Independent` scheme.
    #[inline(never)]
    fn contains_other<W: Words + ?Sized, K: Key + ?Sized>(&self, words: &W, key: &K) -> bool {
        key.with_bytes(|bytes| {
            if self.scheme.is_two_hash() {
                return self.contains_hash(words, hash_one(bytes, self.secrets()));
            }
            match &self.addressing {
                Addressing::Flat(p) => p.test_independent(words, bytes, self.seed),
                Addressing::Blocks(p) => p.test_independent(words, bytes, self.seed),
            }
        })
    }

    /// Sets the bits of `key` in `words` (inlined as
    /// [`contains`](Self::contains) is).
    #[inline(always)]
    pub(crate) fn insert<W: Words + WordsMut + ?Sized, K: Key + ?Sized>(
        &self,
        words: &mut W,
        key: &K,
    ) {
        let routed = match words.plain() {
            Some(plain) => self.key_route.insert(plain, key),
            None => self.key_route.insert_loaded(words, key),
        };
        if routed {
            return;
        }
        match &self.addressing {
            Addressing::Blocks(p) if self.scheme.is_two_hash() => {
                key.with_bytes(|bytes| p.set(words, hash_one(bytes, self.secrets())))
            }
            _ => self.insert_other(words, key),
        }
    }

    /// [`insert`](Self::insert) for the flat layouts and the
    /// `Independent` scheme.
    #[inline(never)]
    fn insert_other<W: WordsMut + ?Sized, K: Key + ?Sized>(&self, words: &mut W, key: &K) {
        key.with_bytes(|bytes| {
            if self.scheme.is_two_hash() {
                return self.insert_hash(words, hash_one(bytes, self.secrets()));
            }
            match &self.addressing {
                Addressing::Flat(p) => p.set_independent(words, bytes, self.seed),
                Addressing::Blocks(p) => p.set_independent(words, bytes, self.seed),
            }
        })
    }

    /// Whether all bits of a key given by its 128-bit hash are set; the
    /// scheme must be a two-hash scheme (callers check).
    #[inline(always)]
    pub(crate) fn contains_hash<W: Words + ?Sized>(&self, words: &W, hash: u128) -> bool {
        match &self.addressing {
            Addressing::Flat(p) => p.test(words, hash),
            Addressing::Blocks(p) => p.test(words, hash),
        }
    }

    /// Sets the bits of a key given by its 128-bit hash; the scheme must be
    /// a two-hash scheme (callers check).
    #[inline(always)]
    pub(crate) fn insert_hash<W: WordsMut + ?Sized>(&self, words: &mut W, hash: u128) {
        match &self.addressing {
            Addressing::Flat(p) => p.set(words, hash),
            Addressing::Blocks(p) => p.set(words, hash),
        }
    }

    /// Adds the parameters (layout, scheme, hash family, seed, `num_bits`, `num_hashes`)
    /// to a filter type's `Debug` output: the fields every owned filter
    /// shows, in this order.
    pub(crate) fn debug_fields<'d, 'a, 'b>(
        &self,
        d: &'d mut std::fmt::DebugStruct<'a, 'b>,
    ) -> &'d mut std::fmt::DebugStruct<'a, 'b> {
        d.field("layout", &self.layout)
            .field("scheme", &self.scheme)
            .field("hash_family", &self.hash_family)
            .field("seed", &self.seed)
            .field("num_bits", &self.num_bits)
            .field("num_hashes", &self.num_hashes)
    }

    /// How a blocked layout divides its blocks among a key's probes.
    #[inline(always)]
    pub(crate) fn segments(&self) -> Segments {
        Segments::of(self.layout)
    }

    /// The bit positions of a key by the layout's oracle, in probe order.
    pub(crate) fn reference_positions(&self, bytes: &[u8]) -> Vec<u64> {
        match &self.addressing {
            Addressing::Flat(p) => p.positions(bytes, self.hash_family, self.seed),
            Addressing::Blocks(p) => p.positions(
                bytes,
                self.hash_family,
                self.seed,
                self.scheme.is_two_hash(),
            ),
        }
    }
}
