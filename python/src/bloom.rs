//! `lesshash.BloomFilter`: the crate's `BloomFilter`, with batch calls over
//! NumPy and Arrow arrays.

use lesshash::{DEFAULT_SEED, Layout, Scheme};
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

use crate::batch::{PARALLEL_FROM, Sink, feed};
use crate::errors::{to_py, unsigned};
use crate::keys::key_bytes;
use crate::persist;

/// A Bloom filter: "possibly in the set" or "certainly not", in a fixed number
/// of bits, from one XXH3-128 hash per key.
///
/// ``BloomFilter(expected_items, fpr)`` sizes the filter so that, after
/// `expected_items` distinct keys, a key never added is reported present
/// with probability at most `fpr`. Keys are ``int`` (64-bit), ``str``,
/// ``bytes``, or arrays of them (NumPy, PyArrow, pandas); a key answers the
/// same here as in the Rust crate and the ``lesshash`` command-line tool.
#[pyclass(module = "lesshash", name = "BloomFilter", eq)]
#[derive(Clone, PartialEq)]
pub struct BloomFilter {
    pub(crate) inner: lesshash::BloomFilter,
}

fn parse_layout(name: &str) -> PyResult<Layout> {
    Layout::from_name(name).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown layout {name:?}: expected one of 'blocked', 'split-block', 'classic', \
             'partitioned'"
        ))
    })
}

fn parse_scheme(layout: Layout, name: Option<&str>) -> PyResult<Scheme> {
    match name {
        None => Ok(layout.default_scheme()),
        Some(name) => Scheme::from_name(name).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown scheme {name:?}: expected one of 'double', 'enhanced-cube', \
                 'enhanced-square', 'independent'"
            ))
        }),
    }
}

fn builder(
    layout: &str,
    scheme: Option<&str>,
    seed: Option<&Bound<'_, PyAny>>,
) -> PyResult<lesshash::Builder> {
    let layout = parse_layout(layout)?;
    let scheme = parse_scheme(layout, scheme)?;
    let seed = match seed {
        None => DEFAULT_SEED,
        Some(s) => unsigned(s, "seed")?,
    };
    Ok(lesshash::BloomFilter::builder()
        .layout(layout)
        .scheme(scheme)
        .seed(seed))
}

/// Inserts run on the calling thread: the crate's parallel insert sets
/// bits with an atomic `fetch_or` per word, and measured 4.5x slower than
/// the sequential batch on the 2-core development machine (36 against 8 ns
/// per key at 1e6 keys, docs/python.md).
struct Insert<'a>(&'a mut lesshash::BloomFilter);

impl Sink for Insert<'_> {
    fn u64s(&mut self, keys: &[u64], _: usize) {
        self.0.insert_batch(keys);
    }
    fn bytes(&mut self, keys: &[&[u8]], _: usize) {
        self.0.insert_batch(keys);
    }
}

struct Contains<'a> {
    filter: &'a lesshash::BloomFilter,
    out: Vec<bool>,
}

impl Contains<'_> {
    /// Room for `n` more answers; returns where they go.
    fn room(&mut self, n: usize) -> &mut [bool] {
        let start = self.out.len();
        self.out.resize(start + n, false);
        &mut self.out[start..]
    }
}

impl Sink for Contains<'_> {
    fn u64s(&mut self, keys: &[u64], _: usize) {
        let filter = self.filter;
        let out = self.room(keys.len());
        // Lengths agree by construction: the only error the batch can return.
        let _ = if keys.len() >= PARALLEL_FROM {
            filter.par_contains_batch(keys, out)
        } else {
            filter.contains_batch(keys, out)
        };
    }
    fn bytes(&mut self, keys: &[&[u8]], _: usize) {
        let filter = self.filter;
        let out = self.room(keys.len());
        let _ = if keys.len() >= PARALLEL_FROM {
            filter.par_contains_batch(keys, out)
        } else {
            filter.contains_batch(keys, out)
        };
    }
}

#[pymethods]
impl BloomFilter {
    /// A filter for `expected_items` keys at false-positive rate `fpr`.
    ///
    /// `layout`: ``"blocked"`` (default: one cache line per key),
    /// ``"split-block"``, ``"classic"`` or ``"partitioned"``. `scheme`: how
    /// the k probes derive from the hash (``"double"``, ``"enhanced-cube"``,
    /// ``"enhanced-square"``, ``"independent"``); the layout's default when
    /// omitted. `seed`: a 64-bit seed (filters combine only with equal seeds).
    #[new]
    #[pyo3(signature = (expected_items, fpr, layout = "blocked", scheme = None, seed = None))]
    fn new(
        expected_items: &Bound<'_, PyAny>,
        fpr: f64,
        layout: &str,
        scheme: Option<&str>,
        seed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let n = unsigned(expected_items, "expected_items")?;
        let inner = builder(layout, scheme, seed)?
            .expected_items(n)
            .fpr(fpr)
            .build()
            .map_err(to_py)?;
        Ok(Self { inner })
    }

    /// A filter of `bits` bits and `hashes` probes per key, as given (the
    /// classic and partitioned layouts grow `bits` to a prime range with a
    /// two-hash scheme; the blocked layouts to whole 512-bit blocks).
    #[classmethod]
    #[pyo3(signature = (bits, hashes, layout = "blocked", scheme = None, seed = None))]
    fn from_bits(
        _cls: &Bound<'_, PyType>,
        bits: &Bound<'_, PyAny>,
        hashes: &Bound<'_, PyAny>,
        layout: &str,
        scheme: Option<&str>,
        seed: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let m = unsigned(bits, "bits")?;
        let k = u32::try_from(unsigned(hashes, "hashes")?).map_err(|_| {
            PyValueError::new_err("invalid parameter `hashes`: at most 64 probes per key")
        })?;
        let inner = builder(layout, scheme, seed)?
            .bits(m)
            .hashes(k)
            .build()
            .map_err(to_py)?;
        Ok(Self { inner })
    }

    /// Adds one key.
    fn add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.inner.insert(key_bytes(key)?.as_slice());
        Ok(())
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.inner.contains(key_bytes(key)?.as_slice()))
    }

    /// Adds every key of an array (NumPy, PyArrow, pandas) or iterable; the
    /// GIL is released while the keys are inserted. Returns the number of
    /// keys.
    fn add_many(&mut self, keys: &Bound<'_, PyAny>) -> PyResult<usize> {
        feed(keys, &mut Insert(&mut self.inner))
    }

    /// Adds every key of an iterable (as `set.update`); same as `add_many`.
    fn update(&mut self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        feed(keys, &mut Insert(&mut self.inner)).map(drop)
    }

    /// Whether each key may be in the set: a NumPy ``bool`` array, one entry
    /// per key, in order. ``False`` is certain; ``True`` is wrong with
    /// probability about `expected_fpr`.
    fn contains_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let mut sink = Contains {
            filter: &self.inner,
            out: Vec::new(),
        };
        feed(keys, &mut sink)?;
        Ok(sink.out.into_pyarray(py))
    }

    /// The union with `other` as a new filter (both must have equal layout,
    /// scheme, bits, hashes and seed): exactly the filter of both key sets.
    fn union(&self, other: &BloomFilter) -> PyResult<BloomFilter> {
        lesshash::BloomFilter::union_of(&self.inner, &other.inner)
            .map(|inner| BloomFilter { inner })
            .map_err(to_py)
    }

    fn __or__(&self, other: &Bound<'_, BloomFilter>) -> PyResult<BloomFilter> {
        self.union(&other.borrow())
    }

    fn __ior__(slf: &Bound<'_, Self>, other: &Bound<'_, BloomFilter>) -> PyResult<()> {
        if slf.is(other) {
            // `f |= f`: the union with itself is itself (and borrowing it
            // mutably and shared at once would fail).
            return Ok(());
        }
        let other = other.borrow();
        slf.borrow_mut().inner.union(&other.inner).map_err(to_py)
    }

    /// An independent copy.
    fn copy(&self) -> BloomFilter {
        self.clone()
    }

    fn __copy__(&self) -> BloomFilter {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> BloomFilter {
        self.clone()
    }

    /// Removes every key (the size and parameters stay).
    fn clear(&mut self) {
        self.inner.clear();
    }

    /// The filter in lesshash's binary format (the crate's and the CLI's).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        persist::to_bytes(py, &self.inner)
    }

    /// A filter from `to_bytes`'s output (or a file's contents); every field
    /// and both checksums are verified (`ValueError` names the one at fault).
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<BloomFilter> {
        persist::from_bytes(data).map(|inner| BloomFilter { inner })
    }

    /// Writes the filter to `path` atomically (a temporary file beside it,
    /// synced, then renamed over it).
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        persist::save(py, &self.inner, &path)
    }

    /// Reads a filter written by `save`, the crate or the CLI.
    #[classmethod]
    fn load(cls: &Bound<'_, PyType>, path: std::path::PathBuf) -> PyResult<BloomFilter> {
        persist::load(cls.py(), &path).map(|inner| BloomFilter { inner })
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        persist::reduce(slf.as_any())
    }

    /// Bits in the filter (m).
    #[getter]
    fn bits(&self) -> u64 {
        self.inner.num_bits()
    }

    /// Probes per key (k).
    #[getter]
    fn hashes(&self) -> u32 {
        self.inner.num_hashes()
    }

    #[getter]
    fn layout(&self) -> &'static str {
        self.inner.layout().name()
    }

    #[getter]
    fn scheme(&self) -> &'static str {
        self.inner.scheme().name()
    }

    #[getter]
    fn seed(&self) -> u64 {
        self.inner.seed()
    }

    /// Bits per key added so far (`bits / insert_calls`; repeats count), or
    /// ``None`` before the first key.
    #[getter]
    fn bits_per_key(&self) -> Option<f64> {
        let n = self.inner.insert_calls();
        (n > 0).then(|| self.inner.num_bits() as f64 / n as f64)
    }

    /// Keys added so far, repeats included (kept in the file; unions add).
    #[getter]
    fn insert_calls(&self) -> u64 {
        self.inner.insert_calls()
    }

    /// The false-positive rate now, from the fill and the layout's formula.
    #[getter]
    fn expected_fpr(&self) -> f64 {
        self.inner.expected_fpr()
    }

    /// The number of distinct keys, estimated from the fill.
    #[getter]
    fn estimated_len(&self) -> f64 {
        self.inner.estimated_len()
    }

    /// The fraction of bits set.
    #[getter]
    fn fill_ratio(&self) -> f64 {
        self.inner.fill_ratio()
    }

    /// Memory held by the bits, in bytes.
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.size_in_bytes()
    }

    fn __repr__(&self) -> String {
        let f = &self.inner;
        format!(
            "BloomFilter(layout='{}', scheme='{}', bits={}, hashes={}, seed={:#x}, \
             insert_calls={}, fill_ratio={:.4}, estimated_len={:.0}, expected_fpr={:.3e})",
            f.layout().name(),
            f.scheme().name(),
            f.num_bits(),
            f.num_hashes(),
            f.seed(),
            f.insert_calls(),
            f.fill_ratio(),
            f.estimated_len(),
            f.expected_fpr(),
        )
    }
}
