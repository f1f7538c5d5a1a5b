//! Batches of keys from Python, fed to a sink with the GIL released.
//!
//! Every batch method (`add_many`, `contains_many`, `estimate_many`, ...)
//! first lets `lesshash._keys.normalize` turn its argument into one of the
//! shapes below (pandas and NumPy dtypes are easiest to tell apart in
//! Python), then [`feed`] hands the keys to a sink (a closure) in pieces,
//! as [`Keys`]: the whole
//! array at once where the keys are already in memory (NumPy, Arrow: zero
//! copy), and chunks of [`CHUNK`](crate::keys::CHUNK) keys read out of
//! Python objects otherwise (lists and tuples by index; integers as `u64`
//! while every key is one). Chunks rather than a whole list: the copy is
//! still in the cache when it is hashed (a list of 1e6 `str` read whole
//! measured 2-4x slower than in chunks). The sink runs without the GIL, so
//! other Python threads (a Dask worker's, say) go on meanwhile.
//!
//! Sinks call the crate's `par_*` batch methods for every piece: the crate
//! runs a piece on rayon's threads only when it pays (more keys than one
//! parallel task, more than one thread), and on the calling thread
//! otherwise.

use arrow_array::Array;
use arrow_buffer::{NullBuffer, NullBufferBuilder};
use lesshash::KeyKind;
use numpy::{PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use pyo3_arrow::{PyArray, PyChunkedArray};

use crate::keys::{
    ArrowKeys, Batch, Collected, KeyBuffer, arrow_keys, decode_dictionary, fixed_bytes,
    for_each_chunk, ucs4,
};

/// A piece of a batch: its keys, their kind, and which are missing.
#[derive(Clone, Copy)]
pub struct Keys<'a> {
    pub data: KeyData<'a>,
    /// The missing keys (Arrow nulls, pandas' `NA`, NumPy's `NaT`), if
    /// any: their slots in `data` hold placeholders, to be skipped by an
    /// insert and answered by the query's `nulls` choice.
    pub nulls: Option<Nulls<'a>>,
    /// The kind of the piece's keys (`KeyKind::combine` of each key's;
    /// `Unrecorded` for an empty list).
    pub kind: KeyKind,
    /// Whether `kind` is the whole batch's, known from its type before any
    /// key is read (a NumPy dtype, an Arrow type): a query checks it
    /// before the work. A list, tuple or iterable arrives in chunks whose
    /// kinds combine into the batch's (a batch of ints and strs is
    /// `mixed`), so a query checks that once all are read.
    pub typed: bool,
}

/// The keys of a piece: integer keys as `u64` bit patterns, or byte-string
/// keys (UTF-8 for `str`).
#[derive(Clone, Copy)]
pub enum KeyData<'a> {
    U64(&'a [u64]),
    Bytes(&'a [&'a [u8]]),
}

/// `$body` with `$k` bound to the slice behind `$keys` (a [`Keys`]), as a
/// `&[K]` of a `K: lesshash::Key + Copy + Sync`: one body for both key types.
macro_rules! with_key_data {
    ($keys:expr, $k:ident => $body:expr) => {
        match $keys.data {
            $crate::batch::KeyData::U64($k) => $body,
            $crate::batch::KeyData::Bytes($k) => $body,
        }
    };
}
pub(crate) use with_key_data;

impl<'a> Keys<'a> {
    pub fn len(self) -> usize {
        with_key_data!(self, k => k.len())
    }

    /// Integer keys of a typed batch (kind `Int64`).
    fn ints(k: &'a [u64]) -> Self {
        Self::typed(KeyData::U64(k), KeyKind::Int64)
    }

    /// Byte-string keys of a typed batch of `kind` (`Text` or `Bytes`).
    fn bytes(k: &'a [&'a [u8]], kind: KeyKind) -> Self {
        Self::typed(KeyData::Bytes(k), kind)
    }

    /// No keys have no kind: an empty array of any type records nothing
    /// and queries any filter (as an empty list does).
    fn typed(data: KeyData<'a>, kind: KeyKind) -> Self {
        let mut keys = Self {
            data,
            nulls: None,
            kind,
            typed: true,
        };
        if keys.len() == 0 {
            keys.kind = KeyKind::Unrecorded;
        }
        keys
    }
}

impl<'a> Keys<'a> {
    fn with_nulls(mut self, nulls: Option<Nulls<'a>>) -> Self {
        self.nulls = nulls.filter(|n| n.count() > 0);
        self
    }

    /// The piece's keys without its missing ones (a copy of the present
    /// ones' values or slices, only when some are missing), for an insert.
    pub fn present(self) -> Present<'a> {
        let Some(nulls) = self.nulls else {
            return Present::All(self);
        };
        match self.data {
            KeyData::U64(k) => Present::U64(nulls.present(k), self.kind),
            KeyData::Bytes(k) => Present::Bytes(nulls.present(k), self.kind),
        }
    }
}

/// [`Keys::present`]: a piece's present keys.
pub enum Present<'a> {
    All(Keys<'a>),
    U64(Vec<u64>, KeyKind),
    Bytes(Vec<&'a [u8]>, KeyKind),
}

impl Present<'_> {
    /// `f` on the present keys, as a piece without missing keys.
    pub fn with<R>(&self, f: impl FnOnce(Keys<'_>) -> R) -> R {
        match self {
            Present::All(keys) => f(*keys),
            Present::U64(k, kind) => f(Keys {
                data: KeyData::U64(k),
                nulls: None,
                kind: *kind,
                typed: true,
            }),
            Present::Bytes(k, kind) => f(Keys {
                data: KeyData::Bytes(k),
                nulls: None,
                kind: *kind,
                typed: true,
            }),
        }
    }
}

/// Which keys of a piece are missing.
#[derive(Clone, Copy)]
pub enum Nulls<'a> {
    /// An Arrow validity bitmap (set: present).
    Validity(&'a NullBuffer),
    /// A mask (true: missing), from pandas' nullable columns and NumPy's
    /// `NaT` (`_keys.Masked`).
    Missing(&'a [bool]),
}

impl Nulls<'_> {
    pub fn count(&self) -> usize {
        match self {
            Nulls::Validity(v) => v.null_count(),
            Nulls::Missing(m) => m.iter().filter(|&&m| m).count(),
        }
    }

    /// The first missing key's index in the piece.
    pub fn first(&self) -> Option<usize> {
        match self {
            Nulls::Validity(v) => (0..v.len()).find(|&i| v.is_null(i)),
            Nulls::Missing(m) => m.iter().position(|&m| m),
        }
    }

    /// The items of `keys` (one per key of the piece) that are present.
    pub fn present<T: Copy>(&self, keys: &[T]) -> Vec<T> {
        match self {
            // The set bits found a word at a time.
            Nulls::Validity(v) => v.valid_indices().map(|i| keys[i]).collect(),
            Nulls::Missing(m) => keys
                .iter()
                .zip(m.iter())
                .filter(|(_, missing)| !**missing)
                .map(|(&k, _)| k)
                .collect(),
        }
    }

    /// Sets the answers of the missing keys to `false`.
    pub fn answer_false(&self, answers: &mut [bool]) {
        match self {
            // The validity 64 bits at a time, no branch per key.
            Nulls::Validity(v) => {
                let bits = v.inner().bit_chunks();
                let mut out = answers.chunks_exact_mut(64);
                for (word, out) in bits.iter().zip(&mut out) {
                    for (j, a) in out.iter_mut().enumerate() {
                        *a &= (word >> j) & 1 == 1;
                    }
                }
                let word = bits.remainder_bits();
                for (j, a) in out.into_remainder().iter_mut().enumerate() {
                    *a &= (word >> j) & 1 == 1;
                }
            }
            Nulls::Missing(m) => answers
                .iter_mut()
                .zip(m.iter())
                .for_each(|(a, missing)| *a &= !missing),
        }
    }

    /// Appends the piece's validity (present: valid) to `out`.
    pub fn append_validity(&self, out: &mut NullBufferBuilder) {
        match self {
            Nulls::Validity(v) => out.append_buffer(v),
            Nulls::Missing(m) => m.iter().for_each(|&missing| out.append(!missing)),
        }
    }
}

/// A query's `output` argument: `true` for ``"arrow"`` (a
/// ``pyarrow.BooleanArray``), `false` for ``"numpy"``.
pub fn arrow_output(output: &str) -> PyResult<bool> {
    match output {
        "numpy" => Ok(false),
        "arrow" => Ok(true),
        other => Err(PyValueError::new_err(format!(
            "output must be \"numpy\" or \"arrow\", got {other:?}"
        ))),
    }
}

/// The error for missing keys where none may be: the first one's index in
/// the whole batch.
pub fn nulls_error(first: usize) -> PyErr {
    PyValueError::new_err(format!(
        "keys contain nulls (the first at index {first}); drop or fill them first"
    ))
}

/// `lesshash._keys.normalize`, looked up once.
fn normalize<'py>(keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    static NORMALIZE: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    NORMALIZE
        .import(keys.py(), "lesshash._keys", "normalize")?
        .call1((keys,))
}

/// `lesshash._keys.counts`: per-key counts as a contiguous `uint64` array
/// (`ValueError` for negative counts, `TypeError` for floats).
pub fn counts_array<'py>(counts: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    static COUNTS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    COUNTS
        .import(counts.py(), "lesshash._keys", "counts")?
        .call1((counts,))
}

/// Feeds every key of `keys` (any batch the package accepts) to `sink`, and
/// returns how many there were. `sink(py, piece, first)` does the batch's
/// work on one piece of the keys, `first` being the index of the piece's
/// first key in the whole batch; it releases the GIL for the work (through
/// `Shared`'s detached calls). An error of the sink ends the batch there.
/// Missing keys are an error ([`nulls_error`]) before the piece's work.
pub fn feed(
    keys: &Bound<'_, PyAny>,
    mut sink: impl FnMut(Python<'_>, Keys<'_>, usize) -> PyResult<()>,
) -> PyResult<usize> {
    feed_nullable(keys, |py, piece, first| {
        if let Some(at) = piece.nulls.and_then(|n| n.first()) {
            return Err(nulls_error(first + at));
        }
        sink(py, piece, first)
    })
}

/// [`feed`], with the missing keys of a piece in its [`Keys::nulls`].
pub fn feed_nullable(
    keys: &Bound<'_, PyAny>,
    mut sink: impl FnMut(Python<'_>, Keys<'_>, usize) -> PyResult<()>,
) -> PyResult<usize> {
    let py = keys.py();
    if keys.is_instance_of::<PyString>() || keys.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(
            "a single str or bytes is not a batch of keys: pass a list or an array of keys \
             (or use add / in for one key)",
        ));
    }
    // Lists and tuples are what `normalize` passes through unchanged.
    let keys = if keys.is_exact_instance_of::<PyList>() || keys.is_exact_instance_of::<PyTuple>() {
        keys.clone()
    } else {
        normalize(keys)?
    };
    if let Ok(array) = keys.extract::<PyReadonlyArray1<'_, u64>>() {
        let slice = array.as_slice().map_err(|_| {
            PyValueError::new_err("internal: normalized uint64 keys are not contiguous")
        })?;
        sink(py, Keys::ints(slice), 0)?;
        return Ok(slice.len());
    }
    if let Ok(missing) = keys.getattr(pyo3::intern!(py, "lesshash_missing")) {
        // Integers with missing values (`_keys.Masked`): the values, and a
        // mask of the missing ones.
        let values = keys.getattr(pyo3::intern!(py, "values"))?;
        let values = values.extract::<PyReadonlyArray1<'_, u64>>()?;
        let missing = missing.extract::<PyReadonlyArray1<'_, bool>>()?;
        let (values, missing) = (contiguous(&values)?, contiguous(&missing)?);
        sink(
            py,
            Keys::ints(values).with_nulls(Some(Nulls::Missing(missing))),
            0,
        )?;
        return Ok(values.len());
    }
    if let Ok(kind) = keys.getattr(pyo3::intern!(py, "lesshash_fixed_kind")) {
        // NumPy fixed-width strings as their raw buffers (`_keys.FixedWidth`).
        let kind: String = kind.extract()?;
        let width: usize = keys.getattr("width")?.extract()?;
        let data = keys.getattr("data")?;
        let (buf, kind): (KeyBuffer, _) = match kind.as_str() {
            "S" => {
                let data = data.extract::<PyReadonlyArray1<'_, u8>>()?;
                (fixed_bytes(contiguous(&data)?, width)?, KeyKind::Bytes)
            }
            "U" => {
                let data = data.extract::<PyReadonlyArray1<'_, u32>>()?;
                (ucs4(contiguous(&data)?, width)?, KeyKind::Text)
            }
            other => {
                return Err(PyValueError::new_err(format!(
                    "internal: unknown key shape {other:?}"
                )));
            }
        };
        let slices = buf.slices();
        sink(py, Keys::bytes(&slices, kind), 0)?;
        return Ok(slices.len());
    }
    let arrow = pyo3::intern!(py, "__arrow_c_array__");
    let stream = pyo3::intern!(py, "__arrow_c_stream__");
    if keys.hasattr(arrow)? || keys.hasattr(stream)? {
        let chunks = if keys.hasattr(arrow)? {
            vec![keys.extract::<PyArray>()?.into_inner().0]
        } else {
            keys.extract::<PyChunkedArray>()?.into_inner().0
        };
        let mut first = 0;
        for chunk in chunks {
            let chunk = decode_dictionary(chunk)?;
            let n = chunk.len();
            let nulls = chunk.logical_nulls();
            let nulls = nulls.as_ref().map(Nulls::Validity);
            match arrow_keys(&chunk)? {
                ArrowKeys::U64Borrowed(k) => sink(py, Keys::ints(k).with_nulls(nulls), first)?,
                ArrowKeys::U64Owned(k) => sink(py, Keys::ints(&k).with_nulls(nulls), first)?,
                ArrowKeys::Bytes(k, kind) => {
                    sink(py, Keys::bytes(&k, kind).with_nulls(nulls), first)?
                }
            }
            first += n;
        }
        return Ok(first);
    }
    let mut total = 0;
    for_each_chunk(&keys, |keys, first| {
        feed_collected(py, keys, first, &mut sink)?;
        total = first + keys.len();
        Ok(())
    })?;
    Ok(total)
}

fn feed_collected(
    py: Python<'_>,
    keys: &Collected,
    first: usize,
    sink: &mut impl FnMut(Python<'_>, Keys<'_>, usize) -> PyResult<()>,
) -> PyResult<()> {
    let kind = keys.kind();
    match keys.batch() {
        Batch::U64(k) => sink(
            py,
            Keys {
                data: KeyData::U64(k),
                nulls: None,
                kind,
                typed: false,
            },
            first,
        ),
        Batch::Bytes(buf) => sink(
            py,
            Keys {
                data: KeyData::Bytes(&buf.slices()),
                nulls: None,
                kind,
                typed: false,
            },
            first,
        ),
    }
}

/// [`feed`] for a query: one answer per key, in order. `answer(py, piece,
/// out)` writes the answers of a piece's keys into `out` (as long as the
/// piece, filled with `T::default()`). Returns the answers and the kind of
/// the batch's keys (every piece's combined).
pub fn answers<T: Clone + Default>(
    keys: &Bound<'_, PyAny>,
    mut answer: impl FnMut(Python<'_>, Keys<'_>, &mut [T]) -> PyResult<()>,
) -> PyResult<(Vec<T>, KeyKind)> {
    let mut out = Vec::new();
    let mut kind = KeyKind::Unrecorded;
    feed(keys, |py, keys, _| {
        kind = kind.combine(keys.kind);
        let start = out.len();
        out.resize(start + keys.len(), T::default());
        answer(py, keys, &mut out[start..])
    })?;
    Ok((out, kind))
}

fn contiguous<'a, T: numpy::Element>(array: &'a PyReadonlyArray1<'_, T>) -> PyResult<&'a [T]> {
    array.as_slice().map_err(|_| {
        PyValueError::new_err(format!(
            "internal: normalized key buffer of {} items is not contiguous",
            array.len()
        ))
    })
}
