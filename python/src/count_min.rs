//! `lesshash.CountMinSketch`: the crate's two-hash Count-Min sketch.

use lesshash::CountMinScheme;
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

use crate::batch::{Sink, feed};
use crate::errors::{to_py, unsigned};
use crate::keys::key_bytes;
use crate::persist;

/// A Count-Min sketch: frequency estimates that never undercount, off by at
/// most `epsilon` times the total count with probability at least
/// `1 - delta`, from one XXH3-128 hash per key (``scheme="double"``, the
/// default) or one hash per table (``"independent"``).
#[pyclass(module = "lesshash", name = "CountMinSketch", eq)]
#[derive(Clone, PartialEq)]
pub struct CountMinSketch {
    inner: lesshash::CountMinSketch,
}

fn parse_scheme(name: &str) -> PyResult<CountMinScheme> {
    match name {
        "double" => Ok(CountMinScheme::DoubleHashing),
        "independent" => Ok(CountMinScheme::Independent),
        other => Err(PyValueError::new_err(format!(
            "unknown scheme {other:?}: expected 'double' or 'independent'"
        ))),
    }
}

struct Add<'a> {
    sketch: &'a mut lesshash::CountMinSketch,
    count: u64,
}

impl Sink for Add<'_> {
    fn u64s(&mut self, keys: &[u64], _: usize) {
        self.sketch.add_batch(keys, self.count);
    }
    fn bytes(&mut self, keys: &[&[u8]], _: usize) {
        self.sketch.add_batch(keys, self.count);
    }
}

/// Per-key counts, aligned with the keys by their index in the batch.
struct AddCounts<'a> {
    sketch: &'a mut lesshash::CountMinSketch,
    counts: &'a [u64],
}

impl AddCounts<'_> {
    fn counts(&self, first: usize, n: usize) -> &[u64] {
        // `feed` is given at most `counts.len()` keys (checked after), so a
        // longer batch stops here rather than reading past the counts.
        let end = (first + n).min(self.counts.len());
        &self.counts[first.min(end)..end]
    }
}

impl Sink for AddCounts<'_> {
    fn u64s(&mut self, keys: &[u64], first: usize) {
        let counts = self.counts(first, keys.len());
        let updates: Vec<(u64, u64)> = keys.iter().copied().zip(counts.iter().copied()).collect();
        self.sketch.add_updates(&updates);
    }
    fn bytes(&mut self, keys: &[&[u8]], first: usize) {
        let counts = self.counts(first, keys.len());
        let updates: Vec<(&[u8], u64)> = keys.iter().copied().zip(counts.iter().copied()).collect();
        self.sketch.add_updates(&updates);
    }
}

struct Estimate<'a> {
    sketch: &'a lesshash::CountMinSketch,
    out: Vec<u64>,
}

impl Sink for Estimate<'_> {
    fn u64s(&mut self, keys: &[u64], _: usize) {
        let start = self.out.len();
        self.out.resize(start + keys.len(), 0);
        let _ = self.sketch.estimate_batch(keys, &mut self.out[start..]);
    }
    fn bytes(&mut self, keys: &[&[u8]], _: usize) {
        let start = self.out.len();
        self.out.resize(start + keys.len(), 0);
        let _ = self.sketch.estimate_batch(keys, &mut self.out[start..]);
    }
}

#[pymethods]
impl CountMinSketch {
    /// A sketch sized for additive error `epsilon` (a fraction of the total
    /// count) with failure probability `delta`, or with explicit `width`
    /// (prime for ``"double"``) and `depth`. `conservative=True` turns on
    /// conservative update (smaller overestimates; merge still adds).
    #[new]
    #[pyo3(signature = (epsilon = None, delta = None, *, width = None, depth = None, scheme = "double", seed = None, conservative = false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        epsilon: Option<f64>,
        delta: Option<f64>,
        width: Option<&Bound<'_, PyAny>>,
        depth: Option<&Bound<'_, PyAny>>,
        scheme: &str,
        seed: Option<&Bound<'_, PyAny>>,
        conservative: bool,
    ) -> PyResult<Self> {
        let mut b = lesshash::CountMinSketch::builder()
            .scheme(parse_scheme(scheme)?)
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
            b = b.seed(unsigned(s, "seed")?);
        }
        Ok(Self {
            inner: b.build().map_err(to_py)?,
        })
    }

    /// Adds `count` occurrences of `key`.
    #[pyo3(signature = (key, count = None))]
    fn add(&mut self, key: &Bound<'_, PyAny>, count: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let count = count.map_or(Ok(1), |c| unsigned(c, "count"))?;
        self.inner.add(key_bytes(key)?.as_slice(), count);
        Ok(())
    }

    /// Adds every key of an array or iterable, `counts` times each: one int
    /// for all, or an array of one count per key.
    #[pyo3(signature = (keys, counts = None))]
    fn add_many(
        &mut self,
        keys: &Bound<'_, PyAny>,
        counts: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        let Some(counts) = counts else {
            return feed(
                keys,
                &mut Add {
                    sketch: &mut self.inner,
                    count: 1,
                },
            );
        };
        if let Ok(c) = unsigned(counts, "counts") {
            return feed(
                keys,
                &mut Add {
                    sketch: &mut self.inner,
                    count: c,
                },
            );
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
        let n = feed(
            keys,
            &mut AddCounts {
                sketch: &mut self.inner,
                counts,
            },
        )?;
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
    fn estimate(&self, key: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(self.inner.estimate(key_bytes(key)?.as_slice()))
    }

    /// Estimates for every key, as a NumPy ``uint64`` array.
    fn estimate_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyArray1<u64>>> {
        let mut sink = Estimate {
            sketch: &self.inner,
            out: Vec::new(),
        };
        feed(keys, &mut sink)?;
        Ok(sink.out.into_pyarray(py))
    }

    /// Adds `other`'s counts (same dimensions, scheme and seed).
    fn merge(&mut self, other: &CountMinSketch) -> PyResult<()> {
        self.inner.merge(&other.inner).map_err(to_py)
    }

    /// Sets every counter to zero.
    fn clear(&mut self) {
        self.inner.clear();
    }

    fn copy(&self) -> CountMinSketch {
        self.clone()
    }

    fn __copy__(&self) -> CountMinSketch {
        self.clone()
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> CountMinSketch {
        self.clone()
    }

    /// The sketch in lesshash's binary Count-Min format.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        persist::to_bytes(py, &self.inner)
    }

    /// A sketch from `to_bytes`'s output; every field and the checksums are
    /// verified (`ValueError` names the one at fault).
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<CountMinSketch> {
        persist::from_bytes(data).map(|inner| CountMinSketch { inner })
    }

    /// Writes the sketch to `path` atomically (a temporary file beside it,
    /// synced, then renamed over it).
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        persist::save(py, &self.inner, &path)
    }

    /// Reads a sketch written by `save` or the crate.
    #[classmethod]
    fn load(cls: &Bound<'_, PyType>, path: std::path::PathBuf) -> PyResult<CountMinSketch> {
        persist::load(cls.py(), &path).map(|inner| CountMinSketch { inner })
    }

    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyAny>,))> {
        persist::reduce(slf.as_any())
    }

    /// Counters per table.
    #[getter]
    fn width(&self) -> u64 {
        self.inner.width()
    }

    /// Tables per copy.
    #[getter]
    fn depth(&self) -> u32 {
        self.inner.depth()
    }

    /// The sum of all counts added (saturating).
    #[getter]
    fn total(&self) -> u64 {
        self.inner.total()
    }

    #[getter]
    fn scheme(&self) -> &'static str {
        self.inner.scheme().name()
    }

    #[getter]
    fn seed(&self) -> u64 {
        self.inner.seed()
    }

    #[getter]
    fn conservative(&self) -> bool {
        self.inner.is_conservative()
    }

    /// Memory held by the counters, in bytes.
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.size_in_bytes()
    }

    fn __repr__(&self) -> String {
        let s = &self.inner;
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
    }
}
