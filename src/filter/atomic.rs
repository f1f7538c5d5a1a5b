//! [`AtomicBloomFilter`]: a filter many threads insert into at once.
//!
//! Inserts set bits with relaxed atomic `fetch_or`; queries read them with
//! relaxed loads. Bits are only ever set while the filter is shared, so the
//! order in which threads' bits land does not matter: the final bits are
//! the OR of everyone's, exactly the sequentially built filter. A query sees
//! every insert that happened-before it (joined thread, channel, mutex...):
//! happens-before plus the coherence of each atomic word guarantees the
//! load observes the earlier `fetch_or`. Inserts racing with a query may or
//! may not be seen, as with any concurrent set.
//!
//! # Why `unsafe` here
//!
//! Converting between [`BloomFilter`] and [`AtomicBloomFilter`] reuses the
//! allocation instead of copying it (a filter can be gigabytes). Safe Rust
//! has no way to reinterpret a `Vec<[u64; 8]>` as a `Vec<[AtomicU64; 8]>`
//! (`AtomicU64::from_mut_slice` is unstable and would not give an owned
//! buffer), so the two conversions below use `Vec::from_raw_parts` on a type
//! with the same size, alignment and bit validity. Everything else is safe
//! indexing.

// The two `from_raw_parts` calls, each with its SAFETY comment (the parent
// module denies `unsafe` for every other file of `filter/`).
#![allow(unsafe_code)]

use std::mem::{ManuallyDrop, align_of, size_of};
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering::Relaxed};

use crate::Error;
use crate::filter::BloomFilter;
use crate::geometry::Geometry;
use crate::hash::Key;
use crate::key_kind::KeyKind;
use crate::util::bits::{AlignedWords, Block, Line, Words, WordsMut};

/// One cache line of atomic words: the layout of [`Block`].
#[repr(C, align(64))]
pub(crate) struct AtomicBlock([AtomicU64; 8]);

// The conversions rely on these; a platform where they fail does not build.
const _: () = assert!(size_of::<AtomicBlock>() == size_of::<Block>());
const _: () = assert!(align_of::<AtomicBlock>() == align_of::<Block>());
const _: () = assert!(size_of::<AtomicU64>() == size_of::<u64>());

/// The atomic words as probe storage: relaxed loads, relaxed `fetch_or`.
/// Setting bits is an OR, commutative and idempotent, so concurrent
/// inserts give the bits of the sequential ones whatever the interleaving.
#[derive(Clone, Copy)]
pub(crate) struct AtomicWords<'a>(&'a [AtomicBlock]);

impl Words for AtomicWords<'_> {
    type Line<'a>
        = &'a AtomicBlock
    where
        Self: 'a;

    #[inline(always)]
    fn word(&self, i: usize) -> u64 {
        self.0[i / 8].0[i % 8].load(Relaxed)
    }

    #[inline(always)]
    fn line(&self, b: usize) -> &AtomicBlock {
        &self.0[b]
    }
}

impl Line for &AtomicBlock {
    const IN_PLACE: bool = false;

    #[inline(always)]
    fn get(&self, w: usize) -> u64 {
        self.0[w & 7].load(Relaxed)
    }

    #[inline(always)]
    fn with_words<R>(&self, f: impl FnOnce(&[u64; 8]) -> R) -> R {
        f(&std::array::from_fn(|w| self.0[w].load(Relaxed)))
    }
}

/// ORs `mask` into `word` unless its bits are all set already. A locked OR
/// is not free even when it changes nothing (it takes the cache line for
/// writing, from every other core that reads it); a relaxed load sees when
/// it would not: a key inserted again, or its bits set by other keys. Bits
/// are never cleared while the words are shared, so bits seen set stay
/// set, and a read that happens-after this insert sees them (read-read
/// coherence: it reads the value this load read, or a later one).
#[inline(always)]
fn or_missing(word: &AtomicU64, mask: u64) {
    if word.load(Relaxed) & mask != mask {
        word.fetch_or(mask, Relaxed);
    }
}

impl WordsMut for AtomicWords<'_> {
    #[inline(always)]
    fn or(&mut self, i: usize, mask: u64) {
        or_missing(&self.0[i / 8].0[i % 8], mask);
    }

    #[inline(always)]
    fn or_line(&mut self, b: usize, mask: [u64; 8]) {
        // Only the words the key touches (a zero mask is always "set").
        for (w, m) in self.0[b].0.iter().zip(mask) {
            or_missing(w, m);
        }
    }
}

/// Stripes of the insert counter: enough that threads up to this many
/// count on lines of their own.
const STRIPES: usize = 16;

/// One stripe of the insert counter, alone on its pair of cache lines
/// (adjacent-line prefetchers fetch lines in pairs).
#[repr(align(128))]
struct Stripe(AtomicU64);

/// The count of insert calls from all threads. One shared counter made
/// every insert of every thread a locked read-modify-write of one cache
/// line, which the threads then pass between their cores, even for keys
/// whose bits were all set and which write nothing else; each thread counts
/// on a stripe of its own instead, and a read sums them. `base` is the
/// count the filter came with (a loaded file may carry any value): the
/// total saturates at `u64::MAX` like the owned filter's counter, while no
/// stripe can wrap (2^64 calls).
struct InsertCalls {
    base: u64,
    stripes: Box<[Stripe; STRIPES]>,
}

impl InsertCalls {
    fn new(base: u64) -> Self {
        Self {
            base,
            stripes: Box::new(std::array::from_fn(|_| Stripe(AtomicU64::new(0)))),
        }
    }

    /// The calling thread's stripe: threads take stripes in turn when they
    /// first count (stripe 0 while the thread's locals are being torn down).
    #[inline(always)]
    fn stripe() -> usize {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        thread_local! {
            static STRIPE: usize = NEXT.fetch_add(1, Relaxed) % STRIPES;
        }
        STRIPE.try_with(|s| *s).unwrap_or(0)
    }

    /// Counts one call.
    #[inline(always)]
    fn count(&self) {
        self.stripes[Self::stripe()].0.fetch_add(1, Relaxed);
    }

    /// The calls counted so far, from all threads.
    fn total(&self) -> u64 {
        self.stripes
            .iter()
            .fold(self.base, |n, s| n.saturating_add(s.0.load(Relaxed)))
    }
}

/// A Bloom filter whose inserts go through `&self`, for sharing between
/// threads (by reference or `Arc`).
///
/// ```
/// use std::sync::Arc;
/// use lesshash::{AtomicBloomFilter, BloomFilter};
///
/// let filter = Arc::new(AtomicBloomFilter::from(BloomFilter::with_fpr(10_000, 0.01)?));
/// let workers: Vec<_> = (0..4u64)
///     .map(|t| {
///         let filter = Arc::clone(&filter);
///         std::thread::spawn(move || {
///             for key in (t * 1000)..(t + 1) * 1000 {
///                 filter.insert(&key);
///             }
///         })
///     })
///     .collect();
/// for w in workers {
///     w.join().unwrap();
/// }
/// let filter = Arc::into_inner(filter).unwrap().into_inner();
/// assert!((0..4000u64).all(|key| filter.contains(&key)));
/// # Ok::<(), lesshash::Error>(())
/// ```
pub struct AtomicBloomFilter {
    geometry: Geometry,
    blocks: Vec<AtomicBlock>,
    insert_calls: InsertCalls,
    key_kind: AtomicU8,
}

impl AtomicBloomFilter {
    /// Makes a filter shareable, reusing its bits (no copy).
    pub fn new(filter: BloomFilter) -> Self {
        let key_kind = filter.key_kind();
        let (geometry, bits, insert_calls) = filter.into_parts();
        let mut blocks = ManuallyDrop::new(bits.into_blocks());
        // `as_mut_ptr`: the pointer the new Vec will write through must not
        // come from `as_ptr`, whose contract forbids writing through it.
        let (ptr, len, cap) = (blocks.as_mut_ptr(), blocks.len(), blocks.capacity());
        // SAFETY: `ptr`, `len`, `cap` come from a live Vec<Block> that is
        // never used or dropped again (ManuallyDrop). AtomicBlock has the
        // same size and alignment as Block (asserted above), so the
        // allocation's layout is the one Vec<AtomicBlock> of capacity `cap`
        // deallocates with. AtomicU64 has the same in-memory representation
        // as u64 (std docs) and every bit pattern is valid for both, so the
        // `len` initialised Blocks are `len` initialised AtomicBlocks. The
        // Vec is owned, so nothing else aliases the memory non-atomically.
        let blocks = unsafe { Vec::from_raw_parts(ptr.cast::<AtomicBlock>(), len, cap) };
        Self {
            geometry,
            blocks,
            insert_calls: InsertCalls::new(insert_calls),
            key_kind: AtomicU8::new(key_kind as u8),
        }
    }

    /// The plain filter, reusing the bits (no copy). Taking `self` proves no
    /// other thread is still inserting (use `Arc::into_inner` first when
    /// shared by `Arc`).
    pub fn into_inner(self) -> BloomFilter {
        let key_kind = self.key_kind();
        let mut blocks = ManuallyDrop::new(self.blocks);
        let (ptr, len, cap) = (blocks.as_mut_ptr(), blocks.len(), blocks.capacity());
        // SAFETY: the reverse of `new`: a Vec<AtomicBlock> never used again,
        // same size/alignment/bit validity as Block; owning `self` means no
        // thread holds a reference, so reading the words non-atomically
        // from now on cannot race.
        let blocks = unsafe { Vec::from_raw_parts(ptr.cast::<Block>(), len, cap) };
        let mut filter = BloomFilter::from_parts(
            self.geometry,
            AlignedWords::from_blocks(blocks),
            self.insert_calls.total(),
        );
        filter.set_key_kind(key_kind);
        filter
    }

    /// A copy of the current bits as a plain filter, while others may still
    /// insert (each word is read atomically; inserts racing with the copy
    /// may be partly included).
    ///
    /// # Errors
    /// [`Error::Allocation`] if the copy cannot be allocated.
    pub fn to_filter(&self) -> Result<BloomFilter, Error> {
        let mut filter = BloomFilter::from_geometry(self.geometry)?;
        let words = self.blocks.iter().flat_map(|b| &b.0);
        for (dst, src) in filter.words_mut().iter_mut().zip(words) {
            *dst = src.load(Relaxed);
        }
        filter.set_insert_calls(self.insert_calls.total());
        filter.set_key_kind(self.key_kind());
        Ok(filter)
    }

    /// The kind of keys the filter records ([`BloomFilter::key_kind`]).
    pub fn key_kind(&self) -> KeyKind {
        KeyKind::from_id(self.key_kind.load(Relaxed)).unwrap_or(KeyKind::Mixed)
    }

    /// Records that keys of kind `keys` were inserted (from any thread).
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    pub(crate) fn record_key_kind(&self, keys: KeyKind) {
        // Only ever combined from valid ids, so `from_id` always succeeds;
        // `Mixed` accepts every query should it not.
        let _ = self.key_kind.fetch_update(Relaxed, Relaxed, |id| {
            let now = KeyKind::from_id(id).unwrap_or(KeyKind::Mixed);
            let next = now.combine(keys);
            (next != now).then_some(next as u8)
        });
    }

    /// Counts one insert call (on the calling thread's stripe).
    #[inline(always)]
    fn count_insert(&self) {
        self.insert_calls.count();
    }

    /// Inserts a key, from any thread.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&self, key: &K) {
        self.geometry.insert(&mut AtomicWords(&self.blocks), key);
        self.count_insert();
    }

    /// Whether a key is possibly in the set, from any thread (see the module
    /// docs for what concurrent inserts it sees).
    #[inline]
    pub fn contains<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.geometry.contains(&AtomicWords(&self.blocks), key)
    }

    /// The filter's parameters.
    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// Inserts a key by its hash; the scheme is a two-hash one (the caller
    /// holds a [`Prehashed`](crate::Prehashed)).
    #[inline]
    pub(crate) fn insert_hash_unchecked(&self, hash: u128) {
        self.geometry
            .insert_hash(&mut AtomicWords(&self.blocks), hash);
        self.count_insert();
    }

    /// Whether a key given by its hash is possibly in the set; the scheme
    /// is a two-hash one.
    #[inline]
    pub(crate) fn contains_hash_unchecked(&self, hash: u128) -> bool {
        self.geometry
            .contains_hash(&AtomicWords(&self.blocks), hash)
    }

    crate::geometry::parameter_getters!(geometry);

    /// Insert calls so far, from all threads.
    pub fn insert_calls(&self) -> u64 {
        self.insert_calls.total()
    }
}

impl From<BloomFilter> for AtomicBloomFilter {
    fn from(filter: BloomFilter) -> Self {
        Self::new(filter)
    }
}

impl From<AtomicBloomFilter> for BloomFilter {
    fn from(filter: AtomicBloomFilter) -> Self {
        filter.into_inner()
    }
}

impl BloomFilter {
    /// The shareable form of this filter, reusing its bits (see
    /// [`AtomicBloomFilter`]).
    pub fn into_atomic(self) -> AtomicBloomFilter {
        AtomicBloomFilter::new(self)
    }
}

/// Shows the parameters, never the bits.
impl std::fmt::Debug for AtomicBloomFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.geometry
            .debug_fields(&mut f.debug_struct("AtomicBloomFilter"))
            .field("insert_calls", &self.insert_calls())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_reuse_the_allocation() {
        let mut f = BloomFilter::builder()
            .bits(100_000)
            .hashes(5)
            .build()
            .unwrap();
        f.insert("x");
        let ptr = f.words().as_ptr() as usize;
        let a = f.into_atomic();
        assert_eq!(a.blocks.as_ptr() as usize, ptr);
        a.insert("y");
        let back = a.into_inner();
        assert_eq!(back.words().as_ptr() as usize, ptr);
        assert!(back.contains("x") && back.contains("y"));
        assert_eq!(back.insert_calls(), 2);
    }

    /// Counts from more threads than stripes (so some share one) all
    /// arrive, and the total saturates from a base near the top.
    #[test]
    fn insert_calls_sum_every_thread_and_saturate() {
        let calls = InsertCalls::new(5);
        std::thread::scope(|s| {
            for _ in 0..2 * STRIPES {
                s.spawn(|| (0..1000).for_each(|_| calls.count()));
            }
        });
        assert_eq!(calls.total(), 5 + 2 * STRIPES as u64 * 1000);
        let full = InsertCalls::new(u64::MAX - 1);
        (0..3).for_each(|_| full.count());
        assert_eq!(full.total(), u64::MAX);
    }

    #[test]
    fn send_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<AtomicBloomFilter>();
    }
}
