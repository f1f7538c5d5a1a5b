//! Keys from Python objects, as the bytes the Rust crate hashes.
//!
//! The rule is the crate's (`lesshash::Key`), so a key answers the same in
//! Python, in Rust and on the command line:
//!
//! * `int` (and `bool`, and anything with `__index__` such as NumPy integer
//!   scalars): 8 little-endian bytes, as `i64` when negative and as `u64`
//!   otherwise (the two agree on 0..2^63). Outside -2^63..2^64 it is an
//!   `OverflowError`; it is never truncated.
//! * `str`: its UTF-8 bytes (a lone surrogate cannot be encoded: `ValueError`).
//! * `bytes`, `bytearray`, `memoryview` of bytes: the bytes.
//! * `datetime.date`, `datetime.datetime`, `datetime.time`,
//!   `datetime.timedelta` (and pandas' `Timestamp` and `Timedelta`, NumPy's
//!   `datetime64` and `timedelta64` scalars): their integer key, as the
//!   Arrow temporal types' (`lesshash::temporal`: microseconds, a date's of
//!   its midnight), so a cell answers the same as a Python object and in
//!   an Arrow or NumPy column.
//!
//! Floats and `None` are refused with a `TypeError`: a float key would
//! silently answer differently from the integer it prints as.
//!
//! Batches arrive in one of four shapes (the Python side picks the shape;
//! `lesshash/_keys.py`): a contiguous `uint64` array (every NumPy integer,
//! `datetime64` and `timedelta64` dtype, widened there), a NumPy
//! fixed-width bytes (`S`) or unicode (`U`) array as its raw buffer, an
//! Arrow array or stream (zero copy through the Arrow PyCapsule interface;
//! integers as their value, temporal types as their microseconds), or any
//! iterable of Python keys.
//!
//! Every key has a kind (`lesshash::KeyKind`, which a filter records and
//! queries check): integers `Int64`, `str` `Text`, the bytes-like types
//! `Bytes`; a batch's is its type's, or for Python objects its keys'
//! combined (`KeyKind::combine`: ints and strs are `Mixed`).

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Date64Type, DurationMicrosecondType, DurationMillisecondType,
    DurationNanosecondType, DurationSecondType, Int8Type, Int16Type, Int32Type, Int64Type,
    Time32MillisecondType, Time32SecondType, Time64MicrosecondType, Time64NanosecondType,
    TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType};
use arrow_schema::{DataType, TimeUnit};
use lesshash::KeyKind;
use lesshash::temporal::{TimeUnit as Unit, micros};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyByteArray, PyBytes, PyDate, PyDateTime, PyDelta, PyDeltaAccess, PyFloat, PyInt, PyList,
    PyMemoryView, PyString, PyTime, PyTimeAccess, PyTuple,
};

/// One key's canonical bytes.
pub enum KeyBytes<'a> {
    /// An integer's 8 little-endian bytes.
    Int([u8; 8]),
    /// A `str`'s UTF-8, borrowed from the object.
    Text(&'a [u8]),
    /// Bytes borrowed from the Python object (`bytes`).
    Borrowed(&'a [u8]),
    /// Bytes copied out of a mutable object (`bytearray`, `memoryview`).
    Owned(Vec<u8>),
}

impl KeyBytes<'_> {
    pub fn as_slice(&self) -> &[u8] {
        match self {
            KeyBytes::Int(b) => b,
            KeyBytes::Text(b) | KeyBytes::Borrowed(b) => b,
            KeyBytes::Owned(b) => b,
        }
    }

    /// The kind of key this is (what a filter records when it is inserted,
    /// and checks when it is queried).
    #[inline(always)]
    pub fn kind(&self) -> KeyKind {
        match self {
            KeyBytes::Int(_) => KeyKind::Int64,
            KeyBytes::Text(_) => KeyKind::Text,
            KeyBytes::Borrowed(_) | KeyBytes::Owned(_) => KeyKind::Bytes,
        }
    }
}

/// The bytes of one Python key (module docs for the rule).
///
/// Exact `int` and `str`, the common keys, are told by their type alone and
/// skip the checks for the other key types; they give the bytes the
/// general rule gives ([`generic_key_bytes`] comes to the same calls for
/// them, after the checks).
#[inline(always)]
pub fn key_bytes<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<KeyBytes<'a>> {
    if obj.is_exact_instance_of::<PyInt>() {
        return exact_int_bytes(obj).map(KeyBytes::Int);
    }
    if let Ok(s) = obj.cast_exact::<PyString>() {
        // UTF-8 borrowed from the object: for an ASCII `str` its own data,
        // else the UTF-8 copy CPython caches in the object on first use.
        return Ok(KeyBytes::Text(s.to_str()?.as_bytes()));
    }
    generic_key_bytes(obj)
}

/// The general rule: subclasses of `int` and `str` (`bool`, enums), NumPy
/// scalars, `bytes` and the other bytes-like types, and the refusals.
#[cold]
fn generic_key_bytes<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<KeyBytes<'a>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(KeyBytes::Text(s.to_str()?.as_bytes()));
    }
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(KeyBytes::Borrowed(b.as_bytes()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(KeyBytes::Owned(b.to_vec()));
    }
    if obj.is_instance_of::<PyMemoryView>() {
        let bytes = obj.call_method0("tobytes")?;
        return Ok(KeyBytes::Owned(
            bytes.cast::<PyBytes>()?.as_bytes().to_vec(),
        ));
    }
    if let Some(key) = temporal_key(obj)? {
        return Ok(KeyBytes::Int(key.to_le_bytes()));
    }
    if obj.is_none() {
        return Err(PyTypeError::new_err(
            "None is not a key (keys are int, str or bytes; drop or fill missing values first)",
        ));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Err(PyTypeError::new_err(format!(
            "float keys are not supported (got {}): a float would not answer as the int it \
             prints as; convert to int or str first",
            obj.repr()?
        )));
    }
    if obj.is_instance_of::<PyInt>() || obj.hasattr(pyo3::intern!(obj.py(), "__index__"))? {
        return int_bytes(obj).map(KeyBytes::Int);
    }
    Err(PyTypeError::new_err(format!(
        "unsupported key type {}: keys are int, str, bytes, or arrays of them",
        obj.get_type().name()?
    )))
}

/// The key of a `datetime.date`, `datetime.datetime` (pandas'
/// `Timestamp`), `datetime.time`, `datetime.timedelta` (pandas'
/// `Timedelta`) or NumPy `datetime64` / `timedelta64` scalar, by the
/// crate's rule (`lesshash::temporal`): microseconds (a datetime's UTC
/// instant since 1970, a naive one read as UTC as Arrow's timestamps are;
/// a date's midnight; a time's wall-clock time of day; a timedelta
/// saturating at the `i64` range). `None` for anything else;
/// `NaT` is refused as `None` is.
fn temporal_key(obj: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    const US_PER_DAY: i128 = 86_400_000_000;
    // `date.toordinal()` of 1970-01-01.
    const EPOCH_ORDINAL: i64 = 719_163;
    let clamp = |us: i128| us.clamp(i64::MIN.into(), i64::MAX.into()) as i64;
    let time_us = |h: u8, m: u8, s: u8, us: u32| {
        (i128::from(h) * 3600 + i128::from(m) * 60 + i128::from(s)) * 1_000_000 + i128::from(us)
    };
    let delta_us = |d: &Bound<'_, PyDelta>| {
        i128::from(d.get_days()) * US_PER_DAY
            + i128::from(d.get_seconds()) * 1_000_000
            + i128::from(d.get_microseconds())
    };
    // pandas' NaT is a `datetime` (with no date): a missing value.
    let ty = obj.get_type();
    let name = ty.name()?;
    if name == "NaTType" {
        return Err(nat_error());
    }
    if let Ok(dt) = obj.cast::<PyDateTime>() {
        let days: i64 = dt
            .call_method0(pyo3::intern!(obj.py(), "toordinal"))?
            .extract()?;
        let mut us = i128::from(days - EPOCH_ORDINAL) * US_PER_DAY
            + time_us(
                dt.get_hour(),
                dt.get_minute(),
                dt.get_second(),
                dt.get_microsecond(),
            );
        let offset = dt.call_method0(pyo3::intern!(obj.py(), "utcoffset"))?;
        if let Ok(offset) = offset.cast::<PyDelta>() {
            us -= delta_us(offset);
        }
        return Ok(Some(clamp(us)));
    }
    if let Ok(date) = obj.cast::<PyDate>() {
        let days: i64 = date
            .call_method0(pyo3::intern!(obj.py(), "toordinal"))?
            .extract()?;
        return Ok(Some(micros(days - EPOCH_ORDINAL, Unit::Day)));
    }
    if let Ok(t) = obj.cast::<PyTime>() {
        let us = time_us(
            t.get_hour(),
            t.get_minute(),
            t.get_second(),
            t.get_microsecond(),
        );
        return Ok(Some(clamp(us)));
    }
    if let Ok(d) = obj.cast::<PyDelta>() {
        return Ok(Some(clamp(delta_us(d))));
    }
    // NumPy's scalars, by the arrays' rule (lesshash/_keys.py).
    if (name == "datetime64" || name == "timedelta64")
        && ty.module()?.to_cow()?.starts_with("numpy")
    {
        let key = obj
            .py()
            .import("lesshash._keys")?
            .call_method1("temporal_scalar_key", (obj,))?;
        if key.is_none() {
            return Err(nat_error());
        }
        return Ok(Some(key.extract()?));
    }
    Ok(None)
}

/// `NaT` as a scalar key: refused, as `None` is.
fn nat_error() -> PyErr {
    PyTypeError::new_err(
        "NaT is not a key (it is a missing value; drop or fill missing values first)",
    )
}

/// [`int_bytes`] of an exact `int`, read by CPython's
/// `PyLong_AsLongLongAndOverflow`, which reports values beyond `i64` in a
/// flag instead of an `OverflowError`: raising and dropping that error cost
/// about 120 ns per key in `2**63 ..= 2**64 - 1` (the upper half of the
/// `u64` keys) against about 25 for the whole query of a smaller key.
#[allow(unsafe_code)]
#[inline(always)]
fn exact_int_bytes(obj: &Bound<'_, PyAny>) -> PyResult<[u8; 8]> {
    let mut overflow: std::ffi::c_int = 0;
    // SAFETY: `obj` is a live object (a `Bound`, so this thread is
    // attached) of type exactly `int`, which the call reads without running
    // Python code; `overflow` is a valid `int` to write.
    let v: i64 = unsafe { pyo3::ffi::PyLong_AsLongLongAndOverflow(obj.as_ptr(), &mut overflow) };
    match overflow {
        0 if v != -1 => Ok(v.to_le_bytes()),
        // Above i64: a u64, or the error.
        1 => wide_int_bytes(obj),
        // -1 itself or an error (-1 is also the error value), or below i64.
        _ => int_bytes(obj),
    }
}

/// An integer's 8 bytes: `i64` when negative, `u64` otherwise.
#[inline(never)]
fn int_bytes(obj: &Bound<'_, PyAny>) -> PyResult<[u8; 8]> {
    match obj.extract::<i64>() {
        Ok(v) => Ok(v.to_le_bytes()),
        Err(_) => wide_int_bytes(obj),
    }
}

/// [`int_bytes`] beyond `i64`: `2**63 ..= 2**64 - 1` as `u64`, else the
/// error.
#[cold]
fn wide_int_bytes(obj: &Bound<'_, PyAny>) -> PyResult<[u8; 8]> {
    if let Ok(v) = obj.extract::<u64>() {
        return Ok(v.to_le_bytes());
    }
    // Neither fits (or `__index__` failed): say which.
    let index = obj.py().import("operator")?.call_method1("index", (obj,))?;
    Err(PyOverflowError::new_err(format!(
        "int key {} is outside the 64-bit key range -2**63 ..= 2**64 - 1 (keys are hashed as \
         i64 or u64; hash wider ints as str or bytes)",
        index.repr()?
    )))
}

/// The keys of a batch of Python objects, read in one pass: as `u64` while
/// every key is an integer (the crate's batch hashes a `u64` as its 8
/// little-endian bytes, so the answers are those of the bytes), as bytes
/// from the first key that is not.
///
/// Bytes are copied (into one [`KeyBuffer`]) rather than borrowed from the
/// objects: the batch then runs with the GIL released, when another thread
/// may drop the objects (by changing the list that held them).
#[derive(Default)]
pub struct Collected {
    ints: Vec<u64>,
    bytes: Option<KeyBuffer>,
    /// The kinds of the keys pushed since the last `clear`, combined
    /// (`KeyKind::combine`): `Unrecorded` for none.
    kind: KeyKind,
}

/// A [`Collected`] batch, for the sink.
pub enum Batch<'a> {
    U64(&'a [u64]),
    Bytes(&'a KeyBuffer),
}

impl Collected {
    #[inline]
    pub fn push(&mut self, obj: &Bound<'_, PyAny>) -> PyResult<()> {
        let key = key_bytes(obj)?;
        let kind = key.kind();
        if kind != self.kind {
            self.kind = self.kind.combine(kind);
        }
        match (&mut self.bytes, key) {
            (None, KeyBytes::Int(b)) => self.ints.push(u64::from_le_bytes(b)),
            (Some(buf), key) => buf.push(key.as_slice()),
            (None, key) => self.switch_to_bytes().push(key.as_slice()),
        }
        Ok(())
    }

    /// From integers to bytes: the integers so far as their 8 bytes each.
    #[cold]
    fn switch_to_bytes(&mut self) -> &mut KeyBuffer {
        let mut buf = KeyBuffer::default();
        buf.data.reserve(8 * self.ints.len());
        for &v in &self.ints {
            buf.push(&v.to_le_bytes());
        }
        self.ints = Vec::new();
        self.bytes.insert(buf)
    }

    pub fn len(&self) -> usize {
        self.bytes.as_ref().map_or(self.ints.len(), KeyBuffer::len)
    }

    /// The kind of the keys (`Unrecorded` for none): a list of `int` is
    /// `Int64`, of `str` `Text`, of `bytes` (or `str` and `bytes`)
    /// `Bytes`, of `int` and either `Mixed`.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    pub fn clear(&mut self) {
        self.ints.clear();
        self.kind = KeyKind::Unrecorded;
        if let Some(buf) = &mut self.bytes {
            buf.clear();
        }
    }

    pub fn batch(&self) -> Batch<'_> {
        match &self.bytes {
            None => Batch::U64(&self.ints),
            Some(buf) => Batch::Bytes(buf),
        }
    }
}

/// Keys copied out of Python objects into one buffer, so that the batch can
/// run with the GIL released (the objects may change meanwhile; the copy
/// cannot).
#[derive(Default)]
pub struct KeyBuffer {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl KeyBuffer {
    pub fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
    }

    pub fn push(&mut self, key: &[u8]) {
        self.data.extend_from_slice(key);
        self.ends.push(self.data.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// The keys as slices of the buffer.
    pub fn slices(&self) -> Vec<&[u8]> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let s = &self.data[start..end];
                start = end;
                s
            })
            .collect()
    }
}

/// Keys per chunk when iterating Python objects: bounds the copy held at
/// once for a generator of any length, and is large enough for the batch
/// paths to run at full speed.
pub const CHUNK: usize = 1 << 16;

/// Calls `f` with successive chunks of the keys of an iterable, and the index
/// of each chunk's first key. An error names the offending key's index.
pub fn for_each_chunk(
    iterable: &Bound<'_, PyAny>,
    f: impl FnMut(&Collected, usize) -> PyResult<()>,
) -> PyResult<()> {
    // Lists and tuples are read by index, without an iterator object.
    if let Ok(list) = iterable.cast_exact::<PyList>() {
        chunks(iterable.py(), list.iter().map(Ok), f)
    } else if let Ok(tuple) = iterable.cast_exact::<PyTuple>() {
        chunks(iterable.py(), tuple.iter().map(Ok), f)
    } else {
        chunks(iterable.py(), iterable.try_iter()?, f)
    }
}

fn chunks<'py>(
    py: Python<'py>,
    items: impl Iterator<Item = PyResult<Bound<'py, PyAny>>>,
    mut f: impl FnMut(&Collected, usize) -> PyResult<()>,
) -> PyResult<()> {
    let mut keys = Collected::default();
    let mut first = 0;
    for (i, item) in items.enumerate() {
        keys.push(&item?).map_err(|e| at_index(py, e, i))?;
        if keys.len() == CHUNK {
            f(&keys, first)?;
            first += keys.len();
            keys.clear();
        }
    }
    if keys.len() > 0 || first == 0 {
        f(&keys, first)?;
    }
    Ok(())
}

/// `err` with "key i: " in front, of the same exception type.
pub fn at_index(py: Python<'_>, err: PyErr, i: usize) -> PyErr {
    let msg = format!("key {i}: {}", err.value(py));
    if err.is_instance_of::<PyOverflowError>(py) {
        PyOverflowError::new_err(msg)
    } else if err.is_instance_of::<PyTypeError>(py) {
        PyTypeError::new_err(msg)
    } else if err.is_instance_of::<PyValueError>(py) {
        PyValueError::new_err(msg)
    } else {
        err
    }
}

/// NumPy fixed-width bytes (`S`): each item is `itemsize` bytes, and NumPy
/// drops trailing NULs when it hands an item to Python, so they are dropped
/// here too (`np.array([b"ab", b"a"])[1] == b"a"`).
pub fn fixed_bytes(data: &[u8], itemsize: usize) -> PyResult<KeyBuffer> {
    if itemsize == 0 || !data.len().is_multiple_of(itemsize) {
        return Err(PyValueError::new_err(format!(
            "fixed-width bytes: buffer of {} bytes is not a whole number of {itemsize}-byte items",
            data.len()
        )));
    }
    let mut buf = KeyBuffer::default();
    buf.data.reserve(data.len());
    for item in data.chunks_exact(itemsize) {
        let len = item.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
        buf.push(&item[..len]);
    }
    Ok(buf)
}

/// NumPy fixed-width unicode (`U`): each item is `width` UCS-4 code points,
/// trailing NULs dropped as NumPy does, encoded as UTF-8 (as `str` keys are).
pub fn ucs4(data: &[u32], width: usize) -> PyResult<KeyBuffer> {
    if width == 0 || !data.len().is_multiple_of(width) {
        return Err(PyValueError::new_err(format!(
            "fixed-width unicode: {} code points are not a whole number of {width}-wide items",
            data.len()
        )));
    }
    let mut buf = KeyBuffer::default();
    buf.data.reserve(data.len());
    let mut utf8 = [0u8; 4];
    for (i, item) in data.chunks_exact(width).enumerate() {
        let len = item.iter().rposition(|&c| c != 0).map_or(0, |p| p + 1);
        for &c in &item[..len] {
            let ch = char::from_u32(c).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "key {i}: code point {c:#x} cannot be encoded as UTF-8 (a surrogate or \
                     beyond U+10FFFF)"
                ))
            })?;
            buf.data
                .extend_from_slice(ch.encode_utf8(&mut utf8).as_bytes());
        }
        buf.ends.push(buf.data.len());
    }
    Ok(buf)
}

/// One Arrow array's keys, borrowed from its buffers where the layout allows.
pub enum ArrowKeys<'a> {
    /// 64-bit integers, as their `u64` bit patterns (`i64` and `u64` hash the
    /// same bytes).
    U64Borrowed(&'a [u64]),
    /// Narrower integers widened to 64 bits (as the Python `int` they are).
    U64Owned(Vec<u64>),
    /// Strings (UTF-8; kind `Text`) and binaries (kind `Bytes`), as slices
    /// of the array's data buffer.
    Bytes(Vec<&'a [u8]>, KeyKind),
}

/// Dictionary-encoded keys (PyArrow's `dictionary_encode()`, pandas and
/// Polars categoricals) decoded to their values: a key is its value, not
/// its code.
pub fn decode_dictionary(array: ArrayRef) -> PyResult<ArrayRef> {
    match array.data_type() {
        DataType::Dictionary(_, value) => {
            let value = value.as_ref().clone();
            arrow_cast::cast(&array, &value).map_err(|e| {
                PyTypeError::new_err(format!("cannot decode dictionary-encoded keys: {e}"))
            })
        }
        _ => Ok(array),
    }
}

/// The keys of one Arrow array: `TypeError` for a type that is not a key.
/// A null's slot holds a placeholder (its buffer's value, or the empty
/// string); the caller reads the array's validity (`Array::nulls`).
pub fn arrow_keys(array: &ArrayRef) -> PyResult<ArrowKeys<'_>> {
    fn widen<T: ArrowPrimitiveType>(array: &ArrayRef, f: impl Fn(T::Native) -> u64) -> Vec<u64> {
        array
            .as_primitive::<T>()
            .values()
            .iter()
            .map(|&v| f(v))
            .collect()
    }
    fn borrow<T: ArrowPrimitiveType<Native = i64>>(array: &ArrayRef) -> ArrowKeys<'_> {
        ArrowKeys::U64Borrowed(bytemuck::cast_slice(array.as_primitive::<T>().values()))
    }
    fn scaled<T: ArrowPrimitiveType<Native = i64>>(array: &ArrayRef, unit: Unit) -> ArrowKeys<'_> {
        ArrowKeys::U64Owned(widen::<T>(array, |v| micros(v, unit) as u64))
    }
    fn sign_extend<T: ArrowPrimitiveType<Native = i32>>(array: &ArrayRef) -> ArrowKeys<'_> {
        ArrowKeys::U64Owned(widen::<T>(array, |v| i64::from(v) as u64))
    }
    // The library's table (lesshash::arrow, docs/guide.md): every integer
    // widened to 64 bits (signed types sign-extended), temporal types as
    // their key, strings as UTF-8, binaries as their bytes.
    Ok(match array.data_type() {
        DataType::Int64 => borrow::<Int64Type>(array),
        DataType::UInt64 => ArrowKeys::U64Borrowed(array.as_primitive::<UInt64Type>().values()),
        DataType::Int32 => sign_extend::<Int32Type>(array),
        DataType::Int16 => ArrowKeys::U64Owned(widen::<Int16Type>(array, |v| i64::from(v) as u64)),
        DataType::Int8 => ArrowKeys::U64Owned(widen::<Int8Type>(array, |v| i64::from(v) as u64)),
        DataType::UInt32 => ArrowKeys::U64Owned(widen::<UInt32Type>(array, u64::from)),
        DataType::UInt16 => ArrowKeys::U64Owned(widen::<UInt16Type>(array, u64::from)),
        DataType::UInt8 => ArrowKeys::U64Owned(widen::<UInt8Type>(array, u64::from)),
        // Temporal types: microseconds (`lesshash::temporal`, the library's
        // table; a date's of its midnight); a timestamp's time zone is not
        // part of the key.
        DataType::Date32 => ArrowKeys::U64Owned(widen::<Date32Type>(array, |v| {
            micros(v.into(), Unit::Day) as u64
        })),
        DataType::Date64 => scaled::<Date64Type>(array, Unit::Millisecond),
        DataType::Time32(TimeUnit::Second) => {
            ArrowKeys::U64Owned(widen::<Time32SecondType>(array, |v| {
                micros(v.into(), Unit::Second) as u64
            }))
        }
        DataType::Time32(TimeUnit::Millisecond) => {
            ArrowKeys::U64Owned(widen::<Time32MillisecondType>(array, |v| {
                micros(v.into(), Unit::Millisecond) as u64
            }))
        }
        DataType::Time64(TimeUnit::Microsecond) => borrow::<Time64MicrosecondType>(array),
        DataType::Time64(TimeUnit::Nanosecond) => {
            ArrowKeys::U64Owned(widen::<Time64NanosecondType>(array, |v| {
                micros(v, Unit::Nanosecond) as u64
            }))
        }
        DataType::Timestamp(unit, _) => match unit {
            TimeUnit::Microsecond => borrow::<TimestampMicrosecondType>(array),
            TimeUnit::Second => scaled::<TimestampSecondType>(array, Unit::Second),
            TimeUnit::Millisecond => scaled::<TimestampMillisecondType>(array, Unit::Millisecond),
            TimeUnit::Nanosecond => scaled::<TimestampNanosecondType>(array, Unit::Nanosecond),
        },
        DataType::Duration(unit) => match unit {
            TimeUnit::Microsecond => borrow::<DurationMicrosecondType>(array),
            TimeUnit::Second => scaled::<DurationSecondType>(array, Unit::Second),
            TimeUnit::Millisecond => scaled::<DurationMillisecondType>(array, Unit::Millisecond),
            TimeUnit::Nanosecond => scaled::<DurationNanosecondType>(array, Unit::Nanosecond),
        },
        DataType::Utf8 => ArrowKeys::Bytes(
            array.as_string::<i32>().iter().map(bytes_of_str).collect(),
            KeyKind::Text,
        ),
        DataType::LargeUtf8 => ArrowKeys::Bytes(
            array.as_string::<i64>().iter().map(bytes_of_str).collect(),
            KeyKind::Text,
        ),
        DataType::Utf8View => ArrowKeys::Bytes(
            array.as_string_view().iter().map(bytes_of_str).collect(),
            KeyKind::Text,
        ),
        DataType::Binary => ArrowKeys::Bytes(
            array.as_binary::<i32>().iter().map(bytes_of).collect(),
            KeyKind::Bytes,
        ),
        DataType::LargeBinary => ArrowKeys::Bytes(
            array.as_binary::<i64>().iter().map(bytes_of).collect(),
            KeyKind::Bytes,
        ),
        DataType::BinaryView => ArrowKeys::Bytes(
            array.as_binary_view().iter().map(bytes_of).collect(),
            KeyKind::Bytes,
        ),
        DataType::FixedSizeBinary(_) => ArrowKeys::Bytes(
            array.as_fixed_size_binary().iter().map(bytes_of).collect(),
            KeyKind::Bytes,
        ),
        DataType::Float16 | DataType::Float32 | DataType::Float64 => {
            return Err(PyTypeError::new_err(format!(
                "float keys are not supported (Arrow type {}): a float would not answer as the \
                 int it prints as; cast to an integer or string type first",
                array.data_type()
            )));
        }
        other => {
            return Err(PyTypeError::new_err(format!(
                "unsupported Arrow key type {other}: keys are integers, dates, times, \
                 timestamps, durations, strings or binaries"
            )));
        }
    })
}

// A null's slot: the empty string, read by no one (its answer or insert
// follows the array's validity).
fn bytes_of_str(s: Option<&str>) -> &[u8] {
    s.map_or(&[], str::as_bytes)
}

fn bytes_of(b: Option<&[u8]>) -> &[u8] {
    b.unwrap_or(&[])
}
