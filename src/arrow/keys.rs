//! An Arrow array as keys: its type's encoding (the table in
//! [`super`]), read straight from its buffers, a chunk of hashes at a
//! time for the batch pipeline or one key's bytes at a time for the
//! `Independent` scheme and Parquet's filter.

#![forbid(unsafe_code)]

use arrow_array::cast::AsArray;
use arrow_array::types::{
    ArrowDictionaryKeyType, BinaryViewType, ByteArrayType, ByteViewType, Date32Type, Date64Type,
    DurationMicrosecondType, DurationMillisecondType, DurationNanosecondType, DurationSecondType,
    Float32Type, Float64Type, GenericBinaryType, GenericStringType, Int8Type, Int16Type, Int32Type,
    Int64Type, StringViewType, Time32MillisecondType, Time32SecondType, Time64MicrosecondType,
    Time64NanosecondType, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{
    Array, ArrowPrimitiveType, DictionaryArray, FixedSizeBinaryArray, GenericByteArray,
    GenericByteViewArray,
};
use arrow_buffer::{ArrowNativeType, NullBuffer};
use arrow_schema::{DataType, TimeUnit};

use crate::Error;
use crate::hash::Secrets;
use crate::hash::short::{hash_into, hash_one};
use crate::key_kind::KeyKind;
use crate::temporal::{TimeUnit as Unit, micros};

/// Keys per hashing step of the integer sources (the batch pipeline's
/// chunk: it asks for at most this many hashes at once).
const STEP: usize = crate::filter::batch::CHUNK;

/// How the keys become bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// lesshash's: integers widened to 64 bits, 8 little-endian bytes.
    Lesshash,
    /// Parquet's plain encoding of the column's physical type: integers
    /// of at most 32 bits as INT32 (4 bytes), wider ones as INT64.
    Parquet,
}

/// The hashes a dictionary's values are known by: XXH3-128 under the
/// filter's seed, or Parquet's XXH64 (in the low half).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Hashing<'s> {
    /// lesshash's 128-bit hash with these secrets (their family and seed).
    Lesshash(&'s Secrets),
    /// Parquet's XXH64, seed 0.
    Parquet,
}

/// An array's keys: its logical nulls and its values' encoding.
pub(crate) struct ArrayKeys<'a> {
    len: usize,
    nulls: Option<NullBuffer>,
    values: Box<dyn Values + 'a>,
}

impl<'a> ArrayKeys<'a> {
    /// The keys of `array` in `encoding`; a dictionary's values are hashed
    /// once here, by `hashing`.
    ///
    /// # Errors
    /// [`Error::UnsupportedKeyType`] naming a type with no key encoding;
    /// [`Error::InvalidParameter`] (`array`) for a dictionary whose key
    /// points past its values.
    pub(crate) fn new(
        array: &'a dyn Array,
        encoding: Encoding,
        hashing: Hashing<'_>,
    ) -> Result<Self, Error> {
        Ok(Self {
            len: array.len(),
            // Logical nulls: a dictionary's null values count as nulls
            // (for every other supported type they are the null buffer).
            nulls: array.logical_nulls().filter(|n| n.null_count() > 0),
            values: values(array, encoding, hashing)?,
        })
    }

    /// The number of keys, nulls included.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The logical nulls, if any key is null.
    pub(crate) fn nulls(&self) -> Option<&NullBuffer> {
        self.nulls.as_ref()
    }

    /// The number of null keys.
    pub(crate) fn null_count(&self) -> usize {
        self.nulls.as_ref().map_or(0, NullBuffer::null_count)
    }

    /// XXH3-128 of keys `start..start + out.len()` (null keys hash
    /// whatever their slot holds: their answers are nulled).
    #[inline]
    pub(crate) fn fill(&self, secrets: &Secrets, start: usize, out: &mut [u128]) {
        self.values.fill(secrets, start, out);
    }

    /// XXH3-128 of the keys at `indices` into `out` (as long).
    pub(crate) fn fill_at(&self, secrets: &Secrets, indices: &[usize], out: &mut [u128]) {
        for (o, &i) in out.iter_mut().zip(indices) {
            *o = self.values.hash_at(Hashing::Lesshash(secrets), i);
        }
    }

    /// Key `i`'s hash under `hashing`.
    #[inline]
    pub(crate) fn hash_at(&self, hashing: Hashing<'_>, i: usize) -> u128 {
        self.values.hash_at(hashing, i)
    }

    /// Calls `f` with key `i`'s bytes (the `Independent` scheme, which
    /// hashes them k times).
    pub(crate) fn with_bytes(&self, i: usize, f: &mut dyn FnMut(&[u8])) {
        self.values.with_bytes(i, f);
    }

    /// The indices of the keys that are not null.
    pub(crate) fn valid_indices(&self) -> Vec<usize> {
        match &self.nulls {
            Some(n) => n.valid_indices().collect(),
            None => (0..self.len).collect(),
        }
    }
}

/// One array's values as keys.
trait Values: Sync {
    /// XXH3-128 of keys `start..start + out.len()`.
    fn fill(&self, secrets: &Secrets, start: usize, out: &mut [u128]) {
        for (j, o) in out.iter_mut().enumerate() {
            *o = self.hash_at(Hashing::Lesshash(secrets), start + j);
        }
    }
    /// Key `i`'s hash under `hashing`.
    fn hash_at(&self, hashing: Hashing<'_>, i: usize) -> u128 {
        let mut h = 0;
        self.with_bytes(i, &mut |b| h = hash_bytes(hashing, b));
        h
    }
    /// Calls `f` with key `i`'s bytes.
    fn with_bytes(&self, i: usize, f: &mut dyn FnMut(&[u8]));
}

/// The hash of one key's bytes.
#[inline]
fn hash_bytes(hashing: Hashing<'_>, bytes: &[u8]) -> u128 {
    match hashing {
        Hashing::Lesshash(s) => hash_one(bytes, s),
        Hashing::Parquet => u128::from(crate::parquet::hash(bytes)),
    }
}

/// The supported types, by family, for messages.
pub(crate) const SUPPORTED: &str = "keys are integers (Int8-Int64, UInt8-UInt64), dates, times, timestamps and durations (as microseconds), strings (Utf8, LargeUtf8, Utf8View), binary (Binary, LargeBinary, BinaryView, FixedSizeBinary), or a Dictionary of these";

fn unsupported(data_type: &DataType) -> Error {
    Error::UnsupportedKeyType {
        data_type: data_type.to_string(),
        reason: SUPPORTED,
    }
}

/// The kind of keys an array of `data_type` holds.
pub(crate) fn kind_of(data_type: &DataType) -> Result<KeyKind, Error> {
    use DataType::*;
    Ok(match data_type {
        Int8
        | Int16
        | Int32
        | Int64
        | UInt8
        | UInt16
        | UInt32
        | UInt64
        | Date32
        | Date64
        | Time32(_)
        | Time64(_)
        | Timestamp(_, _)
        | Duration(_) => KeyKind::Int64,
        Utf8 | LargeUtf8 | Utf8View => KeyKind::Text,
        Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => KeyKind::Bytes,
        Dictionary(key, value) if key.is_dictionary_key_type() => match value.as_ref() {
            Dictionary(_, _) => return Err(unsupported(data_type)),
            v => kind_of(v)?,
        },
        _ => return Err(unsupported(data_type)),
    })
}

/// The values of `array` (its type checked by [`kind_of`] first).
fn values<'a>(
    array: &'a dyn Array,
    encoding: Encoding,
    hashing: Hashing<'_>,
) -> Result<Box<dyn Values + 'a>, Error> {
    use DataType::*;
    // Floats are keys only in Parquet's encoding (FLOAT, DOUBLE), where a
    // writer's filter holds their bits; `kind_of` is lesshash's table.
    match (encoding, array.data_type()) {
        (Encoding::Parquet, Float32) => {
            return Ok(Box::new(FloatsParquet(
                array.as_primitive::<Float32Type>().values(),
            )));
        }
        (Encoding::Parquet, Float64) => {
            return Ok(Box::new(FloatsParquet(
                array.as_primitive::<Float64Type>().values(),
            )));
        }
        _ => {}
    }
    kind_of(array.data_type())?;
    fn ints<'a, T: ArrowPrimitiveType>(
        array: &'a dyn Array,
        encoding: Encoding,
    ) -> Box<dyn Values + 'a>
    where
        T::Native: Widen,
    {
        let values: &'a [T::Native] = array.as_primitive::<T>().values();
        match encoding {
            Encoding::Lesshash => Box::new(Ints64(values)),
            Encoding::Parquet => Box::new(IntsParquet(values)),
        }
    }
    /// A temporal type: its key (`key` of each value) in lesshash's
    /// encoding, the stored integer in Parquet's (what a Parquet writer's
    /// filter hashed).
    fn temporal<'a, T: ArrowPrimitiveType>(
        array: &'a dyn Array,
        encoding: Encoding,
        key: fn(i64) -> i64,
    ) -> Box<dyn Values + 'a>
    where
        T::Native: Widen,
    {
        let values: &'a [T::Native] = array.as_primitive::<T>().values();
        match encoding {
            Encoding::Lesshash => Box::new(Temporal { values, key }),
            Encoding::Parquet => Box::new(IntsParquet(values)),
        }
    }
    Ok(match array.data_type() {
        Int8 => ints::<Int8Type>(array, encoding),
        Int16 => ints::<Int16Type>(array, encoding),
        Int32 => ints::<Int32Type>(array, encoding),
        Int64 => ints::<Int64Type>(array, encoding),
        UInt8 => ints::<UInt8Type>(array, encoding),
        UInt16 => ints::<UInt16Type>(array, encoding),
        UInt32 => ints::<UInt32Type>(array, encoding),
        UInt64 => ints::<UInt64Type>(array, encoding),
        // Temporal types: microseconds (crate::temporal), so the same date
        // or instant is one key whatever unit or type a reader chose.
        Date32 => temporal::<Date32Type>(array, encoding, |v| micros(v, Unit::Day)),
        Date64 => temporal::<Date64Type>(array, encoding, |v| micros(v, Unit::Millisecond)),
        Time32(TimeUnit::Second) => {
            temporal::<Time32SecondType>(array, encoding, |v| micros(v, Unit::Second))
        }
        Time32(_) => {
            temporal::<Time32MillisecondType>(array, encoding, |v| micros(v, Unit::Millisecond))
        }
        Time64(TimeUnit::Microsecond) => ints::<Time64MicrosecondType>(array, encoding),
        Time64(_) => {
            temporal::<Time64NanosecondType>(array, encoding, |v| micros(v, Unit::Nanosecond))
        }
        Timestamp(TimeUnit::Second, _) => {
            temporal::<TimestampSecondType>(array, encoding, |v| micros(v, Unit::Second))
        }
        Timestamp(TimeUnit::Millisecond, _) => {
            temporal::<TimestampMillisecondType>(array, encoding, |v| micros(v, Unit::Millisecond))
        }
        Timestamp(TimeUnit::Microsecond, _) => ints::<TimestampMicrosecondType>(array, encoding),
        Timestamp(TimeUnit::Nanosecond, _) => {
            temporal::<TimestampNanosecondType>(array, encoding, |v| micros(v, Unit::Nanosecond))
        }
        Duration(TimeUnit::Second) => {
            temporal::<DurationSecondType>(array, encoding, |v| micros(v, Unit::Second))
        }
        Duration(TimeUnit::Millisecond) => {
            temporal::<DurationMillisecondType>(array, encoding, |v| micros(v, Unit::Millisecond))
        }
        Duration(TimeUnit::Microsecond) => ints::<DurationMicrosecondType>(array, encoding),
        Duration(TimeUnit::Nanosecond) => {
            temporal::<DurationNanosecondType>(array, encoding, |v| micros(v, Unit::Nanosecond))
        }
        Utf8 => Box::new(Offsets(array.as_bytes::<GenericStringType<i32>>())),
        LargeUtf8 => Box::new(Offsets(array.as_bytes::<GenericStringType<i64>>())),
        Binary => Box::new(Offsets(array.as_bytes::<GenericBinaryType<i32>>())),
        LargeBinary => Box::new(Offsets(array.as_bytes::<GenericBinaryType<i64>>())),
        Utf8View => Box::new(Views(array.as_byte_view::<StringViewType>())),
        BinaryView => Box::new(Views(array.as_byte_view::<BinaryViewType>())),
        FixedSizeBinary(_) => Box::new(Fixed(array.as_fixed_size_binary())),
        Dictionary(key, _) => match key.as_ref() {
            Int8 => dictionary::<Int8Type>(array, encoding, hashing)?,
            Int16 => dictionary::<Int16Type>(array, encoding, hashing)?,
            Int32 => dictionary::<Int32Type>(array, encoding, hashing)?,
            Int64 => dictionary::<Int64Type>(array, encoding, hashing)?,
            UInt8 => dictionary::<UInt8Type>(array, encoding, hashing)?,
            UInt16 => dictionary::<UInt16Type>(array, encoding, hashing)?,
            UInt32 => dictionary::<UInt32Type>(array, encoding, hashing)?,
            UInt64 => dictionary::<UInt64Type>(array, encoding, hashing)?,
            _ => return Err(unsupported(array.data_type())),
        },
        _ => return Err(unsupported(array.data_type())),
    })
}

/// An integer's encodings.
trait Widen: Copy + Sync {
    /// lesshash's: the value widened to 64 bits (sign-extended if signed).
    fn widen(self) -> u64;
    /// Parquet's plain bytes of the physical type it is written as.
    fn with_parquet_bytes(self, f: &mut dyn FnMut(&[u8]));
    /// The values as `u64`s where they are 64-bit already (hashed in place,
    /// with no widening copy).
    fn as_u64s(values: &[Self]) -> Option<&[u64]> {
        let _ = values;
        None
    }
}

macro_rules! widen {
    ($($t:ty => $wide:ty, $physical:ty);* $(;)?) => {$(
        impl Widen for $t {
            #[inline(always)]
            fn widen(self) -> u64 {
                self as $wide as u64
            }
            #[inline]
            fn with_parquet_bytes(self, f: &mut dyn FnMut(&[u8])) {
                f(&(self as $physical).to_le_bytes())
            }
        }
    )*};
}
// Parquet's writers store 8- to 32-bit integers as INT32 (sign- or
// zero-extended; UInt32 reinterpreted) and 64-bit ones as INT64.
widen!(
    i8 => i64, i32; i16 => i64, i32; i32 => i64, i32;
    u8 => u64, i32; u16 => u64, i32; u32 => u64, u32;
);

macro_rules! native64 {
    ($($t:ty),*) => {$(
        impl Widen for $t {
            #[inline(always)]
            fn widen(self) -> u64 {
                self as u64
            }
            #[inline]
            fn with_parquet_bytes(self, f: &mut dyn FnMut(&[u8])) {
                f(&self.to_le_bytes())
            }
            #[inline(always)]
            fn as_u64s(values: &[Self]) -> Option<&[u64]> {
                Some(bytemuck::cast_slice(values))
            }
        }
    )*};
}
native64!(i64, u64);

/// Integers in lesshash's encoding.
struct Ints64<'a, T>(&'a [T]);

impl<T: Widen> Values for Ints64<'_, T> {
    /// Widened a chunk at a time and hashed by the batch formulas of one
    /// 8-byte key (no length dispatch): the speed of `contains_batch` over
    /// `&[u64]`.
    #[inline]
    fn fill(&self, secrets: &Secrets, start: usize, out: &mut [u128]) {
        let keys = &self.0[start..start + out.len()];
        if let Some(keys) = T::as_u64s(keys) {
            return hash_into(keys, secrets, out);
        }
        let mut wide = [0u64; STEP];
        for (keys, out) in keys.chunks(STEP).zip(out.chunks_mut(STEP)) {
            for (w, &k) in wide.iter_mut().zip(keys) {
                *w = k.widen();
            }
            hash_into(&wide[..keys.len()], secrets, out);
        }
    }
    fn with_bytes(&self, i: usize, f: &mut dyn FnMut(&[u8])) {
        f(&self.0[i].widen().to_le_bytes())
    }
}

/// Temporal values in lesshash's encoding: each value's key
/// ([`crate::temporal`]), widened and hashed a chunk at a time as
/// [`Ints64`] does.
struct Temporal<'a, T> {
    values: &'a [T],
    key: fn(i64) -> i64,
}

impl<T: Widen> Temporal<'_, T> {
    #[inline(always)]
    fn key(&self, value: T) -> u64 {
        (self.key)(value.widen() as i64) as u64
    }
}

impl<T: Widen> Values for Temporal<'_, T> {
    #[inline]
    fn fill(&self, secrets: &Secrets, start: usize, out: &mut [u128]) {
        let keys = &self.values[start..start + out.len()];
        let mut wide = [0u64; STEP];
        for (keys, out) in keys.chunks(STEP).zip(out.chunks_mut(STEP)) {
            for (w, &k) in wide.iter_mut().zip(keys) {
                *w = self.key(k);
            }
            hash_into(&wide[..keys.len()], secrets, out);
        }
    }
    fn with_bytes(&self, i: usize, f: &mut dyn FnMut(&[u8])) {
        f(&self.key(self.values[i]).to_le_bytes())
    }
}

/// Integers in Parquet's encoding.
struct IntsParquet<'a, T>(&'a [T]);

/// Floats in Parquet's encoding: their bits, little-endian.
struct FloatsParquet<'a, T>(&'a [T]);

impl<T: FloatBits> Values for FloatsParquet<'_, T> {
    fn with_bytes(&self, i: usize, f: &mut dyn FnMut(&[u8])) {
        self.0[i].with_le_bytes(f)
    }
}

/// A float's little-endian bytes (Parquet's plain FLOAT and DOUBLE).
trait FloatBits: Copy + Sync {
    fn with_le_bytes(self, f: &mut dyn FnMut(&[u8]));
}

impl FloatBits for f32 {
    fn with_le_bytes(self, f: &mut dyn FnMut(&[u8])) {
        f(&self.to_le_bytes())
    }
}

impl FloatBits for f64 {
    fn with_le_bytes(self, f: &mut dyn FnMut(&[u8])) {
        f(&self.to_le_bytes())
    }
}

impl<T: Widen> Values for IntsParquet<'_, T> {
    fn with_bytes(&self, i: usize, f: &mut dyn FnMut(&[u8])) {
        self.0[i].with_parquet_bytes(f)
    }
}

/// Strings and binary with offsets (Utf8, LargeUtf8, Binary, LargeBinary).
struct Offsets<'a, T: ByteArrayType>(&'a GenericByteArray<T>);

impl<T: ByteArrayType> Values for Offsets<'_, T>
where
    T::Native: AsRef<[u8]>,
{
    #[inline]
    fn fill(&self, secrets: &Secrets, start: usize, out: &mut [u128]) {
        // Offsets and data read directly: `value(i)` checks the index and
        // rebuilds the slice per key.
        let offsets = &self.0.value_offsets()[start..=start + out.len()];
        let data = self.0.value_data();
        for (o, w) in out.iter_mut().zip(offsets.windows(2)) {
            let (a, b) = (w[0].as_usize(), w[1].as_usize());
            *o = hash_one(data.get(a..b).unwrap_or_default(), secrets);
        }
    }
    fn with_bytes(&self, i: usize, f: &mut dyn FnMut(&[u8])) {
        f(self.0.value(i).as_ref())
    }
}

/// Strings and binary as views (Utf8View, BinaryView).
struct Views<'a, T: ByteViewType + ?Sized>(&'a GenericByteViewArray<T>);

impl<T: ByteViewType + ?Sized> Values for Views<'_, T>
where
    T::Native: AsRef<[u8]>,
{
    fn with_bytes(&self, i: usize, f: &mut dyn FnMut(&[u8])) {
        f(self.0.value(i).as_ref())
    }
    /// The views read directly (Arrow's layout: the length in the low 32
    /// bits; up to 12 bytes inline after it, else a buffer index and an
    /// offset in the high 64 bits), without `value(i)`'s per-key checks.
    #[inline]
    fn fill(&self, secrets: &Secrets, start: usize, out: &mut [u128]) {
        let views = &self.0.views()[start..start + out.len()];
        let buffers = self.0.data_buffers();
        for (o, &view) in out.iter_mut().zip(views) {
            let len = view as u32 as usize;
            let inline = view.to_le_bytes();
            let bytes = if len <= 12 {
                &inline[4..4 + len]
            } else {
                let (buffer, offset) = ((view >> 64) as u32 as usize, (view >> 96) as u32 as usize);
                // Validated by the array's constructor; a bad view of an
                // unchecked one hashes as empty instead of panicking.
                buffers
                    .get(buffer)
                    .and_then(|b| b.get(offset..offset + len))
                    .unwrap_or_default()
            };
            *o = hash_one(bytes, secrets);
        }
    }
}

/// Fixed-width binary.
struct Fixed<'a>(&'a FixedSizeBinaryArray);

impl Values for Fixed<'_> {
    fn with_bytes(&self, i: usize, f: &mut dyn FnMut(&[u8])) {
        f(self.0.value(i))
    }
}

/// A dictionary: its values hashed once, each key's hash looked up.
struct Dictionary<'a, K: ArrowDictionaryKeyType> {
    keys: &'a [K::Native],
    values: Box<dyn Values + 'a>,
    hashes: Vec<u128>,
    hashing: HashingKind,
}

/// Which hashing a dictionary's `hashes` hold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum HashingKind {
    Lesshash(crate::HashFamily, u64),
    Parquet,
}

impl HashingKind {
    fn of(hashing: Hashing<'_>) -> Self {
        match hashing {
            Hashing::Lesshash(s) => HashingKind::Lesshash(s.family(), s.seed()),
            Hashing::Parquet => HashingKind::Parquet,
        }
    }
}

fn dictionary<'a, K: ArrowDictionaryKeyType>(
    array: &'a dyn Array,
    encoding: Encoding,
    hashing: Hashing<'_>,
) -> Result<Box<dyn Values + 'a>, Error>
where
    K::Native: TryInto<usize>,
{
    let dict: &'a DictionaryArray<K> = array.as_dictionary::<K>();
    let values = values(dict.values().as_ref(), encoding, hashing)?;
    let n = dict.values().len();
    let hashes: Vec<u128> = (0..n).map(|i| values.hash_at(hashing, i)).collect();
    let keys: &'a [K::Native] = dict.keys().values();
    // Every key that is not null must point at a value (arrays built by
    // arrow's checked constructors do; a null key's slot may hold anything).
    let key_nulls = dict.keys().nulls();
    for (i, &k) in keys.iter().enumerate() {
        let ok = k.try_into().is_ok_and(|k: usize| k < n);
        if !ok && key_nulls.is_none_or(|nulls| nulls.is_valid(i)) {
            return Err(Error::invalid(
                "array",
                format!("dictionary key at index {i} points past its {n} values"),
            ));
        }
    }
    Ok(Box::new(Dictionary::<K> {
        keys,
        values,
        hashes,
        hashing: HashingKind::of(hashing),
    }))
}

impl<K: ArrowDictionaryKeyType> Dictionary<'_, K>
where
    K::Native: TryInto<usize>,
{
    /// The value index of key `i` (0 for a null key's out-of-range slot).
    #[inline]
    fn index(&self, i: usize) -> usize {
        self.keys[i]
            .try_into()
            .ok()
            .filter(|&k| k < self.hashes.len())
            .unwrap_or(0)
    }
}

impl<K: ArrowDictionaryKeyType> Values for Dictionary<'_, K>
where
    K::Native: TryInto<usize>,
{
    #[inline]
    fn fill(&self, secrets: &Secrets, start: usize, out: &mut [u128]) {
        if self.hashing == HashingKind::Lesshash(secrets.family(), secrets.seed()) {
            for (j, o) in out.iter_mut().enumerate() {
                *o = self.hashes.get(self.index(start + j)).copied().unwrap_or(0);
            }
        } else {
            for (j, o) in out.iter_mut().enumerate() {
                *o = self.hash_at(Hashing::Lesshash(secrets), start + j);
            }
        }
    }
    fn hash_at(&self, hashing: Hashing<'_>, i: usize) -> u128 {
        if self.hashing == HashingKind::of(hashing) {
            self.hashes.get(self.index(i)).copied().unwrap_or(0)
        } else {
            let mut h = 0;
            self.with_bytes(i, &mut |b| h = hash_bytes(hashing, b));
            h
        }
    }
    fn with_bytes(&self, i: usize, f: &mut dyn FnMut(&[u8])) {
        if self.hashes.is_empty() {
            // No values: every key is null (checked at construction).
            return f(&[]);
        }
        self.values.with_bytes(self.index(i), f)
    }
}
