//! `lesshash.CountMinSketch`: the crate's two-hash Count-Min sketch.

use lesshash::CountMinScheme;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::basic::CompareOp;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

use crate::batch::{Keys, answers, feed, with_key_data};
use crate::errors::{named, to_py, unsigned};
use crate::keys::{KeyBytes, key_bytes};
use crate::persist;
use crate::shared::{Shared, compare, write_from};

/// A Count-Min sketch: frequency estimates that never undercount, off by at
/// most `epsilon` times the total count with probability at least
/// `1 - delta`, from one XXH3-128 hash per key (``scheme="double"``, the
/// default) or one hash per table (``"independent"``).
///
/// Threads may share a sketch, as a `BloomFilter` (docs/python.md).
#[pyclass(module = "lesshash", name = "CountMinSketch", frozen)]
pub struct CountMinSketch {
    inner: Shared<lesshash::CountMinSketch>,
}

impl CountMinSketch {
    fn wrap(inner: lesshash::CountMinSketch) -> Self {
        Self {
            inner: Shared::new(inner),
        }
    }
}

/// Batch adds of `count` each, with the crate's `par_add_batch` (the
/// sequential counters; on rayon's threads when the crate finds it pays,
/// never for conservative sketches).
fn add(sketch: &mut lesshash::CountMinSketch, keys: Keys<'_>, count: u64) {
    with_key_data!(keys, k => sketch.par_add_batch(k, count));
}

/// Batch adds of one count per key (`counts`: as long as the keys), with
/// the crate's `par_add_updates`.
fn add_counts(sketch: &mut lesshash::CountMinSketch, keys: Keys<'_>, counts: &[u64]) {
    with_key_data!(keys, k => {
        let updates: Vec<_> = k.iter().copied().zip(counts.iter().copied()).collect();
        sketch.par_add_updates(&updates);
    });
}

#[pymethods]
impl CountMinSketch {
    /// A sketch sized for additive error `epsilon` (a fraction of the total
    /// count) with failure probability `delta`, or with explicit `width`
    /// (prime for ``"double"``) and `depth`. `conservative=True` turns on
    /// conservative update (smaller overestimates; merge still adds).
    #[new]
    #[pyo3(signature = (epsilon = None, delta = None, *, width = None, depth = None, scheme = None, seed = None, conservative = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        epsilon: Option<f64>,
        delta: Option<f64>,
        width: Option<&Bound<'_, PyAny>>,
        depth: Option<&Bound<'_, PyAny>>,
        scheme: Option<&str>,
        seed: Option<&Bound<'_, PyAny>>,
        conservative: bool,
    ) -> PyResult<Self> {
        let scheme = match scheme {
            None => CountMinScheme::default(),
            Some(name) => named::<CountMinScheme>(name)?,
        };
        let mut b = lesshash::CountMinSketch::builder()
            .scheme(scheme)
            .conservative(conservative);
        if epsilon.is_none() && delta.is_none() && width.is_none() && depth.is_none() {
            return Err(PyValueError::new_err(
                "give `epsilon` and `delta`, or `width` and `depth`",
            ));
        }
        if let Some(e) = epsilon {
            b = b.epsilon(e);
        }
        if let Some(d) = delta {
            b = b.delta(d);
        }
        if let Some(w) = width {
            b = b.width(unsigned(w, "width")?);
        }
        if let Some(d) = depth {
            let d = unsigned(d, "depth")?;
            b = b.depth(u32::try_from(d).map_err(|_| {
                PyValueError::new_err(format!("invalid parameter `depth`: {d} is too large"))
            })?);
        }
        if let Some(s) = seed {
            b = b.seed(crate::errors::seed(s)?);
        }
        Ok(Self::wrap(b.build().map_err(to_py)?))
    }

    /// Adds `count` occurrences of `key`.
    #[pyo3(signature = (key, count = None))]
    fn add(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        count: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let count = count.map_or(Ok(1), |c| unsigned(c, "count"))?;
        match key_bytes(key)? {
            KeyBytes::Int(k) => self.inner.write(py, |s| s.add(&k, count)),
            k => self.inner.write(py, |s| s.add(k.as_slice(), count)),
        }
        Ok(())
    }

    /// Adds every key of an array or iterable, `counts` times each: one int
    /// for all, or an array of one count per key.
    #[pyo3(signature = (keys, counts = None))]
    fn add_many(
        &self,
        keys: &Bound<'_, PyAny>,
        counts: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        let add_each = |count: u64| {
            feed(keys, |py, keys, _| {
                self.inner.write_detached(py, |s| add(s, keys, count));
                Ok(())
            })
        };
        let Some(counts) = counts else {
            return add_each(1);
        };
        if let Ok(c) = unsigned(counts, "counts") {
            return add_each(c);
        }
        let array = crate::batch::counts_array(counts)?;
        let counts: PyReadonlyArray1<'_, u64> = array.extract()?;
        let counts = counts
            .as_slice()
            .map_err(|_| PyValueError::new_err("internal: normalized counts are not contiguous"))?;
        // Checked up front where the key count is known, so that a length
        // mismatch adds nothing.
        if let Ok(n) = keys.len()
            && n != counts.len()
        {
            return Err(PyValueError::new_err(format!(
                "`counts` has {} entries for {n} keys",
                counts.len()
            )));
        }
        let n = feed(keys, |py, keys, first| {
            // `feed` is given at most `counts.len()` keys (checked after),
            // so a longer batch stops here rather than reading past the
            // counts.
            let end = (first + keys.len()).min(counts.len());
            let counts = &counts[first.min(end)..end];
            self.inner
                .write_detached(py, |s| add_counts(s, keys, counts));
            Ok(())
        })?;
        if n != counts.len() {
            return Err(PyValueError::new_err(format!(
                "`counts` has {} entries for {n} keys (the keys up to the shorter length were \
                 added)",
                counts.len()
            )));
        }
        Ok(n)
    }

    /// The estimated count of `key` (never below the true count).
    fn estimate(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(match key_bytes(key)? {
            KeyBytes::Int(k) => self.inner.read(py, |s| s.estimate(&k)),
            k => self.inner.read(py, |s| s.estimate(k.as_slice())),
        })
    }

    /// Estimates for every key, as a NumPy ``uint64`` array.
    fn estimate_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<u64>>> {
        // The sketch records no key kind: any keys estimate.
        let (out, _) = answers(keys, |py, keys, out| {
            self.inner.read_detached(py, |s| {
                with_key_data!(keys, k => s.estimate_batch(k, out)).ok();
            });
            Ok(())
        })?;
        Ok(out.into_pyarray(py))
    }

    /// Adds `other`'s counts (same dimensions, scheme and seed).
    fn merge(slf: &Bound<'_, Self>, other: &Bound<'_, CountMinSketch>) -> PyResult<()> {
        let py = slf.py();
        if slf.is(other) {
            // Merging a sketch into itself doubles it: from a copy, as its
            // lock cannot be held for writing and reading at once.
            let copy = slf.get().inner.read_detached(py, Clone::clone);
            return slf
                .get()
                .inner
                .write_detached(py, |s| s.merge(&copy))
                .map_err(to_py);
        }
        write_from(py, &slf.get().inner, &other.get().inner, |a, b| a.merge(b)).map_err(to_py)
    }

    /// ``==`` and ``!=``: equal parameters and counters.
    fn __richcmp__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<CountMinSketch>() else {
            return Ok(py.NotImplemented());
        };
        compare(py, &self.inner, &other.get().inner, op, |a, b| Ok(a == b))
    }

    /// Sets every counter to zero.
    fn clear(&self, py: Python<'_>) {
        self.inner
            .write_detached(py, lesshash::CountMinSketch::clear);
    }

    fn copy(&self, py: Python<'_>) -> CountMinSketch {
        CountMinSketch::wrap(self.inner.read_detached(py, Clone::clone))
    }

    fn __copy__(&self, py: Python<'_>) -> CountMinSketch {
        self.copy(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> CountMinSketch {
        self.copy(py)
    }

    /// The sketch in lesshash's binary Count-Min format.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        persist::to_bytes(py, &self.inner)
    }

    /// A sketch from `to_bytes`'s output; every field and the checksums are
    /// verified (`ValueError` names the one at fault).
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<CountMinSketch> {
        persist::from_bytes(data).map(CountMinSketch::wrap)
    }

    /// Writes the sketch to `path` atomically (a temporary file beside it,
    /// synced, then renamed over it).
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        persist::save(py, &self.inner, &path)
    }

    /// Reads a sketch written by `save` or the crate.
    #[classmethod]
    fn load(cls: &Bound<'_, PyType>, path: std::path::PathBuf) -> PyResult<CountMinSketch> {
        persist::load(cls.py(), &path).map(CountMinSketch::wrap)
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        persist::reduce(slf.as_any())
    }

    /// Counters per table.
    #[getter]
    fn width(&self, py: Python<'_>) -> u64 {
        self.inner.read(py, |s| s.width())
    }

    /// Tables per copy.
    #[getter]
    fn depth(&self, py: Python<'_>) -> u32 {
        self.inner.read(py, |s| s.depth())
    }

    /// The sum of all counts added (saturating).
    #[getter]
    fn total(&self, py: Python<'_>) -> u64 {
        self.inner.read(py, |s| s.total())
    }

    #[getter]
    fn scheme(&self, py: Python<'_>) -> &'static str {
        self.inner.read(py, |s| s.scheme().name())
    }

    #[getter]
    fn seed(&self, py: Python<'_>) -> u64 {
        self.inner.read(py, |s| s.seed())
    }

    #[getter]
    fn conservative(&self, py: Python<'_>) -> bool {
        self.inner.read(py, |s| s.is_conservative())
    }

    /// Memory held by the counters, in bytes.
    #[getter]
    fn nbytes(&self, py: Python<'_>) -> usize {
        self.inner.read(py, |s| s.size_in_bytes())
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        self.inner.read(py, |s| {
            format!(
                "CountMinSketch(scheme='{}', width={}, depth={}, copies={}, conservative={}, \
             total={}, seed={:#x})",
                s.scheme().name(),
                s.width(),
                s.depth(),
                s.copies(),
                if s.is_conservative() { "True" } else { "False" },
                s.total(),
                s.seed(),
            )
        })
    }
}
