//! Arrow arrays in and answers out, for the filters whose keys are Arrow
//! arrays only (Parquet's `ParquetFilter`, Spark's `SparkBloomFilter`:
//! `lesshash/parquet.py` and `lesshash/spark.py` convert other batches).

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray};
use numpy::IntoPyArray;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3_arrow::{PyArray, PyChunkedArray};

/// The chunks of an Arrow array or chunked array (`__arrow_c_array__`,
/// `__arrow_c_stream__`), zero copy.
pub fn chunks(keys: &Bound<'_, PyAny>) -> PyResult<Vec<ArrayRef>> {
    let py = keys.py();
    if keys.hasattr(pyo3::intern!(py, "__arrow_c_array__"))? {
        Ok(vec![keys.extract::<PyArray>()?.into_inner().0])
    } else if keys.hasattr(pyo3::intern!(py, "__arrow_c_stream__"))? {
        Ok(keys.extract::<PyChunkedArray>()?.into_inner().0)
    } else {
        Err(PyTypeError::new_err(format!(
            "keys must be an Arrow array (pyarrow, Polars, ...), got {}; \
             lesshash.parquet and lesshash.spark convert other batches",
            keys.get_type()
                .name()
                .map_or_else(|_| "?".into(), |n| n.to_string())
        )))
    }
}

/// The answers of each chunk, end to end: one `pyarrow.BooleanArray` (a
/// null key answers null) if `arrow`, else a NumPy `bool` array (a null
/// key answers `False`).
pub fn answers_to_py<'py>(
    py: Python<'py>,
    answers: &[BooleanArray],
    arrow: bool,
) -> PyResult<Bound<'py, PyAny>> {
    if arrow {
        // One array, as for a Table's filter.
        let n = answers.iter().map(Array::len).sum();
        let mut values = arrow_buffer::BooleanBufferBuilder::new(n);
        let mut nulls = arrow_buffer::NullBufferBuilder::new(n);
        for a in answers {
            values.append_buffer(a.values());
            match a.nulls() {
                Some(v) => nulls.append_buffer(v),
                None => nulls.append_n_non_nulls(a.len()),
            }
        }
        let whole: ArrayRef = Arc::new(BooleanArray::new(values.finish(), nulls.finish()));
        let whole = PyArray::from_array_ref(whole);
        return Ok(whole.to_pyarrow(py)?.unbind().into_bound(py));
    }
    let out: Vec<bool> = answers
        .iter()
        .flat_map(|a: &BooleanArray| (0..a.len()).map(move |i| a.is_valid(i) && a.value(i)))
        .collect();
    Ok(out.into_pyarray(py).into_any())
}
