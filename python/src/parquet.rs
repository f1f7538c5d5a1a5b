//! `lesshash.ParquetFilter`: the crate's Parquet split-block filter
//! (`lesshash::parquet::ParquetFilter`), whose keys are Arrow arrays
//! hashed in Parquet's encoding of their type (as a Parquet writer hashes
//! a column: an `int32` key is 4 bytes, an `int64` 8, a string its bytes,
//! all with XXH64), so that it answers the filters pyarrow writes into
//! Parquet files. `lesshash/parquet.py` finds them in a file.

use std::sync::{PoisonError, RwLock};

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

use crate::arrays::{answers_to_py, chunks};
use crate::batch::arrow_output;
use crate::errors::to_py;

/// A Parquet split-block Bloom filter: ``ParquetFilter(ndv, fpp)`` sized
/// as Parquet writers size one (at most `fpp` false positives after `ndv`
/// distinct values), or ``ParquetFilter.from_bytes(data)``: a filter as
/// a Parquet file stores it (its Thrift header and bitset). Keys are Arrow
/// arrays (or anything ``pyarrow.array`` takes, converted by
/// ``lesshash.parquet``), hashed by their Arrow type's Parquet encoding.
#[pyclass(module = "lesshash", name = "ParquetFilter", frozen)]
pub struct ParquetFilter {
    inner: RwLock<lesshash::parquet::ParquetFilter>,
}

impl ParquetFilter {
    fn wrap(inner: lesshash::parquet::ParquetFilter) -> Self {
        Self {
            inner: RwLock::new(inner),
        }
    }
}

#[pymethods]
impl ParquetFilter {
    #[new]
    fn new(ndv: u64, fpp: f64) -> PyResult<Self> {
        lesshash::parquet::ParquetFilter::with_ndv_fpp(ndv, fpp)
            .map(Self::wrap)
            .map_err(to_py)
    }

    /// The filter from its bytes as a Parquet file stores them at a column
    /// chunk's ``bloom_filter_offset``: the Thrift ``BloomFilterHeader``
    /// (XXH64, split-block, uncompressed) and exactly its bitset.
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &[u8]) -> PyResult<Self> {
        lesshash::parquet::ParquetFilter::from_parquet_bytes(data)
            .map(Self::wrap)
            .map_err(to_py)
    }

    /// The length of the filter whose bytes `prefix` starts with (its
    /// header and bitset), read from the header, which must be whole in
    /// `prefix` (a header is under 32 bytes): for files that do not record
    /// ``bloom_filter_length``.
    #[staticmethod]
    fn stored_length(prefix: &[u8]) -> PyResult<usize> {
        lesshash::parquet::ParquetFilter::stored_len(prefix).map_err(to_py)
    }

    /// The Thrift header and the bitset, as a Parquet writer stores them.
    fn to_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let bytes = self.read().to_parquet_bytes().map_err(to_py)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Adds every non-null key of an Arrow array; returns how many.
    fn add_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<usize> {
        let chunks = chunks(keys)?;
        py.detach(|| {
            let mut f = self.inner.write().unwrap_or_else(PoisonError::into_inner);
            chunks.iter().try_fold(0, |n, chunk| {
                f.par_insert_array(chunk.as_ref())
                    .map(|done| n + done.inserted)
            })
        })
        .map_err(to_py)
    }

    /// Whether each key of an Arrow array may be in the set: a NumPy
    /// ``bool`` array (a null key answers ``False``), or with
    /// ``output="arrow"`` a ``pyarrow.BooleanArray`` (a null key answers
    /// null), as ``BloomFilter.contains_many``.
    #[pyo3(signature = (keys, *, output = "numpy"))]
    fn contains_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        output: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arrow = arrow_output(output)?;
        let chunks = chunks(keys)?;
        let answers = py
            .detach(|| {
                let f = self.inner.read().unwrap_or_else(PoisonError::into_inner);
                chunks
                    .iter()
                    .map(|c| f.par_contains_array(c.as_ref()))
                    .collect::<Result<Vec<_>, _>>()
            })
            .map_err(to_py)?;
        answers_to_py(py, &answers, arrow)
    }

    /// The bitset's size in bytes (a multiple of 32: one block each).
    #[getter]
    fn num_bytes(&self) -> usize {
        self.read().num_bytes()
    }

    /// The fraction of bits set.
    #[getter]
    fn fill_ratio(&self) -> f64 {
        self.read().fill_ratio()
    }

    /// The false-positive rate now, from the fill.
    #[getter]
    fn expected_fpr(&self) -> f64 {
        self.read().expected_fpr()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<ParquetFilter>()
            .is_ok_and(|o| o.get().read().to_parquet_bitset() == self.read().to_parquet_bitset())
    }

    fn __repr__(&self) -> String {
        let f = self.read();
        format!(
            "ParquetFilter(num_bytes={}, fill_ratio={:.4})",
            f.num_bytes(),
            f.fill_ratio()
        )
    }
}

impl ParquetFilter {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, lesshash::parquet::ParquetFilter> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }
}
