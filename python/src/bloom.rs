//! `lesshash.BloomFilter`: the crate's `BloomFilter`, with batch calls over
//! NumPy and Arrow arrays.

use lesshash::{DEFAULT_SEED, Layout, Scheme};
use numpy::{IntoPyArray, PyArray1};
use pyo3::basic::CompareOp;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

use crate::batch::{PARALLEL_FROM, Sink, feed};
use crate::errors::{to_py, unsigned};
use crate::keys::{KeyBytes, key_bytes};
use crate::persist;
use crate::shared::{Shared, compare, read_both, write_from};

/// A Bloom filter: "possibly in the set" or "certainly not", in a fixed number
/// of bits, from one XXH3-128 hash per key.
///
/// ``BloomFilter(expected_items, fpr)`` sizes the filter so that, after
/// `expected_items` distinct keys, a key never added is reported present
/// with probability at most `fpr`. Keys are ``int`` (64-bit), ``str``,
/// ``bytes``, or arrays of them (NumPy, PyArrow, pandas); a key answers the
/// same here as in the Rust crate and the ``lesshash`` command-line tool.
///
/// Threads may share a filter: queries run side by side, an insert waits
/// for them and they for it (without holding the GIL).
#[pyclass(module = "lesshash", name = "BloomFilter", frozen)]
pub struct BloomFilter {
    inner: Shared<lesshash::BloomFilter>,
}

impl BloomFilter {
    fn wrap(inner: lesshash::BloomFilter) -> Self {
        Self {
            inner: Shared::new(inner),
        }
    }
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

/// Batch inserts, on rayon's threads from [`PARALLEL_FROM`] keys on (the
/// crate's parallel insert is bit-identical to the sequential one).
struct Insert<'a>(&'a Shared<lesshash::BloomFilter>);

impl Sink for Insert<'_> {
    fn u64s(&mut self, py: Python<'_>, keys: &[u64], _: usize) {
        self.0.write_detached(py, |f| insert(f, keys));
    }
    fn bytes(&mut self, py: Python<'_>, keys: &[&[u8]], _: usize) {
        self.0.write_detached(py, |f| insert(f, keys));
    }
}

fn insert<K: lesshash::Key + Sync>(filter: &mut lesshash::BloomFilter, keys: &[K]) {
    if keys.len() >= PARALLEL_FROM {
        filter.par_insert_batch(keys);
    } else {
        filter.insert_batch(keys);
    }
}

struct Contains<'a> {
    filter: &'a Shared<lesshash::BloomFilter>,
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
    fn u64s(&mut self, py: Python<'_>, keys: &[u64], _: usize) {
        let filter = self.filter;
        let out = self.room(keys.len());
        filter.read_detached(py, |f| contains(f, keys, out));
    }
    fn bytes(&mut self, py: Python<'_>, keys: &[&[u8]], _: usize) {
        let filter = self.filter;
        let out = self.room(keys.len());
        filter.read_detached(py, |f| contains(f, keys, out));
    }
}

fn contains<K: lesshash::Key + Sync>(filter: &lesshash::BloomFilter, keys: &[K], out: &mut [bool]) {
    // Lengths agree by construction: the only error the batch can return.
    let _ = if keys.len() >= PARALLEL_FROM {
        filter.par_contains_batch(keys, out)
    } else {
        filter.contains_batch(keys, out)
    };
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
        Ok(Self::wrap(inner))
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
        Ok(Self::wrap(inner))
    }

    /// Adds one key.
    fn add(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        // The key is read before the lock is taken (reading may run Python
        // code); an integer as `[u8; 8]`, whose length the hash then knows.
        match key_bytes(key)? {
            KeyBytes::Int(k) => self.inner.write(py, |f| f.insert(&k)),
            k => self.inner.write(py, |f| f.insert(k.as_slice())),
        }
        Ok(())
    }

    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(match key_bytes(key)? {
            KeyBytes::Int(k) => self.inner.read(py, |f| f.contains(&k)),
            k => self.inner.read(py, |f| f.contains(k.as_slice())),
        })
    }

    /// Adds every key of an array (NumPy, PyArrow, pandas) or iterable; the
    /// GIL is released while the keys are inserted. Returns the number of
    /// keys.
    fn add_many(&self, keys: &Bound<'_, PyAny>) -> PyResult<usize> {
        feed(keys, &mut Insert(&self.inner))
    }

    /// Adds every key of an iterable (as `set.update`); same as `add_many`.
    fn update(&self, keys: &Bound<'_, PyAny>) -> PyResult<()> {
        feed(keys, &mut Insert(&self.inner)).map(drop)
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
    fn union(&self, py: Python<'_>, other: &BloomFilter) -> PyResult<BloomFilter> {
        read_both(
            py,
            &self.inner,
            &other.inner,
            lesshash::BloomFilter::union_of,
        )
        .map(BloomFilter::wrap)
        .map_err(to_py)
    }

    fn __or__(&self, py: Python<'_>, other: &Bound<'_, BloomFilter>) -> PyResult<BloomFilter> {
        self.union(py, other.get())
    }

    fn __ior__(slf: &Bound<'_, Self>, other: &Bound<'_, BloomFilter>) -> PyResult<()> {
        if slf.is(other) {
            // `f |= f`: the union with itself is itself (and its lock cannot
            // be held for writing and reading at once).
            return Ok(());
        }
        write_from(slf.py(), &slf.get().inner, &other.get().inner, |a, b| {
            a.union(b)
        })
        .map_err(to_py)
    }

    /// ``==`` and ``!=``: equal parameters and bits (and insert counts).
    fn __richcmp__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<BloomFilter>() else {
            return Ok(py.NotImplemented());
        };
        compare(py, &self.inner, &other.get().inner, op)
    }

    /// An independent copy.
    fn copy(&self, py: Python<'_>) -> BloomFilter {
        BloomFilter::wrap(self.inner.read_detached(py, Clone::clone))
    }

    fn __copy__(&self, py: Python<'_>) -> BloomFilter {
        self.copy(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> BloomFilter {
        self.copy(py)
    }

    /// Removes every key (the size and parameters stay).
    fn clear(&self, py: Python<'_>) {
        self.inner.write_detached(py, lesshash::BloomFilter::clear);
    }

    /// The filter in lesshash's binary format (the crate's and the CLI's).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        persist::to_bytes(py, &self.inner)
    }

    /// A filter from `to_bytes`'s output (or a file's contents); every field
    /// and both checksums are verified (`ValueError` names the one at fault).
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<BloomFilter> {
        persist::from_bytes(data).map(BloomFilter::wrap)
    }

    /// Writes the filter to `path` atomically (a temporary file beside it,
    /// synced, then renamed over it).
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        persist::save(py, &self.inner, &path)
    }

    /// Reads a filter written by `save`, the crate or the CLI.
    #[classmethod]
    fn load(cls: &Bound<'_, PyType>, path: std::path::PathBuf) -> PyResult<BloomFilter> {
        persist::load(cls.py(), &path).map(BloomFilter::wrap)
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        persist::reduce(slf.as_any())
    }

    /// Bits in the filter (m).
    #[getter]
    fn bits(&self, py: Python<'_>) -> u64 {
        self.inner.read(py, |f| f.num_bits())
    }

    /// Probes per key (k).
    #[getter]
    fn hashes(&self, py: Python<'_>) -> u32 {
        self.inner.read(py, |f| f.num_hashes())
    }

    #[getter]
    fn layout(&self, py: Python<'_>) -> &'static str {
        self.inner.read(py, |f| f.layout().name())
    }

    #[getter]
    fn scheme(&self, py: Python<'_>) -> &'static str {
        self.inner.read(py, |f| f.scheme().name())
    }

    #[getter]
    fn seed(&self, py: Python<'_>) -> u64 {
        self.inner.read(py, |f| f.seed())
    }

    /// Bits per key added so far (`bits / insert_calls`; repeats count), or
    /// ``None`` before the first key.
    #[getter]
    fn bits_per_key(&self, py: Python<'_>) -> Option<f64> {
        self.inner.read(py, |f| {
            let n = f.insert_calls();
            (n > 0).then(|| f.num_bits() as f64 / n as f64)
        })
    }

    /// Keys added so far, repeats included (kept in the file; unions add).
    #[getter]
    fn insert_calls(&self, py: Python<'_>) -> u64 {
        self.inner.read(py, |f| f.insert_calls())
    }

    /// The false-positive rate now, from the fill and the layout's formula.
    #[getter]
    fn expected_fpr(&self, py: Python<'_>) -> f64 {
        self.inner.read(py, |f| f.expected_fpr())
    }

    /// The number of distinct keys, estimated from the fill.
    #[getter]
    fn estimated_len(&self, py: Python<'_>) -> f64 {
        self.inner.read(py, |f| f.estimated_len())
    }

    /// The fraction of bits set.
    #[getter]
    fn fill_ratio(&self, py: Python<'_>) -> f64 {
        self.inner.read(py, |f| f.fill_ratio())
    }

    /// Memory held by the bits, in bytes.
    #[getter]
    fn nbytes(&self, py: Python<'_>) -> usize {
        self.inner.read(py, |f| f.size_in_bytes())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        self.inner.read(py, |f| {
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
        })
    }
}
