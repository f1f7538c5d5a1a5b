//! The `lesshash._lesshash` extension module: the Rust crate's Bloom filter
//! and Count-Min sketch for Python. The Python package around it
//! (`python/lesshash/`) adds key normalisation (`_keys.py`) and the Dask
//! helpers (`dask.py`); docs/python.md has the user's view.
//!
//! Nothing here re-implements the crate: hashing, sizing, the batch and
//! parallel paths and the file format are the crate's, so a key answers the
//! same in Python as in Rust and on the command line.

mod arrays;
mod backing;
mod batch;
mod bloom;
mod count_min;
mod duckdb;
mod errors;
mod frames;
mod keys;
mod parquet;
mod persist;
mod shared;
mod spark;

use pyo3::prelude::*;

// Safe without the GIL (free-threaded CPython): the classes are frozen and
// keep their state behind `shared::Shared`'s lock, which never runs Python
// code while held; keys are read from Python objects before it is taken.
#[pymodule(gil_used = false)]
fn _lesshash(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<bloom::BloomFilter>()?;
    m.add_class::<count_min::CountMinSketch>()?;
    m.add_class::<frames::Payload>()?;
    m.add_class::<parquet::ParquetFilter>()?;
    m.add_class::<spark::SparkBloomFilter>()?;
    m.add("DEFAULT_SEED", lesshash::DEFAULT_SEED)?;
    m.add("KERNEL", lesshash::kernel_name())?;
    m.add("DUCKDB_C_API_VERSION", duckdb::C_API_VERSION)?;
    m.add_function(wrap_pyfunction!(random_seed, m)?)?;
    Ok(())
}

/// A secret 64-bit seed drawn from the operating system's random source
/// (`lesshash::random_seed`): pass it as `seed=` to every filter that is to
/// be combined, when others choose the keys.
#[pyfunction]
fn random_seed() -> PyResult<u64> {
    lesshash::random_seed().map_err(errors::to_py)
}
