//! Parquet's split-block Bloom filter (SBBF), bit for bit.
//!
//! Parquet column chunks may carry a Bloom filter in the format's
//! [split-block layout](https://github.com/apache/parquet-format/blob/master/BloomFilter.md).
//! [`ParquetFilter`] is that filter exactly, so a bitset read from a
//! Parquet file can be queried by lesshash, and one built by lesshash can be
//! written into a Parquet file:
//!
//! * the bitset is `z` blocks of 256 bits, each block 8 little-endian `u32`
//!   words;
//! * a value is hashed once, with XXH64 (seed 0) over its *plain encoding*
//!   ([`PlainValue`]: integers and floats little-endian, byte arrays and
//!   strings as their bytes without a length prefix);
//! * the block is `((h >> 32) * z) >> 32` (multiply-shift of the upper 32
//!   bits), and the low 32 bits `x = h as u32` set one bit in each word:
//!   bit `(x * SALT[i]) >> 27` of word `i`, with the spec's eight odd salts.
//!
//! This is Kirsch and Mitzenmacher's idea in another form: one hash, eight
//! probes derived by multiplications. It is not
//! [`Layout::SplitBlock`](crate::Layout::SplitBlock), whose 512-bit block
//! has k segments (k from 1 to 64) addressed from XXH3-128's h2. The type is separate from
//! [`BloomFilter`](crate::BloomFilter) because its hash (XXH64, seed 0) and
//! its key encoding are fixed by the Parquet format, not by lesshash.
//!
//! ```
//! use lesshash::parquet::ParquetFilter;
//!
//! // Sized by the exact split-block formula (not Parquet's rule, which
//! // misses its target: see `with_ndv_fpp`).
//! let mut sbbf = ParquetFilter::with_fpr(10_000, 0.01)?;
//! sbbf.insert("alice");
//! sbbf.insert(&42i64);
//! assert!(sbbf.contains("alice") && sbbf.contains(&42i64));
//!
//! // The bitset a Parquet writer stores after the BloomFilterHeader.
//! let bytes = sbbf.to_parquet_bitset();
//! let back = ParquetFilter::from_parquet_bitset(&bytes)?;
//! assert_eq!(back, sbbf);
//! # Ok::<(), lesshash::Error>(())
//! ```
//!
//! In a Parquet file the bitset follows a Thrift compact `BloomFilterHeader`
//! at the column chunk's `bloom_filter_offset`:
//! [`to_parquet_bytes`](ParquetFilter::to_parquet_bytes) and
//! [`from_parquet_bytes`](ParquetFilter::from_parquet_bytes) write and
//! read both ([`parquet_header`], [`parse_parquet_header`]). The
//! differential test against the `parquet` crate is `tests/parquet.rs`.
//!
//! The scalar `mask` is the oracle; the batch paths compute the same masks
//! eight lanes at a time with `wide::u32x8` and are tested against it.

#![forbid(unsafe_code)]

pub(crate) mod thrift;

use crate::FormatError;
use thrift::{parquet_header, parse_parquet_header};

use std::io::Write;

use wide::u32x8;
use xxhash_rust::xxh64::xxh64;

use crate::Error;

/// The eight salts of the Parquet specification, one per word of a block.
pub(crate) const SALT: [u32; 8] = crate::util::salts::PARQUET;

/// Bytes per block (256 bits).
pub(crate) const BLOCK_BYTES: usize = 32;

/// Parquet writers' smallest bitset, in bytes.
pub const PARQUET_MIN_BYTES: usize = 32;

/// Parquet writers' largest bitset, in bytes (128 MiB).
pub const PARQUET_MAX_BYTES: usize = 128 * 1024 * 1024;

/// The largest number of blocks: the block index is a 32x32-bit
/// multiply-shift, so more than 2^32 blocks could never be reached.
pub(crate) const MAX_BLOCKS: u64 = 1 << 32;

/// One 256-bit block: 8 words of 32 bits, aligned so that a block never
/// straddles a cache line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C, align(32))]
struct SbbfBlock([u32; 8]);

/// A value in Parquet's plain encoding, as the Bloom filter hashes it.
///
/// A second key trait beside [`crate::Key`] on purpose: Parquet fixes the
/// bytes of each physical type (`bool` one byte, floats by their bits, an
/// `i32` column four bytes whatever Rust type holds it), and a Parquet
/// reader must hash exactly those to find a value; lesshash's own `Key`
/// encoding is free to differ (it hashes `usize` as u64, for example), and
/// the two must be able to evolve apart without one breaking the other's
/// files.
///
/// Implemented for the types that map to Parquet's physical types:
/// `i32`/`u32` (INT32), `i64`/`u64` (INT64), `f32` (FLOAT), `f64` (DOUBLE),
/// all as little-endian bytes; `bool` as one byte; `[u8]`, `str`, `Vec<u8>`,
/// `String` and `[u8; N]` (BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY) as their bytes
/// without a length prefix. Floats hash their bits, so `0.0` and `-0.0` are
/// different values, as in Parquet.
pub trait PlainValue {
    /// Calls `f` with the value's plain-encoded bytes.
    fn with_plain_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R;
}

macro_rules! plain_le {
    ($($t:ty),*) => {$(
        impl PlainValue for $t {
            #[inline]
            fn with_plain_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
                f(&self.to_le_bytes())
            }
        }
    )*};
}
plain_le!(i32, u32, i64, u64, f32, f64);

impl PlainValue for bool {
    #[inline]
    fn with_plain_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(&[u8::from(*self)])
    }
}

impl PlainValue for [u8] {
    #[inline]
    fn with_plain_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl<const N: usize> PlainValue for [u8; N] {
    #[inline]
    fn with_plain_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl PlainValue for Vec<u8> {
    #[inline]
    fn with_plain_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self)
    }
}

impl PlainValue for str {
    #[inline]
    fn with_plain_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl PlainValue for String {
    #[inline]
    fn with_plain_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
}

impl<T: PlainValue + ?Sized> PlainValue for &T {
    #[inline]
    fn with_plain_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        (**self).with_plain_bytes(f)
    }
}

/// The Parquet Bloom filter hash of a value: XXH64 with seed 0 over its
/// plain encoding.
#[inline]
pub fn hash<V: PlainValue + ?Sized>(value: &V) -> u64 {
    value.with_plain_bytes(|bytes| xxh64(bytes, 0))
}

/// The block a hash selects among `num_blocks`: `((h >> 32) * z) >> 32`.
#[inline]
pub(crate) fn block_index(hash: u64, num_blocks: u64) -> u64 {
    ((hash >> 32) * num_blocks) >> 32
}

/// The oracle: the 8 one-bit words a hash's low 32 bits set in its block
/// (`1 << ((x * SALT[i]) >> 27)` in word i).
#[inline]
pub(crate) fn mask(hash: u64) -> [u32; 8] {
    let x = hash as u32;
    SALT.map(|salt| 1u32 << (x.wrapping_mul(salt) >> 27))
}

/// [`mask`] on eight lanes at once.
#[inline(always)]
fn mask_simd(hash: u64) -> u32x8 {
    let y = (u32x8::splat(hash as u32) * u32x8::from(SALT)) >> 27u32;
    u32x8::splat(1) << y
}

/// The exact false-positive rate of a split-block filter of `num_blocks`
/// blocks holding `n` distinct values under ideal hashing: with `i` values in
/// the queried block, each word has `i` uniform bits set, so a query matches
/// with `(1 - (31/32)^i)^8`, averaged over the Poisson(n/z) block loads
/// (Putze, Sanders and Singler 2009).
pub fn sbbf_fpr(num_blocks: u64, n: u64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    if num_blocks == 0 {
        return 1.0;
    }
    let lambda = n as f64 / num_blocks as f64;
    if lambda > 20_000.0 {
        // Every block holds thousands of values: all bits are set.
        return 1.0;
    }
    let q = (31.0f64 / 32.0).ln();
    let last = (lambda + 20.0 * lambda.sqrt() + 60.0).ceil() as u64;
    let (mut ln_p, ln_lambda) = (-lambda, lambda.ln());
    let mut sum = 0.0;
    for i in 0..=last {
        if i > 0 {
            ln_p += ln_lambda - (i as f64).ln();
        }
        let word = -(q * i as f64).exp_m1(); // 1 - (31/32)^i
        sum += ln_p.exp() * word.powi(8);
    }
    sum.min(1.0)
}

/// Parquet's sizing rule (parquet-rs, parquet-mr): `-8 n / ln(1 - p^(1/8))`
/// bits, in bytes rounded up to a power of two within
/// [[`PARQUET_MIN_BYTES`], [`PARQUET_MAX_BYTES`]].
pub fn parquet_num_bytes(ndv: u64, fpp: f64) -> usize {
    let bits = -8.0 * ndv as f64 / (1.0 - fpp.powf(1.0 / 8.0)).ln();
    parquet_round_bytes((bits as usize) / 8)
}

/// Rounds a byte count as Parquet writers do: clamp to
/// [[`PARQUET_MIN_BYTES`], [`PARQUET_MAX_BYTES`]], then the next power of two.
pub(crate) fn parquet_round_bytes(num_bytes: usize) -> usize {
    num_bytes
        .clamp(PARQUET_MIN_BYTES, PARQUET_MAX_BYTES)
        .next_power_of_two()
}

/// The old name of [`ParquetFilter`], kept so that code written against
/// it still builds; renamed because it read as
/// `lesshash::Layout::SplitBlock`, lesshash's own layout.
#[deprecated(note = "renamed `lesshash::parquet::ParquetFilter`")]
pub type SplitBlockFilter = ParquetFilter;

/// A Parquet split-block Bloom filter (see the [module docs](self)), named
/// for its format: the Bloom filters Parquet writers store beside a column
/// chunk. Not [`Layout::SplitBlock`](crate::Layout::SplitBlock), lesshash's
/// own split-block layout (512-bit blocks, any k, two-hash addressing).
///
/// Equality compares the bits.
#[derive(Clone, PartialEq, Eq)]
pub struct ParquetFilter {
    blocks: Vec<SbbfBlock>,
}

impl ParquetFilter {
    /// An empty filter of `num_blocks` blocks (any count from 1 to
    /// 2^32; Parquet writers use powers of two).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (`num_blocks`) out of range;
    /// [`Error::Allocation`] if the memory is not available.
    pub fn new(num_blocks: u64) -> Result<Self, Error> {
        if num_blocks == 0 || num_blocks > MAX_BLOCKS {
            return Err(Error::invalid(
                "num_blocks",
                format!("must be between 1 and {MAX_BLOCKS}, got {num_blocks}"),
            ));
        }
        let too_big = || Error::Allocation {
            name: "num_blocks",
            bytes: u128::from(num_blocks) * BLOCK_BYTES as u128,
        };
        let len = usize::try_from(num_blocks).map_err(|_| too_big())?;
        let mut blocks = Vec::new();
        blocks.try_reserve_exact(len).map_err(|_| too_big())?;
        blocks.resize(len, SbbfBlock::default());
        Ok(Self { blocks })
    }

    /// An empty filter sized as a Parquet writer sizes it for `ndv` distinct
    /// values at false-positive probability `fpp` ([`parquet_num_bytes`]).
    ///
    /// The rule is the classic filter's formula applied to a blocked filter,
    /// so it misses its target unless the power-of-two rounding happens to
    /// add enough (sbbf-rs-safe, sized by this rule, measures 1.266% at a 1%
    /// target: docs/benchmarks.md, "lesshash against other Rust Bloom
    /// filters"). Use it to match what Parquet writers produce; use
    /// [`with_fpr`](Self::with_fpr) to meet a rate.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (`fpp`) unless `0 < fpp < 1`.
    pub fn with_ndv_fpp(ndv: u64, fpp: f64) -> Result<Self, Error> {
        crate::util::limits::check_probability("fpp", fpp)?;
        Self::new((parquet_num_bytes(ndv, fpp) / BLOCK_BYTES) as u64)
    }

    /// An empty filter with the fewest blocks whose exact rate
    /// ([`sbbf_fpr`]) after `n` distinct values is at most `fpr`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (`fpr`) unless `0 < fpr < 1`, or if the
    /// rate needs more than 2^32 blocks.
    pub fn with_fpr(n: u64, fpr: f64) -> Result<Self, Error> {
        crate::util::limits::check_probability("fpr", fpr)?;
        Self::new(blocks_for(n, fpr)?)
    }

    /// A filter over a Parquet bitset: the bytes after a column chunk's
    /// `BloomFilterHeader` (little-endian words, 32 bytes per block).
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (`bitset`) if the length is zero or not a
    /// multiple of 32 bytes, or above 2^32 blocks.
    pub fn from_parquet_bitset(bitset: &[u8]) -> Result<Self, Error> {
        if bitset.is_empty() || !bitset.len().is_multiple_of(BLOCK_BYTES) {
            return Err(Error::invalid(
                "bitset",
                format!(
                    "a split-block bitset is a non-zero multiple of {BLOCK_BYTES} bytes, got {} bytes",
                    bitset.len()
                ),
            ));
        }
        let mut filter = Self::new((bitset.len() / BLOCK_BYTES) as u64).map_err(|e| match e {
            Error::InvalidParameter { reason, .. } => Error::invalid("bitset", reason),
            other => other,
        })?;
        for (block, bytes) in filter
            .blocks
            .iter_mut()
            .zip(bitset.chunks_exact(BLOCK_BYTES))
        {
            for (word, b) in block.0.iter_mut().zip(bytes.chunks_exact(4)) {
                *word = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        Ok(filter)
    }

    /// The bitset as a Parquet writer stores it after the
    /// `BloomFilterHeader` (whose `numBytes` is [`num_bytes`](Self::num_bytes)).
    pub fn to_parquet_bitset(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.num_bytes());
        for block in &self.blocks {
            for word in block.0 {
                out.extend_from_slice(&word.to_le_bytes());
            }
        }
        out
    }

    /// A filter from a Bloom filter as a Parquet file stores it: the
    /// Thrift `BloomFilterHeader` followed by exactly `numBytes` bytes of
    /// bitset (what parquet-rs's `Sbbf::write` produces and its
    /// `Sbbf::from_bytes` reads).
    ///
    /// # Errors
    /// As [`parse_parquet_header`]; [`FormatError::Truncated`] (`bitset`) if the
    /// input is shorter than the header says; [`FormatError::SizeMismatch`]
    /// (`input length`) if it is longer.
    pub fn from_parquet_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let header = parse_parquet_header(bytes)?;
        let end = header.header_len as u64 + header.num_bytes as u64;
        if (bytes.len() as u64) < end {
            return Err(Error::Format(FormatError::Truncated {
                field: "bitset",
                needed: end,
                got: bytes.len() as u64,
            }));
        }
        if bytes.len() as u64 > end {
            return Err(Error::Format(FormatError::SizeMismatch {
                field: "input length",
                expected: end,
                found: bytes.len() as u64,
            }));
        }
        Self::from_parquet_bitset(&bytes[header.header_len..])
    }

    /// The length of the stored filter (its header and bitset) that
    /// `bytes` starts with, read from the header, which must be whole in
    /// `bytes` (a header is under 32 bytes): how much to read at a column
    /// chunk's `bloom_filter_offset` where the file does not record
    /// `bloom_filter_length` (writers before Parquet 2.10).
    ///
    /// # Errors
    /// As [`from_parquet_bytes`](Self::from_parquet_bytes)'s header.
    pub fn stored_len(bytes: &[u8]) -> Result<usize, Error> {
        let header = parse_parquet_header(bytes)?;
        Ok(header.header_len + header.num_bytes)
    }

    /// The Thrift `BloomFilterHeader` and the bitset, as a Parquet writer
    /// stores them at a column chunk's `bloom_filter_offset`.
    ///
    /// # Errors
    /// [`Error::InvalidParameter`] (`num_bytes`) if the bitset is 2 GiB or
    /// more, beyond what the header's `i32` can say.
    pub fn to_parquet_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut out = parquet_header(self.num_bytes())?;
        out.reserve_exact(self.num_bytes());
        out.extend(self.to_parquet_bitset());
        Ok(out)
    }

    /// Writes [`to_parquet_bitset`](Self::to_parquet_bitset)'s bytes to `w`
    /// in chunks, without building them whole.
    ///
    /// # Errors
    /// [`Error::Io`] if the writer fails.
    pub fn write_parquet_bitset<W: Write>(&self, mut w: W) -> Result<(), Error> {
        let mut buf = Vec::with_capacity(64 * 1024);
        for chunk in self.blocks.chunks(2048) {
            buf.clear();
            for block in chunk {
                for word in block.0 {
                    buf.extend_from_slice(&word.to_le_bytes());
                }
            }
            w.write_all(&buf).map_err(|source| Error::Io {
                context: "writing the parquet bitset",
                source,
            })?;
        }
        Ok(())
    }

    /// The number of 256-bit blocks.
    pub fn num_blocks(&self) -> u64 {
        self.blocks.len() as u64
    }

    /// The bitset's size in bytes.
    pub fn num_bytes(&self) -> usize {
        self.blocks.len() * BLOCK_BYTES
    }

    /// Inserts a value (by its plain encoding).
    #[inline]
    pub fn insert<V: PlainValue + ?Sized>(&mut self, value: &V) {
        self.insert_hash(hash(value));
    }

    /// Whether a value is possibly in the set (`false`: certainly not).
    #[inline]
    pub fn contains<V: PlainValue + ?Sized>(&self, value: &V) -> bool {
        self.contains_hash(hash(value))
    }

    /// Inserts a value given by its [`hash`]. This is the scalar oracle of
    /// every insert path.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        let i = block_index(hash, self.num_blocks()) as usize;
        let block = &mut self.blocks[i].0;
        for (word, bit) in block.iter_mut().zip(mask(hash)) {
            *word |= bit;
        }
    }

    /// Whether a value given by its [`hash`] is possibly in the set. This is
    /// the scalar oracle of every query path.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        let i = block_index(hash, self.num_blocks()) as usize;
        let block = &self.blocks[i].0;
        block
            .iter()
            .zip(mask(hash))
            .all(|(word, bit)| word & bit != 0)
    }

    /// Inserts every value of `values` (the SIMD mask path).
    pub fn insert_batch<V: PlainValue>(&mut self, values: &[V]) {
        let z = self.num_blocks();
        for v in values {
            let h = hash(v);
            let block = &mut self.blocks[block_index(h, z) as usize];
            block.0 = (u32x8::from(block.0) | mask_simd(h)).to_array();
        }
    }

    /// Writes into `out[i]` whether `values[i]` is possibly in the set (the
    /// SIMD mask path: the eight words of a block are tested at once).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] (`out`) if the lengths differ.
    pub fn contains_batch<V: PlainValue>(
        &self,
        values: &[V],
        out: &mut [bool],
    ) -> Result<(), Error> {
        Error::check_len("out", values.len(), out.len())?;
        for (v, slot) in values.iter().zip(out) {
            *slot = self.contains_hash_simd(hash(v));
        }
        Ok(())
    }

    /// Writes into `out[i]` whether the value hashed to `hashes[i]` is
    /// possibly in the set (SIMD mask path).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] (`out`) if the lengths differ.
    pub fn contains_hash_batch(&self, hashes: &[u64], out: &mut [bool]) -> Result<(), Error> {
        Error::check_len("out", hashes.len(), out.len())?;
        for (&h, slot) in hashes.iter().zip(out) {
            *slot = self.contains_hash_simd(h);
        }
        Ok(())
    }

    #[inline(always)]
    fn contains_hash_simd(&self, hash: u64) -> bool {
        let block = u32x8::from(self.blocks[block_index(hash, self.num_blocks()) as usize].0);
        let bits = mask_simd(hash);
        (block & bits).simd_eq(bits).all()
    }

    /// Adds every value of `other` (bitwise OR of the blocks).
    ///
    /// # Errors
    /// [`Error::Incompatible`] (`num_blocks`) if the sizes differ.
    pub fn union(&mut self, other: &ParquetFilter) -> Result<(), Error> {
        if self.blocks.len() != other.blocks.len() {
            return Err(Error::Incompatible {
                parameter: "num_blocks",
                left: self.blocks.len().to_string(),
                right: other.blocks.len().to_string(),
            });
        }
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            for (x, y) in a.0.iter_mut().zip(b.0) {
                *x |= y;
            }
        }
        Ok(())
    }

    /// The number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.blocks
            .iter()
            .flat_map(|b| b.0)
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }

    /// The fraction of bits set.
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / (self.num_blocks() as f64 * 256.0)
    }

    /// The false-positive rate of a query now: the mean over blocks of the
    /// product over the 8 words of (bits set / 32). Exact for a uniformly
    /// hashed query against these bits.
    pub fn expected_fpr(&self) -> f64 {
        let sum: f64 = self
            .blocks
            .iter()
            .map(|b| {
                b.0.iter()
                    .map(|w| f64::from(w.count_ones()) / 32.0)
                    .product::<f64>()
            })
            .sum();
        sum / self.num_blocks() as f64
    }
}

/// Shows the size and the fill, never the bits.
impl std::fmt::Debug for ParquetFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParquetFilter")
            .field("num_blocks", &self.num_blocks())
            .field("count_ones", &self.count_ones())
            .finish()
    }
}

/// The fewest blocks whose exact rate after `n` values is at most `p`.
fn blocks_for(n: u64, p: f64) -> Result<u64, Error> {
    if sbbf_fpr(MAX_BLOCKS, n) > p {
        return Err(Error::invalid(
            "fpr",
            format!(
                "a rate of {} for {n} values needs more than {MAX_BLOCKS} blocks",
                crate::util::limits::format_rate(p)
            ),
        ));
    }
    // The rate falls as blocks are added: binary search the first z that
    // meets p.
    let (mut lo, mut hi) = (1u64, MAX_BLOCKS);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if sbbf_fpr(mid, n) <= p {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Ok(lo)
}

#[cfg(test)]
mod tests;
