//! `lesshash.SparkBloomFilter`: Spark's Bloom filter
//! (`lesshash::spark::SparkBloomFilter`), bit for bit in both format
//! versions, so that Python reads the filters Spark writes
//! (`BloomFilter.writeTo`, `df.stat.bloomFilter`) and writes ones Spark
//! reads. Batches are Arrow arrays (`lesshash/spark.py` converts others);
//! one key is an `int` (a long), `str` or `bytes`.

use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use arrow_array::BooleanArray;
use lesshash::spark::SparkVersion;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt, PyString, PyType};

use crate::arrays::{answers_to_py, chunks};
use crate::batch::arrow_output;
use crate::errors::to_py;

/// A Spark Bloom filter: ``SparkBloomFilter(expected_items, fpp,
/// version=2)`` sized as Spark's ``BloomFilter.create`` sizes one, or
/// ``from_bytes(data)``: the bytes Spark's ``writeTo`` writes (either
/// version). ``to_bytes()`` is what Spark's ``BloomFilter.readFrom`` reads.
#[pyclass(module = "lesshash", name = "SparkBloomFilter", frozen)]
pub struct SparkBloomFilter {
    inner: RwLock<lesshash::spark::SparkBloomFilter>,
}

fn version(v: u8) -> PyResult<SparkVersion> {
    match v {
        1 => Ok(SparkVersion::V1),
        2 => Ok(SparkVersion::V2),
        _ => Err(PyValueError::new_err(format!(
            "version must be 1 or 2 (Spark's Bloom filter versions), got {v}"
        ))),
    }
}

/// One key: an `int` (a long: Spark widens bytes, shorts and ints to
/// one; an int from 2**63 to 2**64 - 1 is the long of its 64 bits, as a
/// uint64 array's value is in ``add_many`` and on the command line), a
/// `str` (its UTF-8 bytes) or `bytes`.
enum OneKey {
    Long(i64),
    Bytes(Vec<u8>),
}

fn one_key(key: &Bound<'_, PyAny>) -> PyResult<OneKey> {
    if key.is_instance_of::<PyInt>() {
        return key
            .extract::<i64>()
            .or_else(|_| key.extract::<u64>().map(|k| k as i64))
            .map(OneKey::Long)
            .map_err(|_| {
                PyValueError::new_err(format!(
                    "key {key} is outside a Spark long and its unsigned bits (-2**63 to \
                     2**64 - 1)"
                ))
            });
    }
    if let Ok(s) = key.cast::<PyString>() {
        return Ok(OneKey::Bytes(s.to_str()?.as_bytes().to_vec()));
    }
    if let Ok(b) = key.cast::<PyBytes>() {
        return Ok(OneKey::Bytes(b.as_bytes().to_vec()));
    }
    Err(PyTypeError::new_err(format!(
        "a Spark filter's key is an int, str or bytes, got {}",
        key.get_type()
            .name()
            .map_or_else(|_| "?".into(), |n| n.to_string())
    )))
}

/// `keys` as an Arrow array: itself if it speaks the Arrow PyCapsule
/// interface, else `pyarrow.array(keys)`.
fn as_arrow<'py>(keys: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    let py = keys.py();
    if keys.hasattr(pyo3::intern!(py, "__arrow_c_array__"))?
        || keys.hasattr(pyo3::intern!(py, "__arrow_c_stream__"))?
    {
        return Ok(keys.clone());
    }
    let pyarrow = py.import("pyarrow").map_err(|e| {
        PyTypeError::new_err(format!(
            "keys that are not an Arrow array are converted by pyarrow, which is not \
             installed ({e}); pass a pyarrow or Polars array"
        ))
    })?;
    pyarrow.call_method1("array", (keys,))
}

impl SparkBloomFilter {
    fn wrap(inner: lesshash::spark::SparkBloomFilter) -> Self {
        Self {
            inner: RwLock::new(inner),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, lesshash::spark::SparkBloomFilter> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, lesshash::spark::SparkBloomFilter> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// A copy of `other`'s filter (read before `self` is locked: `other`
    /// may be `self`).
    fn other(other: &Bound<'_, SparkBloomFilter>) -> lesshash::spark::SparkBloomFilter {
        other.get().read().clone()
    }
}

#[pymethods]
impl SparkBloomFilter {
    #[new]
    #[pyo3(signature = (expected_items, fpp, version = 2))]
    fn new(expected_items: u64, fpp: f64, version: u8) -> PyResult<Self> {
        lesshash::spark::SparkBloomFilter::with_fpp(self::version(version)?, expected_items, fpp)
            .map(Self::wrap)
            .map_err(to_py)
    }

    /// A filter of `bits` bits (rounded up to 64), `hashes` hash functions
    /// and `seed` (version 2 only), as Spark's
    /// ``BloomFilter.create(version, n, bits, seed)`` makes with its k.
    #[classmethod]
    #[pyo3(signature = (bits, hashes, version = 2, seed = 0))]
    fn from_bits(
        _cls: &Bound<'_, PyType>,
        bits: u64,
        hashes: u32,
        version: u8,
        seed: i32,
    ) -> PyResult<Self> {
        lesshash::spark::SparkBloomFilter::with_bits(self::version(version)?, bits, hashes, seed)
            .map(Self::wrap)
            .map_err(to_py)
    }

    /// The filter Spark's ``writeTo`` wrote (either version).
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &[u8]) -> PyResult<Self> {
        lesshash::spark::SparkBloomFilter::from_spark_bytes(data)
            .map(Self::wrap)
            .map_err(to_py)
    }

    /// The bytes Spark's ``BloomFilter.readFrom`` reads.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.read().to_spark_bytes())
    }

    /// Adds one key: an ``int`` (Spark's ``putLong``), ``str``
    /// (``putString``) or ``bytes`` (``putBinary``).
    fn add(&self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        match one_key(key)? {
            OneKey::Long(k) => self.write().insert_long(k),
            OneKey::Bytes(b) => self.write().insert_bytes(&b),
        }
        Ok(())
    }

    /// Spark's ``mightContain`` of one key.
    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(match one_key(key)? {
            OneKey::Long(k) => self.read().contains_long(k),
            OneKey::Bytes(b) => self.read().contains_bytes(&b),
        })
    }

    /// Adds every non-null key of a batch; returns how many. A batch is an
    /// Arrow array or chunked array (pyarrow, Polars: integers of every
    /// width as longs, strings, binary, dictionaries of these), or anything
    /// ``pyarrow.array`` converts (a NumPy array, a pandas Series, a list
    /// of ints, strs or bytes).
    fn add_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<usize> {
        let chunks = chunks(&as_arrow(keys)?)?;
        py.detach(|| {
            let mut f = self.write();
            chunks.iter().try_fold(0, |n, chunk| {
                f.insert_array(chunk.as_ref()).map(|done| n + done.inserted)
            })
        })
        .map_err(to_py)
    }

    /// Spark's ``mightContain`` of every key of a batch (as ``add_many``
    /// takes): a NumPy ``bool`` array (a null key answers ``False``), or
    /// with ``output="arrow"`` a ``pyarrow.BooleanArray`` (null for a null
    /// key).
    #[pyo3(signature = (keys, *, output = "numpy"))]
    fn contains_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        output: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arrow = arrow_output(output)?;
        let chunks = chunks(&as_arrow(keys)?)?;
        let answers: Vec<BooleanArray> = py
            .detach(|| {
                let f = self.read();
                chunks
                    .iter()
                    .map(|c| f.par_contains_array(c.as_ref()))
                    .collect::<Result<_, _>>()
            })
            .map_err(to_py)?;
        answers_to_py(py, &answers, arrow)
    }

    /// Adds every key of `other` (Spark's ``mergeInPlace``); ``ValueError``
    /// naming the first of version, bits, k and seed that differs.
    fn update(&self, other: &Bound<'_, SparkBloomFilter>) -> PyResult<()> {
        let other = Self::other(other);
        self.write().union(&other).map_err(to_py)
    }

    /// Keeps the bits set in both (Spark's ``intersectInPlace``).
    fn intersection_update(&self, other: &Bound<'_, SparkBloomFilter>) -> PyResult<()> {
        let other = Self::other(other);
        self.write().intersect(&other).map_err(to_py)
    }

    fn __or__(&self, other: &Bound<'_, SparkBloomFilter>) -> PyResult<Self> {
        let mut out = self.read().clone();
        out.union(&Self::other(other)).map_err(to_py)?;
        Ok(Self::wrap(out))
    }

    fn __and__(&self, other: &Bound<'_, SparkBloomFilter>) -> PyResult<Self> {
        let mut out = self.read().clone();
        out.intersect(&Self::other(other)).map_err(to_py)?;
        Ok(Self::wrap(out))
    }

    /// The format version, 1 or 2.
    #[getter]
    fn version(&self) -> u8 {
        match self.read().version() {
            SparkVersion::V1 => 1,
            SparkVersion::V2 => 2,
        }
    }

    /// The number of bits (Spark's ``bitSize``).
    #[getter]
    fn bits(&self) -> u64 {
        self.read().num_bits()
    }

    /// The number of hash functions.
    #[getter]
    fn hashes(&self) -> u32 {
        self.read().num_hashes()
    }

    /// The seed (0 for version 1).
    #[getter]
    fn seed(&self) -> i32 {
        self.read().seed()
    }

    /// Spark's ``expectedFpp``: the fill to the power k (of the bits its
    /// indexes reach: for version 1, at most 2**31).
    #[getter]
    fn fill_fpr(&self) -> f64 {
        self.read().fill_fpr()
    }

    /// The false-positive rate after `n` distinct keys, over the bits the
    /// indexes reach (a version 1 filter above 2**31 bits is as accurate
    /// as one of 2**31).
    fn expected_fpr(&self, n: u64) -> f64 {
        self.read().expected_fpr(n)
    }

    /// The bits a key's indexes can reach: all for version 2, at most
    /// 2**31 for version 1.
    #[getter]
    fn reachable_bits(&self) -> u64 {
        self.read().reachable_bits()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<SparkBloomFilter>()
            .is_ok_and(|o| *o.get().read() == *self.read())
    }

    fn __repr__(&self) -> String {
        let f = self.read();
        format!(
            "SparkBloomFilter(version={}, bits={}, hashes={}, seed={})",
            match f.version() {
                SparkVersion::V1 => 1,
                SparkVersion::V2 => 2,
            },
            f.num_bits(),
            f.num_hashes(),
            f.seed()
        )
    }
}
