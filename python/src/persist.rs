//! Bytes, files and pickling for both classes, through the crate's binary
//! formats (the Bloom filter's v1 and the Count-Min sketch's v1): one body
//! for each operation, with the GIL released while bytes are copied,
//! checksummed or written.

use std::path::Path;

use lesshash::Error;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{at_path, bytes_like, to_py};
use crate::shared::Shared;

/// A crate type with a binary format.
pub trait Persisted: Sized + Send + Sync {
    fn to_bytes(&self) -> Vec<u8>;
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error>;
    fn write_file(&self, path: &Path) -> Result<(), Error>;
    fn read_file(path: &Path) -> Result<Self, Error>;
}

impl Persisted for lesshash::BloomFilter {
    fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes()
    }
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_bytes(bytes)
    }
    fn write_file(&self, path: &Path) -> Result<(), Error> {
        self.write_file(path)
    }
    fn read_file(path: &Path) -> Result<Self, Error> {
        Self::read_file(path)
    }
}

impl Persisted for lesshash::CountMinSketch {
    fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes()
    }
    fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        Self::from_bytes(bytes)
    }
    fn write_file(&self, path: &Path) -> Result<(), Error> {
        self.write_file(path)
    }
    fn read_file(path: &Path) -> Result<Self, Error> {
        Self::read_file(path)
    }
}

/// `value` serialized, as Python `bytes`.
pub fn to_bytes<'py, T: Persisted>(py: Python<'py>, value: &Shared<T>) -> Bound<'py, PyBytes> {
    let bytes = value.read_detached(py, T::to_bytes);
    PyBytes::new(py, &bytes)
}

/// A value from bytes-like `data`; every field and checksum verified.
pub fn from_bytes<T: Persisted>(data: &Bound<'_, PyAny>) -> PyResult<T> {
    let data = bytes_like(data)?;
    let bytes = data.as_bytes();
    data.py().detach(|| T::from_bytes(bytes)).map_err(to_py)
}

/// Writes `value` to `path` atomically (a temporary file beside it, synced,
/// renamed over it).
pub fn save<T: Persisted>(py: Python<'_>, value: &Shared<T>, path: &Path) -> PyResult<()> {
    value
        .read_detached(py, |v| v.write_file(path))
        .map_err(|e| at_path(e, path))
}

/// Reads a value written by `save`, the crate or the CLI.
pub fn load<T: Persisted>(py: Python<'_>, path: &Path) -> PyResult<T> {
    py.detach(|| T::read_file(path))
        .map_err(|e| at_path(e, path))
}

/// Pickling: `(type(obj).from_bytes, (obj.to_bytes(),))`.
pub fn reduce<'py>(obj: &Bound<'py, PyAny>) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
    let from_bytes = obj.get_type().getattr("from_bytes")?;
    Ok((from_bytes, (obj.call_method0("to_bytes")?,)))
}
