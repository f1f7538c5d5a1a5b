//! Arrow arrays in and out (feature `arrow`): insert an array's keys, query
//! an array and get a `BooleanArray` back, zero copy over Arrow's buffers
//! and at the batch pipeline's speed.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Array, Int64Array, StringArray};
//! use lesshash::BloomFilter;
//!
//! let mut filter = BloomFilter::with_fpr(1000, 0.01)?;
//! let users = Int64Array::from(vec![Some(7), None, Some(42)]);
//! let inserted = filter.insert_array(&users)?;
//! assert_eq!((inserted.inserted, inserted.nulls), (2, 1));
//!
//! let events = Int64Array::from(vec![Some(42), None, Some(7)]);
//! let found = filter.contains_array(&events)?;
//! assert!(found.value(0) && found.is_null(1) && found.value(2));
//!
//! // An Int32 7 is the same key as an Int64 7, a Python 7 and `7u64`:
//! assert!(filter.contains(&7u64));
//! // but text keys in an integer filter are refused, not answered "absent":
//! let names = StringArray::from(vec!["7"]);
//! assert!(filter.contains_array(&names).is_err());
//! # Ok::<(), lesshash::Error>(())
//! ```
//!
//! # The key encoding
//!
//! One table for every interface (Rust, Arrow, Python, the command line),
//! so that a key answers the same through each of them:
//!
//! | Arrow type | hashed as | [`KeyKind`] |
//! |---|---|---|
//! | Int8, Int16, Int32, Int64 | the value sign-extended to 64 bits, 8 little-endian bytes (= Rust `i64`) | `Int64` |
//! | UInt8, UInt16, UInt32, UInt64 | the value zero-extended to 64 bits, 8 little-endian bytes (= Rust `u64`) | `Int64` |
//! | Date32, Date64, Time32, Time64, Timestamp, Duration | microseconds ([`crate::temporal`]): a timestamp's since 1970-01-01 UTC (any time zone), a date's midnight's, a time's since midnight, a duration's; floored from nanoseconds, saturating from coarser units; as an `i64` above | `Int64` |
//! | Utf8, LargeUtf8, Utf8View | the UTF-8 bytes | `Text` |
//! | Binary, LargeBinary, BinaryView, FixedSizeBinary | the bytes | `Bytes` |
//! | Dictionary(any integer key, one of the above) | the value's encoding (each distinct value hashed once) | the value's |
//! | anything else (floats, booleans, decimals, nested types, Null) | refused: [`Error::UnsupportedKeyType`] naming the type | |
//!
//! So an Int32 7, an Int64 7, a UInt8 7, Rust's `7i64`/`7u64`, Python's
//! `7` and the command line's `--keys int` 7 are one key; `-1` and
//! `u64::MAX` share their bytes and so are one key too (as in Python). Text
//! and binary with the same bytes are one key. An integer and its decimal
//! text are different keys, which is why filters record a [`KeyKind`] and
//! queries check it. Rust's narrower integer [`Key`](crate::Key)s (`i32`,
//! `u16`, ...) hash their own width, not this table's: widen them to
//! `i64`/`u64` for keys shared with the other interfaces.
//!
//! # Nulls
//!
//! A null key answers null (`contains_array`: SQL's `x IN (...)` with
//! `x` null, and what a filter of rows keeps as "unknown"); the bitmap
//! forms answer false for it (a bitmap has no third value; the array's
//! validity says which). An insert skips null keys and counts them
//! ([`ArrayInsert::nulls`]). A dictionary key pointing at a null value is
//! a null key.
//!
//! # Parquet's filter
//!
//! [`ParquetFilter`](crate::parquet::ParquetFilter) hashes Parquet's
//! plain encoding of the column's physical type instead (Parquet's rule,
//! so that it answers filters read from Parquet files): 8- to 32-bit
//! integers, Date32 and Time32 as INT32 (4 bytes), 64-bit ones, Date64,
//! Time64, Timestamp and Duration as INT64 (8 bytes; a writer coercing
//! Date64 to INT32 days needs a Date32 array), Float32 and Float64 as
//! FLOAT and DOUBLE (their bits, little-endian: `0.0` and `-0.0` are two
//! values, as Parquet's writers hash them; lesshash's own encoding has no
//! float keys), strings and binary as their bytes.

#![forbid(unsafe_code)]

mod keys;

use arrow_array::{Array, BooleanArray};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer};

use crate::error::Error;
use crate::filter::BloomFilter;
use crate::filter::batch::{Plan, bitmap_words, contains_pipeline, insert_pipeline, set_answers};
use crate::filter::view::FilterView;
use crate::hash::{HashFamily, Secrets};
use crate::key_kind::KeyKind;
use keys::{ArrayKeys, Encoding, Hashing};

/// The kind of keys an array of `data_type` holds (the encoding table in
/// the [module docs](self)).
///
/// # Errors
/// [`Error::UnsupportedKeyType`] naming a type that has no key encoding.
pub fn key_kind_of(data_type: &arrow_schema::DataType) -> Result<KeyKind, Error> {
    keys::kind_of(data_type)
}

/// Appends to `out` the XXH3-128 hashes ([`HashFamily::Xxh3`]) under `seed` of the keys of
/// `array` that are not null, in order: the hashes
/// [`BloomFilter::insert_array`] inserts (and
/// [`hash_key`](crate::hash_key) gives each key), for callers that must
/// hold keys before a filter can be sized, or hand them to the pre-hashed
/// calls ([`Prehashed`](crate::Prehashed)).
///
/// # Errors
/// [`Error::UnsupportedKeyType`] for a type with no key encoding (`out`
/// is unchanged then).
pub fn hash_array(array: &dyn Array, seed: u64, out: &mut Vec<u128>) -> Result<ArrayInsert, Error> {
    hash_array_in(HashFamily::Xxh3, array, seed, out)
}

/// [`hash_array`] in `family`: the hashes a filter of that family and
/// seed inserts for the array's keys ([`HashFamily::hash_key`] of each).
///
/// # Errors
/// As [`hash_array`].
pub fn hash_array_in(
    family: HashFamily,
    array: &dyn Array,
    seed: u64,
    out: &mut Vec<u128>,
) -> Result<ArrayInsert, Error> {
    let secrets = Secrets::new(family, seed);
    let keys = ArrayKeys::new(array, Encoding::Lesshash, Hashing::Lesshash(&secrets))?;
    let start = out.len();
    let nulls = keys.null_count();
    let n = keys.len() - nulls;
    out.resize(start + n, 0);
    let dst = &mut out[start..];
    if nulls == 0 {
        keys.fill(&secrets, 0, dst);
    } else {
        keys.fill_at(&secrets, &keys.valid_indices(), dst);
    }
    Ok(ArrayInsert { inserted: n, nulls })
}

/// What an array insert did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ArrayInsert {
    /// Keys inserted (the array's length less its null keys).
    pub inserted: usize,
    /// Null keys skipped.
    pub nulls: usize,
}

/// A `BooleanArray` of `len` answers from a bitmap (bit `i % 64` of word
/// `i / 64`), with `nulls`; no copy on little-endian targets.
fn boolean_array(mut bitmap: Vec<u64>, len: usize, nulls: Option<NullBuffer>) -> BooleanArray {
    for w in &mut bitmap {
        // Arrow's bitmaps are little-endian bytes: bit i of byte i / 8.
        *w = w.to_le();
    }
    let values = BooleanBuffer::new(Buffer::from_vec(bitmap), 0, len);
    BooleanArray::new(values, nulls)
}

/// Clears the answers of null keys in a bitmap of keys `start..`
/// (`start` a multiple of 64).
fn clear_nulls(bitmap: &mut [u64], nulls: Option<&NullBuffer>, start: usize, len: usize) {
    if let Some(nulls) = nulls {
        let valid = nulls.inner().slice(start, len);
        for (w, v) in bitmap.iter_mut().zip(valid.bit_chunks().iter_padded()) {
            *w &= v;
        }
    }
}

impl FilterView<'_> {
    /// The keys of `array`, checked against the recorded kind.
    fn array_keys<'a>(
        &self,
        array: &'a dyn Array,
        secrets: &Secrets,
    ) -> Result<ArrayKeys<'a>, Error> {
        KeyKind::check(self.key_kind(), key_kind_of(array.data_type())?)?;
        ArrayKeys::new(array, Encoding::Lesshash, Hashing::Lesshash(secrets))
    }

    /// The answers of keys `start..start + n` into the zeroed bitmap `out`
    /// (bit j: key `start + j`; `start` a multiple of 64): the batch
    /// pipeline, or key by key where it does not run.
    fn query_keys(
        &self,
        keys: &ArrayKeys<'_>,
        secrets: &Secrets,
        start: usize,
        n: usize,
        out: &mut [u64],
    ) {
        let g = self.geometry();
        match (Plan::of(g), self.plain()) {
            (Some(plan), Some(words)) => contains_pipeline(
                &plan,
                g.tuning,
                words,
                n,
                |s, hs| keys.fill(secrets, start + s, hs),
                |s, found| set_answers(out, s, found),
            ),
            _ => {
                for j in 0..n {
                    let mut found = false;
                    keys.with_bytes(start + j, &mut |b| found = self.contains(b));
                    out[j / 64] |= u64::from(found) << (j % 64);
                }
            }
        }
        clear_nulls(out, keys.nulls(), start, n);
    }

    /// Whether each key of `array` is possibly in the set: `true`, `false`,
    /// or null for a null key (the [module docs](crate::arrow) for the
    /// types and their encoding). Zero copy over the array's buffers.
    ///
    /// # Errors
    /// [`Error::UnsupportedKeyType`] for a type with no key encoding;
    /// [`Error::KeyKindMismatch`] if the filter records keys of another
    /// kind (integers against text or bytes).
    pub fn contains_array(&self, array: &dyn Array) -> Result<BooleanArray, Error> {
        let secrets = *self.geometry().secrets();
        let keys = self.array_keys(array, &secrets)?;
        let mut bitmap = vec![0; bitmap_words(keys.len())];
        self.query_keys(&keys, &secrets, 0, keys.len(), &mut bitmap);
        Ok(boolean_array(bitmap, keys.len(), keys.nulls().cloned()))
    }

    /// [`contains_array`](Self::contains_array) into a bitmap (bit
    /// `i % 64` of word `i / 64`, overwritten): a null key answers false.
    ///
    /// # Errors
    /// As [`contains_array`](Self::contains_array);
    /// [`Error::LengthMismatch`] naming `out` unless it has
    /// [`bitmap_words`](crate::bitmap_words)`(array.len())` words.
    pub fn contains_array_into_bitmap(
        &self,
        array: &dyn Array,
        out: &mut [u64],
    ) -> Result<(), Error> {
        Error::check_len("out", bitmap_words(array.len()), out.len())?;
        let secrets = *self.geometry().secrets();
        let keys = self.array_keys(array, &secrets)?;
        out.fill(0);
        self.query_keys(&keys, &secrets, 0, keys.len(), out);
        Ok(())
    }

    /// [`contains_array`](Self::contains_array) on rayon's thread pool:
    /// tasks of 16,384 keys, each running the batch pipeline over its own
    /// part of the answers.
    ///
    /// # Errors
    /// As [`contains_array`](Self::contains_array).
    #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
    pub fn par_contains_array(&self, array: &dyn Array) -> Result<BooleanArray, Error> {
        use rayon::prelude::*;
        const TASK: usize = crate::util::parts::TASK;
        const _: () = assert!(TASK.is_multiple_of(64));
        let secrets = *self.geometry().secrets();
        let keys = self.array_keys(array, &secrets)?;
        let n = keys.len();
        let mut bitmap = vec![0; bitmap_words(n)];
        if crate::util::parts::sequential(n) {
            self.query_keys(&keys, &secrets, 0, n, &mut bitmap);
        } else {
            bitmap
                .par_chunks_mut(TASK / 64)
                .enumerate()
                .for_each(|(t, out)| {
                    let start = t * TASK;
                    self.query_keys(&keys, &secrets, start, TASK.min(n - start), out);
                });
        }
        Ok(boolean_array(bitmap, n, keys.nulls().cloned()))
    }
}

impl BloomFilter {
    /// Inserts every key of `array` that is not null (the [module
    /// docs](crate::arrow) for the types and their encoding), by the batch
    /// pipeline, and records the array's [`KeyKind`].
    ///
    /// # Errors
    /// [`Error::UnsupportedKeyType`] for a type with no key encoding (the
    /// filter is unchanged then).
    pub fn insert_array(&mut self, array: &dyn Array) -> Result<ArrayInsert, Error> {
        let kind = key_kind_of(array.data_type())?;
        let g = *self.geometry();
        let secrets = *g.secrets();
        let keys = ArrayKeys::new(array, Encoding::Lesshash, Hashing::Lesshash(&secrets))?;
        let nulls = keys.null_count();
        let n = keys.len() - nulls;
        let words = self.words_mut();
        match Plan::of(&g) {
            Some(plan) if nulls == 0 => insert_pipeline(&plan, g.tuning, words, n, |s, hs| {
                keys.fill(&secrets, s, hs)
            }),
            Some(plan) => {
                let valid = keys.valid_indices();
                insert_pipeline(&plan, g.tuning, words, n, |s, hs| {
                    keys.fill_at(&secrets, &valid[s..s + hs.len()], hs)
                })
            }
            None => {
                for i in keys.valid_indices() {
                    keys.with_bytes(i, &mut |b| g.insert(words, b));
                }
            }
        }
        self.count_inserts(n);
        self.record_key_kind(kind);
        Ok(ArrayInsert { inserted: n, nulls })
    }

    /// [`insert_array`](Self::insert_array) on rayon's thread pool, bit
    /// for bit the same filter (as
    /// [`par_insert_batch`](Self::par_insert_batch)).
    ///
    /// # Errors
    /// As [`insert_array`](Self::insert_array).
    #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
    pub fn par_insert_array(&mut self, array: &dyn Array) -> Result<ArrayInsert, Error> {
        if crate::util::parts::sequential(array.len()) {
            return self.insert_array(array);
        }
        let kind = key_kind_of(array.data_type())?;
        let secrets = *self.geometry().secrets();
        let keys = ArrayKeys::new(array, Encoding::Lesshash, Hashing::Lesshash(&secrets))?;
        let nulls = keys.null_count();
        let n = keys.len() - nulls;
        let valid = (nulls > 0).then(|| keys.valid_indices());
        let index = |i: usize| valid.as_ref().map_or(i, |v| v[i]);
        self.par_insert_with(
            n,
            |s, hs| match &valid {
                None => keys.fill(&secrets, s, hs),
                Some(v) => keys.fill_at(&secrets, &v[s..s + hs.len()], hs),
            },
            |a, i| keys.with_bytes(index(i), &mut |b| a.insert(b)),
        );
        self.record_key_kind(kind);
        Ok(ArrayInsert { inserted: n, nulls })
    }
}

/// Whether rayon is on and `n` keys are worth splitting into tasks.
fn parallel(n: usize, wanted: bool) -> bool {
    #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
    {
        wanted && !crate::util::parts::sequential(n)
    }
    #[cfg(not(all(feature = "rayon", target_has_atomic = "64")))]
    {
        let _ = (n, wanted);
        false
    }
}

/// The answers `found(i)` of every key, key by key (the filters without a
/// batch pipeline over their words), in tasks of `parts::TASK` keys when
/// `par`; null keys answer null.
fn answers_by_key(
    keys: &ArrayKeys<'_>,
    par: bool,
    found: impl Fn(usize) -> bool + Sync,
) -> BooleanArray {
    const TASK: usize = crate::util::parts::TASK;
    const _: () = assert!(TASK.is_multiple_of(64));
    let n = keys.len();
    let mut bitmap = vec![0; bitmap_words(n)];
    let fill = |start: usize, out: &mut [u64]| {
        for (j, i) in (start..n.min(start + out.len() * 64)).enumerate() {
            out[j / 64] |= u64::from(found(i)) << (j % 64);
        }
        clear_nulls(out, keys.nulls(), start, (out.len() * 64).min(n - start));
    };
    if parallel(n, par) {
        #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
        {
            use rayon::prelude::*;
            bitmap
                .par_chunks_mut(TASK / 64)
                .enumerate()
                .for_each(|(t, out)| fill(t * TASK, out));
        }
    } else {
        fill(0, &mut bitmap);
    }
    boolean_array(bitmap, n, keys.nulls().cloned())
}

/// Calls `insert(i)` for every key that is not null, in tasks when `par`.
fn insert_by_key(keys: &ArrayKeys<'_>, par: bool, insert: impl Fn(usize) + Sync) -> ArrayInsert {
    let valid = keys.valid_indices();
    if parallel(valid.len(), par) {
        #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
        {
            use rayon::prelude::*;
            valid
                .par_chunks(crate::util::parts::TASK)
                .for_each(|chunk| chunk.iter().for_each(|&i| insert(i)));
        }
    } else {
        valid.iter().for_each(|&i| insert(i));
    }
    ArrayInsert {
        inserted: valid.len(),
        nulls: keys.null_count(),
    }
}

#[cfg(target_has_atomic = "64")]
impl crate::AtomicBloomFilter {
    /// The keys of `array` for this filter, and whether its scheme is a
    /// two-hash one (inserted and queried by hash).
    fn keys_of<'a>(
        &self,
        array: &'a dyn Array,
        secrets: &Secrets,
    ) -> Result<(ArrayKeys<'a>, bool), Error> {
        let keys = ArrayKeys::new(array, Encoding::Lesshash, Hashing::Lesshash(secrets))?;
        Ok((keys, Plan::of(self.geometry()).is_some()))
    }

    fn insert_array_with(&self, array: &dyn Array, par: bool) -> Result<ArrayInsert, Error> {
        let kind = key_kind_of(array.data_type())?;
        let secrets = *self.geometry().secrets();
        let (keys, two_hash) = self.keys_of(array, &secrets)?;
        let done = insert_by_key(&keys, par, |i| {
            if two_hash {
                self.insert_hash_unchecked(keys.hash_at(Hashing::Lesshash(&secrets), i));
            } else {
                keys.with_bytes(i, &mut |b| self.insert(b));
            }
        });
        self.record_key_kind(kind);
        Ok(done)
    }

    fn contains_array_with(&self, array: &dyn Array, par: bool) -> Result<BooleanArray, Error> {
        KeyKind::check(self.key_kind(), key_kind_of(array.data_type())?)?;
        let secrets = *self.geometry().secrets();
        let (keys, two_hash) = self.keys_of(array, &secrets)?;
        Ok(answers_by_key(&keys, par, |i| {
            if two_hash {
                self.contains_hash_unchecked(keys.hash_at(Hashing::Lesshash(&secrets), i))
            } else {
                let mut found = false;
                keys.with_bytes(i, &mut |b| found = self.contains(b));
                found
            }
        }))
    }

    /// [`BloomFilter::insert_array`] through `&self`, from any thread (key
    /// by key, each with atomic ORs).
    ///
    /// # Errors
    /// As [`BloomFilter::insert_array`].
    pub fn insert_array(&self, array: &dyn Array) -> Result<ArrayInsert, Error> {
        self.insert_array_with(array, false)
    }

    /// [`insert_array`](Self::insert_array) on rayon's thread pool.
    ///
    /// # Errors
    /// As [`BloomFilter::insert_array`].
    #[cfg(feature = "rayon")]
    pub fn par_insert_array(&self, array: &dyn Array) -> Result<ArrayInsert, Error> {
        self.insert_array_with(array, true)
    }

    /// [`FilterView::contains_array`] of the filter as it is now (each
    /// key's words read atomically; inserts racing with the query may or
    /// may not be seen).
    ///
    /// # Errors
    /// As [`FilterView::contains_array`].
    pub fn contains_array(&self, array: &dyn Array) -> Result<BooleanArray, Error> {
        self.contains_array_with(array, false)
    }

    /// [`contains_array`](Self::contains_array) on rayon's thread pool.
    ///
    /// # Errors
    /// As [`FilterView::contains_array`].
    #[cfg(feature = "rayon")]
    pub fn par_contains_array(&self, array: &dyn Array) -> Result<BooleanArray, Error> {
        self.contains_array_with(array, true)
    }
}

/// Parquet's filter over Arrow arrays: each key hashed as Parquet hashes
/// the column's physical type (the [module docs](crate::arrow)), so that
/// it answers filters read from Parquet files and Parquet readers find
/// what it inserts. It records no key kind (Parquet's format has none).
impl crate::parquet::ParquetFilter {
    /// Inserts every key of `array` that is not null.
    ///
    /// # Errors
    /// [`Error::UnsupportedKeyType`] for a type with no key encoding.
    pub fn insert_array(&mut self, array: &dyn Array) -> Result<ArrayInsert, Error> {
        let keys = ArrayKeys::new(array, Encoding::Parquet, Hashing::Parquet)?;
        let valid = keys.valid_indices();
        for &i in &valid {
            self.insert_hash(keys.hash_at(Hashing::Parquet, i) as u64);
        }
        Ok(ArrayInsert {
            inserted: valid.len(),
            nulls: keys.null_count(),
        })
    }

    /// [`insert_array`](Self::insert_array) with the keys hashed on rayon's
    /// thread pool (the bits are then set in order, by one thread: a
    /// Parquet filter is at most 128 MiB, and setting 8 bits of one block
    /// costs less than hashing the key).
    ///
    /// # Errors
    /// As [`insert_array`](Self::insert_array).
    #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
    pub fn par_insert_array(&mut self, array: &dyn Array) -> Result<ArrayInsert, Error> {
        use rayon::prelude::*;
        let keys = ArrayKeys::new(array, Encoding::Parquet, Hashing::Parquet)?;
        let valid = keys.valid_indices();
        let hashes: Vec<u64> = valid
            .par_iter()
            .with_min_len(crate::util::parts::TASK)
            .map(|&i| keys.hash_at(Hashing::Parquet, i) as u64)
            .collect();
        for h in hashes {
            self.insert_hash(h);
        }
        Ok(ArrayInsert {
            inserted: valid.len(),
            nulls: keys.null_count(),
        })
    }

    /// Whether each key of `array` is possibly in the set; null for a null
    /// key.
    ///
    /// # Errors
    /// [`Error::UnsupportedKeyType`] for a type with no key encoding.
    pub fn contains_array(&self, array: &dyn Array) -> Result<BooleanArray, Error> {
        self.contains_array_with(array, false)
    }

    /// [`contains_array`](Self::contains_array) on rayon's thread pool.
    ///
    /// # Errors
    /// As [`contains_array`](Self::contains_array).
    #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
    pub fn par_contains_array(&self, array: &dyn Array) -> Result<BooleanArray, Error> {
        self.contains_array_with(array, true)
    }

    fn contains_array_with(&self, array: &dyn Array, par: bool) -> Result<BooleanArray, Error> {
        let keys = ArrayKeys::new(array, Encoding::Parquet, Hashing::Parquet)?;
        Ok(answers_by_key(&keys, par, |i| {
            self.contains_hash(keys.hash_at(Hashing::Parquet, i) as u64)
        }))
    }
}

impl crate::spark::SparkBloomFilter {
    /// The keys of `array` in lesshash's table: Spark's encoding too (an
    /// integral widened to a long is its 8 little-endian bytes, which
    /// Spark's `hashLong` hashes as `hashUnsafeBytes` does; strings and
    /// binary are their bytes).
    fn spark_keys(array: &dyn Array) -> Result<ArrayKeys<'_>, Error> {
        ArrayKeys::new(array, Encoding::Lesshash, Hashing::Parquet)
    }

    /// Inserts every key of `array` that is not null, as Spark's `put`
    /// does (integers of every width and temporal types as a long, strings
    /// as their UTF-8 bytes, binary as its bytes; the [module
    /// docs](crate::arrow) list the types).
    ///
    /// # Errors
    /// [`Error::UnsupportedKeyType`] for a type with no key encoding (the
    /// filter is then unchanged).
    pub fn insert_array(&mut self, array: &dyn Array) -> Result<ArrayInsert, Error> {
        let keys = Self::spark_keys(array)?;
        let valid = keys.valid_indices();
        self.insert_batch_with(valid.len(), |j, f| keys.with_bytes(valid[j], f));
        Ok(ArrayInsert {
            inserted: valid.len(),
            nulls: keys.null_count(),
        })
    }

    /// Whether each key of `array` may be in the set (Spark's
    /// `mightContain`), null for a null key.
    ///
    /// # Errors
    /// As [`insert_array`](Self::insert_array).
    pub fn contains_array(&self, array: &dyn Array) -> Result<BooleanArray, Error> {
        self.contains_array_with(array, false)
    }

    /// [`contains_array`](Self::contains_array) on rayon's thread pool.
    ///
    /// # Errors
    /// As [`contains_array`](Self::contains_array).
    #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
    pub fn par_contains_array(&self, array: &dyn Array) -> Result<BooleanArray, Error> {
        self.contains_array_with(array, true)
    }

    fn contains_array_with(&self, array: &dyn Array, par: bool) -> Result<BooleanArray, Error> {
        const TASK: usize = crate::util::parts::TASK;
        let keys = Self::spark_keys(array)?;
        let n = keys.len();
        let mut bitmap = vec![0u64; bitmap_words(n)];
        let fill = |start: usize, out: &mut [u64]| {
            let len = (out.len() * 64).min(n - start);
            let mut found = vec![false; len];
            self.test_batch_with(&mut found, |j, f| keys.with_bytes(start + j, f));
            for (j, &b) in found.iter().enumerate() {
                out[j / 64] |= u64::from(b) << (j % 64);
            }
            clear_nulls(out, keys.nulls(), start, len);
        };
        if parallel(n, par) {
            #[cfg(all(feature = "rayon", target_has_atomic = "64"))]
            {
                use rayon::prelude::*;
                bitmap
                    .par_chunks_mut(TASK / 64)
                    .enumerate()
                    .for_each(|(t, out)| fill(t * TASK, out));
            }
        } else {
            fill(0, &mut bitmap);
        }
        Ok(boolean_array(bitmap, n, keys.nulls().cloned()))
    }
}
