//! # lesshash: Bloom filters that hash once
//!
//! A Bloom filter answers "is this key in the set?" with no false negatives
//! and a tunable rate of false positives, using a few bits per key. The
//! textbook filter computes k independent hash functions per key; with k = 7
//! (1% false positives) hashing dominates the cost of an in-cache filter.
//!
//! Kirsch and Mitzenmacher ("Less Hashing, Same Performance: Building a
//! Better Bloom Filter") proved that two hash values suffice: the k probe
//! positions `g_i(x) = h1(x) + i*h2(x) (+ f(i)) mod m` give the same
//! asymptotic false-positive rate as k independent hashes. lesshash computes
//! one XXH3-128 per key, splits it into the 64-bit halves h1 and h2, and
//! derives every probe from them with additions.
//!
//! ```
//! use lesshash::BloomFilter;
//!
//! // The default blocked layout, sized by its formula: 9.92 bits/key, k = 6 for 1%.
//! let mut filter = BloomFilter::with_fpr(1_000_000, 0.01)?;
//! for user in 0..1000u64 {
//!     filter.insert(&user);
//! }
//! assert!(filter.contains(&17u64));
//! println!("{:.3}% expected false positives now", 100.0 * filter.expected_fpr());
//! # Ok::<(), lesshash::Error>(())
//! ```
//!
//! ## What is in the crate
//!
//! * [`BloomFilter`], built by [`Builder`] (or [`BloomFilter::with_fpr`]):
//!   single-key, batch (`insert_batch`, `contains_batch`, a `Vec<u64>`
//!   bitmap) and, with the `rayon` feature, parallel (`par_*`) inserts and
//!   queries; set operations (`union`, `intersect`, `estimated_union_len`).
//! * [`Scheme`]: the paper's index schemes, `Independent` (the k-hash
//!   baseline), `DoubleHashing` and `EnhancedDoubleHashing` with `f(i) = i^2`
//!   or `i^3`. One scalar oracle per scheme defines the probes; every faster
//!   path is tested against it.
//! * [`Layout`]: `Classic` (one array) and `Partitioned` (k sub-arrays, the
//!   paper's partition scheme), each sized by its own exact formula; and the
//!   cache-line-blocked `Blocked` and `SplitBlock` (one 512-bit block per
//!   key, sized by the blocked formula [`rates::blocked_fpr`]).
//! * [`Kernel`]: the vector code a filter runs (scalar oracle, portable
//!   `wide`, AVX2 chosen at run time, AVX-512 on request; [`kernel_name`]); it changes speed,
//!   never answers. [`Prefetch`]: the batch paths' prefetching.
//! * [`Key`]: how keys become bytes, hashed by one XXH3-128 ([`hash_key`],
//!   [`hash_batch`]). Keys hash identically on every platform, so a
//!   persisted filter stays valid. [`Prehashed`]: calls that take those
//!   hashes instead of keys.
//! * [`rates`]: the false-positive mathematics (asymptotic, Bloom's lower
//!   bound, the exact classic rate, the partitioned and blocked rates, the
//!   space lower bound, cardinality estimates).
//! * [`format`](mod@format): the versioned binary format (`to_bytes`,
//!   `from_bytes`, `write_to`, `read_from`, `write_file`, `read_file`);
//!   [`FilterView`], a zero-copy view of a serialized filter; and
//!   `MappedFilter` (feature `mmap`, on by default), a filter file queried
//!   through a read-only memory map without loading it, and `MappedCache`,
//!   such files by path for engines that name a file in every query.
//! * [`AtomicBloomFilter`]: inserts through `&self` from many threads.
//! * [`CountMinSketch`]: the paper's two-hash Count-Min sketch (Sec. 9) and
//!   the classic one.
//! * [`parquet`]: Parquet's split-block Bloom filter, bit for bit
//!   ([`parquet::ParquetFilter`]), to query filters read from Parquet
//!   files and to write filters into them. Unlike
//!   [`Layout::SplitBlock`] (a 512-bit block in k segments, k from 1 to
//!   64, from XXH3-128), it has 256-bit blocks of eight 32-bit words with
//!   one bit each, from XXH64.
//! * [`spark`]: Spark's Bloom filter (`org.apache.spark.util.sketch`), bit
//!   for bit in both format versions: read filters Spark wrote, build ones
//!   Spark reads, query them.
//!
//! ## Invariants
//!
//! * **No false negatives**, on every path: single, batch, pre-hashed.
//! * **No panics on bad input**: every parameter is validated and a bad one
//!   is an [`Error`] naming it.
//! * **Portable hashing**: integers hash as little-endian bytes.
//!
//! See `docs/design.md` in the repository for the architecture.

// The public modules: the file format, the false-positive mathematics and
// Parquet's filter. Everything else users call is re-exported below, from
// private modules, so that each item has one path.
#[cfg(feature = "arrow")]
pub mod arrow;
pub mod format;
pub mod parquet;
pub mod rates;
pub mod spark;
pub mod temporal;

// Not part of the public API (hidden from the docs, no semver promise): the
// oracles, kernels and constants that lesshash's own tests, benches, fuzz
// targets and command-line tool reach for.
#[doc(hidden)]
pub mod internals;

// The private tree, by layer (docs/design.md, "Modules"; every import
// points down): `util` (bits, limits, salts, primes, prefetching, the
// parallel update driver) and `error` at the bottom; `hash`, `simd`,
// `scheme` and the `layout`s (flat/, blocked/) with their rules; `geometry`
// and `tuning` (a filter's parameters and how its probes run); `filter`:
// `BloomFilter` and, above it in the same folder, its builder, batch
// pipeline, set operations, views, maps, handles and parallel paths;
// `count_min`, the second data structure.
mod count_min;
mod error;
mod filter;
mod geometry;
mod hash;
mod key_kind;
mod layout;
mod scheme;
mod simd;
#[cfg(test)]
mod test_support;
mod tuning;
mod util;

// The public surface at the root, one path per item, by what a user does:
// the filter types (and their views and handles),
pub use filter::BloomFilter;
#[cfg(target_has_atomic = "64")]
pub use filter::atomic::AtomicBloomFilter;
pub use filter::builder::Builder;
#[cfg(feature = "mmap")]
pub use filter::mapped::{MappedCache, MappedFilter};
pub use filter::prehashed::{LendsView, Prehashed};
pub use filter::view::{FilterView, VIEW_ALIGN};
// what a filter is built with (never changing an answer: `Kernel`, `Prefetch`),
pub use layout::Layout;
pub use scheme::{Enhancement, Scheme};
pub use simd::kernel::{Kernel, kernel_name};
pub use util::prefetch::Prefetch;
// keys and their hashing (and the batch calls' buffers),
pub use filter::batch::{bitmap_words, hash_batch};
pub use hash::{ByHash, DEFAULT_SEED, HashFamily, Key, hash_key, random_seed};
pub use key_kind::KeyKind;
pub use util::bits::Block;
// the errors,
pub use error::{Error, FormatError, ParseNameError};
// and the paper's second structure, the two-hash Count-Min sketch.
pub use count_min::{CountMinBuilder, CountMinDimensions, CountMinScheme, CountMinSketch};

// The README's and the guide's examples are compiled and run as doc tests.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

#[doc = include_str!("../docs/guide.md")]
#[cfg(doctest)]
pub struct GuideDoctests;
