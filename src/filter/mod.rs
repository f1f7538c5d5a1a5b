//! [`BloomFilter`]: the filter type, for every layout and scheme.

// `deny`, not `forbid`: it would extend to `atomic` (two `from_raw_parts`)
// and `mapped` (the map), which allow their own blocks; every other file
// here forbids it.
#![deny(unsafe_code)]

// Above `BloomFilter` (this file), each in its own file: what builds it,
// its batch pipeline, its set operations and serde form, the read-only
// view every filter lends, the atomic filter, the parallel paths, the
// pre-hashed handles and the mapped file. This file imports none of them.
#[cfg(target_has_atomic = "64")]
pub(crate) mod atomic;
pub(crate) mod batch;
pub(crate) mod builder;
#[cfg(feature = "mmap")]
pub(crate) mod mapped;
#[cfg(all(feature = "rayon", target_has_atomic = "64"))]
pub(crate) mod par;
pub(crate) mod prehashed;
#[cfg(feature = "serde")]
mod serde_impl;
pub(crate) mod set_ops;
pub(crate) mod view;

use crate::Error;
use crate::geometry::Geometry;
use crate::hash::Key;
use crate::key_kind::KeyKind;
use crate::simd::kernel::Kernel;
use crate::tuning::Tuning;
use crate::util::bits::AlignedWords;
use crate::util::prefetch::Prefetch;

/// A Bloom filter: a set that answers "possibly in the set" or "certainly
/// not in the set".
///
/// Built with [`BloomFilter::builder`]; the layout and the index scheme are
/// chosen at build time and fixed for the filter's life. Inserted keys are
/// always found (no false negatives on any path); keys never inserted are
/// found with the false-positive rate the filter was sized for.
///
/// ```
/// use lesshash::BloomFilter;
///
/// let mut filter = BloomFilter::builder().expected_items(1000).fpr(0.01).build()?;
/// filter.insert("apple");
/// filter.insert(&42u64);
/// assert!(filter.contains("apple"));
/// assert!(filter.contains(&42u64));
/// # Ok::<(), lesshash::Error>(())
/// ```
#[derive(Clone)]
pub struct BloomFilter {
    geometry: Geometry,
    bits: AlignedWords,
    insert_calls: u64,
    key_kind: KeyKind,
}

impl BloomFilter {
    /// The largest k any layout accepts: 64.
    pub const MAX_HASHES: u32 = crate::util::limits::MAX_HASHES;

    /// The largest filter, in bits, that the builder accepts: 2^46 bits
    /// (8 TiB). Index arithmetic is exact up to 2^64; this bound keeps a
    /// mistyped size from asking the allocator for the impossible.
    pub const MAX_BITS: u64 = crate::util::limits::MAX_BITS;

    /// Allocates a filter of validated geometry.
    pub(crate) fn from_geometry(geometry: Geometry) -> Result<Self, Error> {
        Ok(Self {
            bits: AlignedWords::zeroed(geometry.num_bits, "bits")?,
            geometry,
            insert_calls: 0,
            key_kind: KeyKind::Unrecorded,
        })
    }

    /// The filter's parameters.
    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The bits as words (including zero padding up to a whole block).
    pub(crate) fn words(&self) -> &[u64] {
        self.bits.words()
    }

    /// The geometry and the words at once, inlined into other crates: the
    /// one-key pre-hashed query's per-key read (`geometry` and `words` are
    /// not marked `#[inline]`: doing so moved the classic one-key query's
    /// code and made it measurably slower; docs/bench-notes/2026-11-28.md,
    /// "One key at a time").
    #[inline]
    pub(crate) fn parts(&self) -> (&Geometry, &[u64]) {
        (&self.geometry, self.bits.words())
    }

    /// The bits as mutable words. Callers keep the padding zero.
    pub(crate) fn words_mut(&mut self) -> &mut [u64] {
        self.bits.words_mut()
    }

    /// Sets the insert counter (when loading or combining filters).
    pub(crate) fn set_insert_calls(&mut self, calls: u64) {
        self.insert_calls = calls;
    }

    /// Counts `n` more insert calls. The counter saturates at `u64::MAX`:
    /// a loaded file may carry any value, and bookkeeping must never panic
    /// (overflow checks) or wrap to a small count.
    #[inline(always)]
    pub(crate) fn count_inserts(&mut self, n: usize) {
        self.insert_calls = self.insert_calls.saturating_add(n as u64);
    }

    /// A filter of validated geometry over existing bits (the format and the
    /// atomic filter; no copy). `bits` must hold `geometry.num_bits` bits
    /// rounded up to whole blocks, padding zero.
    pub(crate) fn from_parts(geometry: Geometry, bits: AlignedWords, insert_calls: u64) -> Self {
        Self {
            geometry,
            bits,
            insert_calls,
            key_kind: KeyKind::Unrecorded,
        }
    }

    /// The geometry, the bits and the insert counter, without copying.
    pub(crate) fn into_parts(self) -> (Geometry, AlignedWords, u64) {
        (self.geometry, self.bits, self.insert_calls)
    }

    /// The kind of keys this filter records it was built from
    /// ([`KeyKind`]): set by the interfaces that know their keys' type
    /// (Arrow arrays, Python, the command line) and by
    /// [`Builder::key_kind`](crate::Builder::key_kind), kept in the file,
    /// checked by queries of typed keys. The generic [`insert`](Self::insert)
    /// leaves it as it is.
    pub fn key_kind(&self) -> KeyKind {
        self.key_kind
    }

    /// Sets the recorded key kind: after keys were inserted through the
    /// generic calls, to say what they were; or `KeyKind::Mixed` to let
    /// keys of any kind query the filter.
    pub fn set_key_kind(&mut self, kind: KeyKind) {
        self.key_kind = kind;
    }

    /// Records that keys of kind `keys` were inserted ([`KeyKind::combine`]).
    pub(crate) fn record_key_kind(&mut self, keys: KeyKind) {
        self.key_kind = self.key_kind.combine(keys);
    }

    /// Inserts a key.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) {
        let (geometry, words) = (&self.geometry, self.bits.words_mut());
        geometry.insert(words, key);
        self.count_inserts(1);
    }

    /// Whether a key is possibly in the set (`false`: certainly not).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.geometry.contains(self.bits.words(), key)
    }

    /// The index routine this filter's batch paths run (and whose vector
    /// probe its single-key calls use).
    pub fn kernel(&self) -> Kernel {
        self.geometry.tuning.kernel
    }

    /// Runs this filter on `kernel` from now on (benchmarks, pinning a
    /// kernel). Answers and bits never depend on it.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming `kernel` if this CPU lacks it;
    /// the filter is then unchanged.
    pub fn set_kernel(&mut self, kernel: Kernel) -> Result<(), Error> {
        kernel.check_available()?;
        let tuning = Tuning {
            kernel,
            ..self.geometry.tuning
        };
        self.geometry = self.geometry.with_tuning(tuning);
        Ok(())
    }

    /// This filter's batch prefetch mode.
    pub fn prefetch(&self) -> Prefetch {
        self.geometry.tuning.prefetch
    }

    /// Sets this filter's batch prefetch mode (answers never depend on it).
    pub fn set_prefetch(&mut self, prefetch: Prefetch) {
        self.geometry.tuning.prefetch = prefetch;
    }

    /// How many chunks ahead this filter's batch paths prefetch.
    pub fn prefetch_distance(&self) -> u32 {
        self.geometry.tuning.prefetch_distance
    }

    /// Sets how many chunks of [`CHUNK`](crate::filter::batch::CHUNK) keys ahead
    /// the batch paths prefetch (answers never depend on it).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming `prefetch_distance` outside 1 to
    /// [`Prefetch::MAX_DISTANCE`](crate::Prefetch::MAX_DISTANCE); the
    /// filter is then unchanged.
    pub fn set_prefetch_distance(&mut self, chunks: u32) -> Result<(), Error> {
        self.geometry.tuning.prefetch_distance = Prefetch::check_distance(chunks)?;
        Ok(())
    }

    /// Inserts a key by its hash; the scheme is a two-hash one (the caller
    /// holds a [`Prehashed`](crate::Prehashed)).
    #[inline]
    pub(crate) fn insert_hash_unchecked(&mut self, hash: u128) {
        self.geometry.insert_hash(self.bits.words_mut(), hash);
        self.count_inserts(1);
    }

    /// Removes every key (keeps the geometry and seed).
    pub fn clear(&mut self) {
        self.bits.clear();
        self.insert_calls = 0;
    }

    crate::geometry::parameter_getters!(geometry);

    /// How many insert calls the filter has seen since it was built or
    /// cleared (repeated keys count each time).
    pub fn insert_calls(&self) -> u64 {
        self.insert_calls
    }

    /// The heap memory used by the bits, in bytes.
    pub fn size_in_bytes(&self) -> usize {
        std::mem::size_of_val(self.bits.words())
    }

    /// The bit positions of a key by the scheme's oracle, in probe order
    /// (for tests and tools; allocates).
    pub fn positions<K: Key + ?Sized>(&self, key: &K) -> Vec<u64> {
        key.with_bytes(|bytes| self.geometry.reference_positions(bytes))
    }
}

/// Filters are equal when they have the same parameters and the same bits
/// (the insert counter is not compared: it is bookkeeping, not content).
impl PartialEq for BloomFilter {
    fn eq(&self, other: &Self) -> bool {
        self.geometry == other.geometry && self.bits == other.bits
    }
}

impl Eq for BloomFilter {}

/// Shows the parameters and the fill, never the bits.
impl std::fmt::Debug for BloomFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.geometry
            .debug_fields(&mut f.debug_struct("BloomFilter"))
            .field("insert_calls", &self.insert_calls)
            .field("count_ones", &self.count_ones())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Layout, Scheme};

    #[test]
    fn debug_does_not_dump_bits() {
        let f = BloomFilter::builder()
            .bits(1 << 16)
            .hashes(3)
            .build()
            .unwrap();
        let s = format!("{f:?}");
        assert!(s.len() < 300, "{s}");
        assert!(s.contains("num_bits: 65536"));
    }

    #[test]
    fn send_sync_clone() {
        fn assert_send_sync<T: Send + Sync + Clone>() {}
        assert_send_sync::<BloomFilter>();
    }

    #[test]
    fn positions_match_the_bits_set() {
        for layout in Layout::ALL {
            for scheme in Scheme::ALL {
                let mut f = BloomFilter::builder()
                    .layout(layout)
                    .scheme(scheme)
                    .bits(1000)
                    .hashes(5)
                    .build()
                    .unwrap();
                f.insert(b"key");
                let mut positions = f.positions(b"key");
                positions.sort_unstable();
                positions.dedup();
                assert_eq!(
                    f.count_ones(),
                    positions.len() as u64,
                    "{layout:?} {scheme:?}"
                );
                assert!(
                    positions
                        .iter()
                        .all(|&p| f.words()[(p / 64) as usize] >> (p % 64) & 1 == 1)
                );
            }
        }
    }

    #[test]
    fn prehashed_equals_keyed_and_independent_refuses() {
        let mut a = BloomFilter::builder().bits(4096).hashes(4).build().unwrap();
        let mut b = a.clone();
        a.insert(&7u64);
        let mut by_hash = b.prehashed_mut().unwrap();
        let h = by_hash.hash(&7u64);
        by_hash.insert(h);
        assert_eq!(a, b);
        assert_eq!(b.insert_calls(), 1);

        let mut ind = BloomFilter::builder()
            .scheme(Scheme::Independent)
            .bits(4096)
            .hashes(4)
            .build()
            .unwrap();
        let err = ind.prehashed_mut().unwrap_err().to_string();
        assert!(err.contains("independent"), "{err}");
        assert!(ind.prehashed().is_err());
    }

    #[test]
    fn batch_length_mismatch_is_an_error() {
        let f = BloomFilter::with_fpr(10, 0.01).unwrap();
        let mut out = [false; 2];
        let err = f
            .contains_batch(&[1u64, 2, 3], &mut out)
            .unwrap_err()
            .to_string();
        assert!(err.contains("`out`"), "{err}");
    }
}
