//! Spark's Bloom filter, bit for bit: read, write, build and query the
//! filters `org.apache.spark.util.sketch.BloomFilter` makes
//! (`df.stat.bloomFilter`, `BloomFilter.create`, Spark SQL's
//! `bloom_filter_agg` / `might_contain`), in both of its format versions.
//!
//! ```
//! use lesshash::spark::{SparkBloomFilter, SparkVersion};
//!
//! let mut filter = SparkBloomFilter::with_fpp(SparkVersion::V2, 1000, 0.03)?;
//! filter.insert_long(42);
//! filter.insert_str("alice");
//! assert!(filter.contains_long(42) && filter.contains_str("alice"));
//! // Spark's `BloomFilter.readFrom` reads these bytes, and Spark's
//! // `writeTo` bytes read back here.
//! let bytes = filter.to_spark_bytes();
//! assert_eq!(SparkBloomFilter::from_spark_bytes(&bytes)?, filter);
//! # Ok::<(), lesshash::Error>(())
//! ```
//!
//! It is a two-hash filter of the kind Kirsch and Mitzenmacher analyse,
//! over Spark's Murmur3_x86_32 ([`murmur3`]): `h1 = hash(key, seed)`,
//! `h2 = hash(key, h1)`, and k indexes into a flat array of
//! `64 · numWords` bits:
//!
//! * **Version 1** (Spark before 4.1): index i (1 to k) is
//!   `h1 + i·h2` in 32-bit wrapping arithmetic, complemented if negative,
//!   modulo the bits. So no index reaches 2^31: bits beyond are never
//!   set, and a filter larger than 2^31 bits is as accurate as one of
//!   2^31. The seed is always 0.
//! * **Version 2** (the default from Spark 4.1): a 64-bit accumulator
//!   starts at `h1 · (2^31 − 1)` and gains `h2` per index (wrapping); the
//!   index is the accumulator, complemented if negative, modulo the bits
//!   (the accumulator itself goes on uncomplemented). A 32-bit seed is
//!   part of the filter.
//!
//! Keys: a long (and Spark's byte, short and int, widened to long, as
//! `i64`) is hashed as its 8 little-endian bytes; a string as its UTF-8
//! bytes; binary as its bytes. The stream is big-endian: `int version`,
//! `int numHashFunctions`, (version 2) `int seed`, `int numWords`, then
//! `long[numWords]`; bit `i` is bit `i mod 64` of word `i / 64`.

#![forbid(unsafe_code)]

pub mod murmur3;

use crate::error::{Error, FormatError};

/// The most hash functions a filter read or built here may have: Spark
/// sets no bound, but every query and insert runs k steps, so a hostile
/// header must not make each one run for seconds.
pub const MAX_HASHES: u32 = 1 << 16;

/// Spark's format version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SparkVersion {
    /// 32-bit index arithmetic, no seed (Spark before 4.1).
    V1,
    /// 64-bit index arithmetic and a seed (Spark 4.1's default).
    V2,
}

impl SparkVersion {
    fn number(self) -> i32 {
        match self {
            SparkVersion::V1 => 1,
            SparkVersion::V2 => 2,
        }
    }
}

/// Keys per chunk of the batch pipeline.
const CHUNK: usize = 32;

/// The largest k the batch pipeline buffers a chunk's indexes for (larger
/// k: one key at a time).
const MAX_PIPELINED_K: usize = 32;

/// Keys per parallel task.
#[cfg(feature = "rayon")]
const PAR_TASK: usize = 16_384;

/// A Spark Bloom filter ([module docs](self) for the scheme and format).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparkBloomFilter {
    version: SparkVersion,
    num_hashes: u32,
    seed: i32,
    words: Vec<u64>,
}

/// Spark's sizing (`BloomFilter.optimalNumOfBits`): `-n ln p / (ln 2)^2`
/// bits, truncated.
fn optimal_bits(n: u64, p: f64) -> u64 {
    (-(n as f64) * p.ln() / (std::f64::consts::LN_2 * std::f64::consts::LN_2)) as u64
}

/// Spark's k (`optimalNumOfHashFunctions`): `max(1, round(m / n · ln 2))`.
fn optimal_hashes(n: u64, m: u64) -> u64 {
    ((m as f64 / n as f64 * std::f64::consts::LN_2).round() as u64).max(1)
}

impl SparkBloomFilter {
    /// The filter Spark's `BloomFilter.create(version, n, optimalNumOfBits(n,
    /// fpp), seed 0)` makes (`create(n, fpp)` is version 2's).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming `expected_items` (zero) or `fpp`
    /// (outside (0, 1)), or `bits` if the size exceeds Spark's bound.
    pub fn with_fpp(version: SparkVersion, expected_items: u64, fpp: f64) -> Result<Self, Error> {
        if expected_items == 0 {
            return Err(invalid("expected_items", "must be positive"));
        }
        if !(fpp > 0.0 && fpp < 1.0) {
            return Err(invalid("fpp", "must be within (0, 1)"));
        }
        let bits = optimal_bits(expected_items, fpp);
        if bits == 0 {
            return Err(invalid(
                "bits",
                "Spark's sizing gives 0 bits for these parameters",
            ));
        }
        let k = optimal_hashes(expected_items, bits);
        let k = u32::try_from(k)
            .ok()
            .filter(|&k| k <= MAX_HASHES)
            .ok_or_else(|| {
                invalid(
                    "expected_items",
                    "gives more hash functions than lesshash reads",
                )
            })?;
        Self::with_bits(version, bits, k, 0)
    }

    /// An empty filter of `bits` bits (rounded up to whole 64-bit words, as
    /// Spark's `BitArray` does), `num_hashes` hash functions and `seed`
    /// (version 2; version 1 has none: 0).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] naming `bits` (zero, or more than
    /// Spark's 2^31 − 1 words), `num_hashes` (zero or above
    /// [`MAX_HASHES`]) or `seed` (not 0 for version 1).
    pub fn with_bits(
        version: SparkVersion,
        bits: u64,
        num_hashes: u32,
        seed: i32,
    ) -> Result<Self, Error> {
        if bits == 0 {
            return Err(invalid("bits", "must be positive"));
        }
        let words = bits.div_ceil(64);
        if words > i32::MAX as u64 {
            return Err(invalid(
                "bits",
                "Spark's bit array holds at most 2^31 - 1 words",
            ));
        }
        if num_hashes == 0 || num_hashes > MAX_HASHES {
            return Err(invalid("num_hashes", "must be from 1 to 65,536"));
        }
        if version == SparkVersion::V1 && seed != 0 {
            return Err(invalid("seed", "version 1 filters have no seed (0)"));
        }
        let words = zeroed_words(words as usize)?;
        Ok(Self {
            version,
            num_hashes,
            seed,
            words,
        })
    }

    /// Reads the bytes Spark's `writeTo` writes (either version).
    ///
    /// # Errors
    /// [`Error::Format`]: [`FormatError::Truncated`] for input that ends
    /// inside a field or the words, [`FormatError::SizeMismatch`] for
    /// bytes after the words, [`FormatError::OutOfRange`] naming
    /// `version` (not 1 or 2), `numHashFunctions` (not 1 to
    /// [`MAX_HASHES`]) or `numWords` (not positive). Nothing is allocated
    /// before the input's length is checked against the words it claims.
    pub fn from_spark_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut at = 0;
        let mut int = |field: &'static str| -> Result<i32, Error> {
            let got = bytes.len().saturating_sub(at);
            let b = bytes.get(at..at + 4).ok_or(FormatError::Truncated {
                field,
                needed: 4,
                got: got as u64,
            })?;
            at += 4;
            Ok(i32::from_be_bytes(b.try_into().expect("4 bytes")))
        };
        let version = match int("version")? {
            1 => SparkVersion::V1,
            2 => SparkVersion::V2,
            v => {
                return Err(out_of_range(
                    "version",
                    format!("{v}: Spark's Bloom filter versions are 1 and 2"),
                ));
            }
        };
        let k = int("numHashFunctions")?;
        let seed = match version {
            SparkVersion::V1 => 0,
            SparkVersion::V2 => int("seed")?,
        };
        let num_words = int("numWords")?;
        let num_hashes = u32::try_from(k)
            .ok()
            .filter(|&k| (1..=MAX_HASHES).contains(&k))
            .ok_or_else(|| {
                out_of_range("numHashFunctions", format!("{k}: must be from 1 to 65,536"))
            })?;
        if num_words <= 0 {
            return Err(out_of_range(
                "numWords",
                format!("{num_words}: must be positive"),
            ));
        }
        let header = at;
        let words_len = num_words as u64 * 8;
        let got = (bytes.len() - header) as u64;
        if got < words_len {
            return Err(FormatError::Truncated {
                field: "words",
                needed: words_len,
                got,
            }
            .into());
        }
        if got > words_len {
            return Err(FormatError::SizeMismatch {
                field: "input length",
                expected: header as u64 + words_len,
                found: bytes.len() as u64,
            }
            .into());
        }
        let words = bytes[header..]
            .as_chunks::<8>()
            .0
            .iter()
            .map(|w| u64::from_be_bytes(*w))
            .collect();
        Ok(Self {
            version,
            num_hashes,
            seed,
            words,
        })
    }

    /// The bytes Spark's `writeTo` writes for this filter (its
    /// `BloomFilter.readFrom` reads them).
    pub fn to_spark_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.words.len() * 8);
        out.extend_from_slice(&self.version.number().to_be_bytes());
        out.extend_from_slice(&(self.num_hashes as i32).to_be_bytes());
        if self.version == SparkVersion::V2 {
            out.extend_from_slice(&self.seed.to_be_bytes());
        }
        out.extend_from_slice(&(self.words.len() as i32).to_be_bytes());
        for w in &self.words {
            out.extend_from_slice(&w.to_be_bytes());
        }
        out
    }

    /// The format version.
    pub fn version(&self) -> SparkVersion {
        self.version
    }

    /// The number of hash functions, k.
    pub fn num_hashes(&self) -> u32 {
        self.num_hashes
    }

    /// The seed (0 for version 1).
    pub fn seed(&self) -> i32 {
        self.seed
    }

    /// The number of bits, `64 · numWords` (Spark's `bitSize`).
    pub fn num_bits(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    /// How many bits are set (Spark's `cardinality`).
    pub fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// Spark's `expectedFpp`: the fill to the power k, the rate a query of
    /// a key not inserted sees (for version 1 above 2^31 bits, the fill of
    /// the bits its indexes can reach: the rest stay zero).
    pub fn fill_fpr(&self) -> f64 {
        (self.count_ones() as f64 / self.reachable_bits() as f64).powi(self.num_hashes as i32)
    }

    /// The bits a key's indexes can reach: all of them for version 2; for
    /// version 1 at most 2^31 (its indexes are non-negative 32-bit ints).
    pub fn reachable_bits(&self) -> u64 {
        match self.version {
            SparkVersion::V1 => self.num_bits().min(1 << 31),
            SparkVersion::V2 => self.num_bits(),
        }
    }

    /// The false-positive rate after `n` distinct keys: `(1 − (1 −
    /// 1/m')^{kn})^k` with `m'` the [reachable bits](Self::reachable_bits),
    /// the rate of k indexes drawn uniformly and independently over them.
    /// Spark's indexes are double hashing's (`h1 + i·h2`), which the
    /// two-hash analysis shows loses nothing against independent indexes
    /// as m grows; for version 1 above 2^31 bits, `m'` is what makes the
    /// rate worse than the size promises (2^31, not m).
    pub fn expected_fpr(&self, n: u64) -> f64 {
        let m = self.reachable_bits() as f64;
        let k = f64::from(self.num_hashes);
        // (1 - 1/m)^(kn) as exp(kn · ln(1 - 1/m)), accurate for large m.
        let zero = (k * n as f64 * (-1.0 / m).ln_1p()).exp();
        (1.0 - zero).powf(k)
    }

    /// The k bit indexes of a key whose two hashes are `h1`, `h2`, in
    /// Spark's order, to `f` (which returns whether to go on).
    #[inline(always)]
    fn for_each_index(&self, h1: i32, h2: i32, f: impl FnMut(u64) -> bool) {
        for_each_index(self.version, self.num_hashes, self.num_bits(), h1, h2, f);
    }

    #[inline(always)]
    fn hashes_long(&self, key: i64) -> (i32, i32) {
        hashes_long(key, self.seed)
    }

    #[inline(always)]
    fn hashes_bytes(&self, key: &[u8]) -> (i32, i32) {
        hashes_bytes(key, self.seed)
    }

    #[inline(always)]
    fn set(&mut self, (h1, h2): (i32, i32)) {
        let (version, k, bits) = (self.version, self.num_hashes, self.num_bits());
        let words = &mut self.words;
        for_each_index(version, k, bits, h1, h2, |i| {
            words[(i / 64) as usize] |= 1 << (i % 64);
            true
        });
    }

    #[inline(always)]
    fn test(&self, (h1, h2): (i32, i32)) -> bool {
        let mut all = true;
        self.for_each_index(h1, h2, |i| {
            all = self.words[(i / 64) as usize] >> (i % 64) & 1 == 1;
            all
        });
        all
    }

    /// Spark's `putLong` (and `put` of a byte, short, int or long).
    pub fn insert_long(&mut self, key: i64) {
        self.set(self.hashes_long(key));
    }

    /// Spark's `mightContainLong` (and `mightContain` of an integral).
    pub fn contains_long(&self, key: i64) -> bool {
        self.test(self.hashes_long(key))
    }

    /// Spark's `putBinary`.
    pub fn insert_bytes(&mut self, key: &[u8]) {
        self.set(self.hashes_bytes(key));
    }

    /// Spark's `mightContainBinary`.
    pub fn contains_bytes(&self, key: &[u8]) -> bool {
        self.test(self.hashes_bytes(key))
    }

    /// Spark's `putString`: the UTF-8 bytes.
    pub fn insert_str(&mut self, key: &str) {
        self.insert_bytes(key.as_bytes());
    }

    /// Spark's `mightContainString`.
    pub fn contains_str(&self, key: &str) -> bool {
        self.contains_bytes(key.as_bytes())
    }

    /// Inserts every key of `keys` (as [`insert_long`](Self::insert_long)),
    /// a chunk's indexes computed and their cache lines prefetched before
    /// the chunk before it sets its bits.
    pub fn insert_longs(&mut self, keys: &[i64]) {
        let seed = self.seed;
        self.insert_batch(keys.len(), |i| hashes_long(keys[i], seed));
    }

    /// Inserts every key of `keys` (as [`insert_bytes`](Self::insert_bytes)),
    /// as [`insert_longs`](Self::insert_longs) does.
    pub fn insert_bytes_batch<B: AsRef<[u8]>>(&mut self, keys: &[B]) {
        let seed = self.seed;
        self.insert_batch(keys.len(), |i| hashes_bytes(keys[i].as_ref(), seed));
    }

    /// Whether each key of `keys` may be in the set, into `out`: a chunk's
    /// indexes are computed and their cache lines prefetched while the
    /// chunk before it is tested.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] naming `out` unless it is as long as
    /// `keys`.
    pub fn contains_longs(&self, keys: &[i64], out: &mut [bool]) -> Result<(), Error> {
        Error::check_len("out", keys.len(), out.len())?;
        self.test_batch(|i| self.hashes_long(keys[i]), out);
        Ok(())
    }

    /// [`contains_longs`](Self::contains_longs) for byte-string keys (as
    /// [`contains_bytes`](Self::contains_bytes)).
    ///
    /// # Errors
    /// As [`contains_longs`](Self::contains_longs).
    pub fn contains_bytes_batch<B: AsRef<[u8]>>(
        &self,
        keys: &[B],
        out: &mut [bool],
    ) -> Result<(), Error> {
        Error::check_len("out", keys.len(), out.len())?;
        self.test_batch(|i| self.hashes_bytes(keys[i].as_ref()), out);
        Ok(())
    }

    /// [`contains_longs`](Self::contains_longs) on rayon's thread pool,
    /// in tasks of 16,384 keys.
    ///
    /// # Errors
    /// As [`contains_longs`](Self::contains_longs).
    #[cfg(feature = "rayon")]
    pub fn par_contains_longs(&self, keys: &[i64], out: &mut [bool]) -> Result<(), Error> {
        use rayon::prelude::*;
        Error::check_len("out", keys.len(), out.len())?;
        out.par_chunks_mut(PAR_TASK)
            .zip(keys.par_chunks(PAR_TASK))
            .for_each(|(out, keys)| self.test_batch(|i| self.hashes_long(keys[i]), out));
        Ok(())
    }

    /// [`contains_bytes_batch`](Self::contains_bytes_batch) over keys
    /// handed out by `key(i, f)` (calls `f` with key i's bytes): the Arrow
    /// arrays' path.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    pub(crate) fn test_batch_with(
        &self,
        out: &mut [bool],
        key: impl Fn(usize, &mut dyn FnMut(&[u8])),
    ) {
        let seed = self.seed;
        self.test_batch(
            |i| {
                let mut h = (0, 0);
                key(i, &mut |b| h = hashes_bytes(b, seed));
                h
            },
            out,
        );
    }

    /// [`insert_bytes_batch`](Self::insert_bytes_batch) over keys handed
    /// out as [`test_batch_with`](Self::test_batch_with)'s.
    #[cfg_attr(not(feature = "arrow"), allow(dead_code))]
    pub(crate) fn insert_batch_with(
        &mut self,
        n: usize,
        key: impl Fn(usize, &mut dyn FnMut(&[u8])),
    ) {
        let seed = self.seed;
        self.insert_batch(n, |i| {
            let mut h = (0, 0);
            key(i, &mut |b| h = hashes_bytes(b, seed));
            h
        });
    }

    /// Whether to prefetch (a filter beyond a core's L2) and pipeline (k
    /// small enough for a chunk's indexes to sit on the stack).
    fn pipelined(&self) -> bool {
        self.words.len() * 8 > crate::Prefetch::AUTO_MIN_BYTES
            && self.num_hashes as usize <= MAX_PIPELINED_K
    }

    /// The answers for keys `0..out.len()` whose hashes `hashes` gives.
    #[inline(always)]
    fn test_batch(&self, hashes: impl Fn(usize) -> (i32, i32), out: &mut [bool]) {
        if !self.pipelined() {
            for (i, o) in out.iter_mut().enumerate() {
                *o = self.test(hashes(i));
            }
            return;
        }
        let k = self.num_hashes as usize;
        let (bits, version) = (self.num_bits(), self.version);
        let mut bufs = [[0u64; CHUNK * MAX_PIPELINED_K]; 2];
        // Chunk c's indexes into bufs[c % 2], prefetched; then chunk c - 1
        // tested from the other buffer.
        let fill = |buf: &mut [u64], start: usize, len: usize| {
            for j in 0..len {
                let (h1, h2) = hashes(start + j);
                let at = &mut buf[j * k..(j + 1) * k];
                let mut n = 0;
                for_each_index(version, k as u32, bits, h1, h2, |i| {
                    at[n] = i;
                    n += 1;
                    crate::util::prefetch::prefetch(&self.words, (i / 64) as usize);
                    true
                });
            }
        };
        let chunks = out.len().div_ceil(CHUNK);
        for c in 0..=chunks {
            if c < chunks {
                let start = c * CHUNK;
                fill(&mut bufs[c % 2], start, CHUNK.min(out.len() - start));
            }
            if c > 0 {
                let start = (c - 1) * CHUNK;
                let len = CHUNK.min(out.len() - start);
                let buf = &bufs[(c - 1) % 2];
                for (j, o) in out[start..start + len].iter_mut().enumerate() {
                    let mut all = 1;
                    for &i in &buf[j * k..(j + 1) * k] {
                        all &= self.words[(i / 64) as usize] >> (i % 64);
                    }
                    *o = all & 1 == 1;
                }
            }
        }
    }

    /// Inserts keys `0..n` whose hashes `hashes` gives: per chunk, the
    /// indexes computed (their lines prefetched), then the bits set.
    fn insert_batch(&mut self, n: usize, hashes: impl Fn(usize) -> (i32, i32)) {
        if !self.pipelined() {
            for i in 0..n {
                self.set(hashes(i));
            }
            return;
        }
        let k = self.num_hashes as usize;
        let (bits, version) = (self.num_bits(), self.version);
        let mut buf = [0u64; CHUNK * MAX_PIPELINED_K];
        for start in (0..n).step_by(CHUNK) {
            let len = CHUNK.min(n - start);
            let mut at = 0;
            for j in 0..len {
                let (h1, h2) = hashes(start + j);
                for_each_index(version, k as u32, bits, h1, h2, |i| {
                    buf[at] = i;
                    at += 1;
                    crate::util::prefetch::prefetch(&self.words, (i / 64) as usize);
                    true
                });
            }
            for &i in &buf[..at] {
                self.words[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
    }

    fn check_compatible(&self, other: &Self) -> Result<(), Error> {
        let differ = |parameter, left: String, right: String| {
            Err(Error::Incompatible {
                parameter,
                left,
                right,
            })
        };
        if self.version != other.version {
            return differ(
                "version",
                format!("{:?}", self.version),
                format!("{:?}", other.version),
            );
        }
        if self.num_bits() != other.num_bits() {
            return differ(
                "bits",
                self.num_bits().to_string(),
                other.num_bits().to_string(),
            );
        }
        if self.num_hashes != other.num_hashes {
            return differ(
                "k",
                self.num_hashes.to_string(),
                other.num_hashes.to_string(),
            );
        }
        if self.seed != other.seed {
            return differ("seed", self.seed.to_string(), other.seed.to_string());
        }
        Ok(())
    }

    /// Adds every key of `other` (Spark's `mergeInPlace`: OR).
    ///
    /// # Errors
    /// [`Error::Incompatible`] naming the first of version, bits, k and
    /// seed that differs; `self` is then unchanged.
    pub fn union(&mut self, other: &Self) -> Result<(), Error> {
        self.check_compatible(other)?;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
        Ok(())
    }

    /// Keeps the bits set in both (Spark's `intersectInPlace`: AND).
    ///
    /// # Errors
    /// As [`union`](Self::union).
    pub fn intersect(&mut self, other: &Self) -> Result<(), Error> {
        self.check_compatible(other)?;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
        Ok(())
    }
}

/// A long key's `(h1, h2)`.
#[inline(always)]
fn hashes_long(key: i64, seed: i32) -> (i32, i32) {
    let h1 = murmur3::hash_long(key, seed);
    (h1, murmur3::hash_long(key, h1))
}

/// A byte-string key's `(h1, h2)`.
#[inline(always)]
fn hashes_bytes(key: &[u8], seed: i32) -> (i32, i32) {
    let h1 = murmur3::hash_bytes(key, seed);
    (h1, murmur3::hash_bytes(key, h1))
}

/// The k bit indexes of a key whose two hashes are `h1`, `h2` in a filter
/// of `bits` bits, in Spark's order, to `f` (which returns whether to go
/// on).
#[inline(always)]
fn for_each_index(
    version: SparkVersion,
    k: u32,
    bits: u64,
    h1: i32,
    h2: i32,
    mut f: impl FnMut(u64) -> bool,
) {
    match version {
        SparkVersion::V1 => {
            for i in 1..=k as i32 {
                let mut c = h1.wrapping_add(i.wrapping_mul(h2));
                if c < 0 {
                    c = !c;
                }
                if !f(c as u64 % bits) {
                    return;
                }
            }
        }
        SparkVersion::V2 => {
            let mut c = i64::from(h1) * i64::from(i32::MAX);
            for _ in 0..k {
                c = c.wrapping_add(i64::from(h2));
                // The index is complemented, not the accumulator.
                let index = if c < 0 { !c } else { c };
                if !f(index as u64 % bits) {
                    return;
                }
            }
        }
    }
}

fn invalid(name: &'static str, reason: &str) -> Error {
    Error::invalid(name, reason)
}

/// `n` zero words (zeroed by the allocator: pages are touched only when
/// written), or [`Error::Allocation`] if memory cannot hold them.
fn zeroed_words(n: usize) -> Result<Vec<u64>, Error> {
    bytemuck::allocation::try_zeroed_vec(n).map_err(|()| Error::Allocation {
        name: "bits",
        bytes: n as u128 * 8,
    })
}

fn out_of_range(field: &'static str, reason: String) -> Error {
    FormatError::OutOfRange { field, reason }.into()
}
