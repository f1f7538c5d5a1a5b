//! `lesshash.BloomFilter`: the crate's `BloomFilter`, with batch calls over
//! NumPy and Arrow arrays; or, from `BloomFilter.open`, its `MappedFilter`
//! (a read-only map of a filter file) behind the same class and queries.

use lesshash::format::Header;
use lesshash::{DEFAULT_SEED, KeyKind, Layout, Scheme};
use numpy::IntoPyArray;
use pyo3::basic::CompareOp;
use pyo3::exceptions::{PyAttributeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple, PyType};

use crate::backing::{Backing, checksum};
use crate::batch::{Keys, arrow_output, feed_nullable, nulls_error, with_key_data};
use crate::errors::{
    at_path, at_path_because, key_kind_mismatch, named, read_only, to_py, unsigned,
};
use crate::frames::{Payload, with_received};
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
///
/// ``BloomFilter.open(path)`` maps a filter file read-only instead of
/// loading it: the same queries, answered from the file's pages.
#[pyclass(module = "lesshash", name = "BloomFilter", frozen)]
pub struct BloomFilter {
    inner: Shared<Backing>,
}

impl BloomFilter {
    fn wrap(inner: lesshash::BloomFilter) -> Self {
        Self::with_backing(Backing::Owned(inner))
    }

    fn with_backing(backing: Backing) -> Self {
        Self {
            inner: Shared::new(backing),
        }
    }

    /// A new filter: a copy of this one combined (`op`: the crate's
    /// `union` or `intersect`) with each of `others` in turn.
    fn combined(
        &self,
        py: Python<'_>,
        others: &[PyRef<'_, BloomFilter>],
        op: fn(&mut lesshash::BloomFilter, &lesshash::BloomFilter) -> Result<(), lesshash::Error>,
    ) -> PyResult<BloomFilter> {
        let out = self.copy(py)?;
        for other in others {
            write_from(py, &out.inner, &other.inner, |a, b| match a.owned_mut() {
                Some(a) => op(a, &*b.owned()?),
                None => unreachable!("a copy is owned"),
            })
            .map_err(to_py)?;
        }
        Ok(out)
    }

    /// Whether the two filters are equal (`==`).
    fn equal(&self, py: Python<'_>, other: &BloomFilter) -> PyResult<bool> {
        read_both(py, &self.inner, &other.inner, Backing::equals).map_err(to_py)
    }

    /// `TypeError` if the filter is a map (`what`: the refused change, for
    /// the message). Checked before a change reads its keys; a filter never
    /// turns from owned to mapped or back, so the check holds for the
    /// change that follows.
    fn writable(&self, py: Python<'_>, what: &str) -> PyResult<()> {
        self.inner.read(py, |b| match b.mapped() {
            None => Ok(()),
            Some((path, _)) => Err(read_only(path, what)),
        })
    }

    fn map(py: Python<'_>, path: &std::path::Path, verify: bool) -> Result<Self, lesshash::Error> {
        // Absolute, so that the filter pickles (and ships to Dask workers)
        // as a path naming the same file from any working directory.
        let path = std::path::absolute(path).map_err(|source| lesshash::Error::Io {
            context: "making the path absolute",
            source,
        })?;
        py.detach(|| Backing::open(&path, verify))
            .map(Self::with_backing)
    }
}

fn builder(
    layout: Option<&str>,
    scheme: Option<&str>,
    seed: Option<&Bound<'_, PyAny>>,
    hash_family: Option<&str>,
) -> PyResult<lesshash::Builder> {
    let layout = match layout {
        None => Layout::default(),
        Some(name) => named::<Layout>(name)?,
    };
    let scheme = match scheme {
        None => layout.default_scheme(),
        Some(name) => named::<Scheme>(name)?,
    };
    let seed = match seed {
        None => DEFAULT_SEED,
        Some(s) => crate::errors::seed(s)?,
    };
    let family = match hash_family {
        None => lesshash::HashFamily::default(),
        Some(name) => named::<lesshash::HashFamily>(name)?,
    };
    Ok(lesshash::BloomFilter::builder()
        .layout(layout)
        .scheme(scheme)
        .seed(seed)
        .hash_family(family))
}

/// Batch inserts (made only for a writable filter: [`BloomFilter::writable`]),
/// with the crate's `par_insert_batch`, bit-identical to the sequential
/// insert (on rayon's threads when the crate finds it pays); the filter
/// records the keys' kind (`KeyKind::combine`).
fn insert(filter: &mut Backing, keys: Keys<'_>) {
    let Some(filter) = filter.owned_mut() else {
        return; // a map: refused by the caller before the keys were read
    };
    with_key_data!(keys, k => filter.par_insert_batch(k));
    record(filter, keys.kind);
}

/// Records that keys of `kind` were inserted (writes only on a change).
#[inline(always)]
fn record(filter: &mut lesshash::BloomFilter, kind: KeyKind) {
    let now = filter.key_kind();
    if now != kind {
        filter.set_key_kind(now.combine(kind));
    }
}

/// Batch queries, with the crate's `par_contains_batch`. A piece of a
/// typed batch (NumPy, Arrow) is checked against the filter's key kind
/// first; the pieces of a list are checked together by the caller.
fn contains(filter: &Backing, keys: Keys<'_>, out: &mut [bool]) -> Result<(), lesshash::Error> {
    let f = filter.view();
    if keys.typed {
        KeyKind::check(f.key_kind(), keys.kind)?;
    }
    // Lengths agree by construction: the only other error of the batch.
    let _ = with_key_data!(keys, k => f.par_contains_batch(k, out));
    Ok(())
}

#[pymethods]
impl BloomFilter {
    /// A filter for `expected_items` keys at false-positive rate `fpr`.
    ///
    /// `layout`: ``"blocked"`` (the default: one cache line per key),
    /// ``"split-block"``, ``"classic"`` or ``"partitioned"``. `scheme`: how
    /// the k probes derive from the hash (``"double"``, ``"enhanced-cube"``,
    /// ``"enhanced-square"``, ``"independent"``); the layout's default when
    /// omitted. `seed`: a 64-bit seed (filters combine only with equal seeds),
    /// or `"random"` for a secret one drawn from the OS (use it when others
    /// choose the keys; docs/python.md, "Keys chosen by others").
    /// `hash_family`: ``"xxh3-128"`` (the default) or ``"folded-multiply"``
    /// (keys of at most 16 bytes by two multiplies; two-hash schemes
    /// only), recorded in the file.
    #[new]
    #[pyo3(signature = (expected_items, fpr, layout = None, scheme = None, seed = None, hash_family = None))]
    fn new(
        expected_items: &Bound<'_, PyAny>,
        fpr: f64,
        layout: Option<&str>,
        scheme: Option<&str>,
        seed: Option<&Bound<'_, PyAny>>,
        hash_family: Option<&str>,
    ) -> PyResult<Self> {
        let n = unsigned(expected_items, "expected_items")?;
        let inner = builder(layout, scheme, seed, hash_family)?
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
    #[pyo3(signature = (bits, hashes, layout = None, scheme = None, seed = None, hash_family = None))]
    #[allow(clippy::too_many_arguments)]
    fn from_bits(
        _cls: &Bound<'_, PyType>,
        bits: &Bound<'_, PyAny>,
        hashes: &Bound<'_, PyAny>,
        layout: Option<&str>,
        scheme: Option<&str>,
        seed: Option<&Bound<'_, PyAny>>,
        hash_family: Option<&str>,
    ) -> PyResult<Self> {
        let m = unsigned(bits, "bits")?;
        let k = u32::try_from(unsigned(hashes, "hashes")?).map_err(|_| {
            PyValueError::new_err("invalid parameter `hashes`: at most 64 probes per key")
        })?;
        let inner = builder(layout, scheme, seed, hash_family)?
            .bits(m)
            .hashes(k)
            .build()
            .map_err(to_py)?;
        Ok(Self::wrap(inner))
    }

    /// A filter file mapped read-only (``mmap``): the queries of a loaded
    /// filter, answered from the file's pages, so opening costs no copy
    /// and memory holds only the pages queries touch. ``verify=True``
    /// checks the checksum (one pass over the file); ``verify=False``
    /// opens in constant time (header and length still checked). Changes
    /// raise ``TypeError``; ``copy()`` is a writable filter. Errors as
    /// ``load``'s.
    #[classmethod]
    #[pyo3(signature = (path, *, verify = true))]
    fn open(cls: &Bound<'_, PyType>, path: std::path::PathBuf, verify: bool) -> PyResult<Self> {
        Self::map(cls.py(), &path, verify).map_err(|e| at_path(e, &path))
    }

    /// `open` for unpickling (`__reduce__` of a map), with an error that
    /// says why a path is being opened.
    /// `key_kind`: the map's key kind where it was set (else the file's).
    #[classmethod]
    #[pyo3(signature = (path, verify, key_kind = None))]
    fn _open_pickled(
        cls: &Bound<'_, PyType>,
        path: std::path::PathBuf,
        verify: bool,
        key_kind: Option<&str>,
    ) -> PyResult<Self> {
        let key_kind = key_kind.map(crate::errors::key_kind).transpose()?;
        let map = Self::map(cls.py(), &path, verify).map_err(|e| {
            let note = "unpickling a mapped BloomFilter, which pickles as its path: \
                        cannot map it here (the file must be at the same path where \
                        the filter is unpickled): ";
            at_path_because(e, &path, note)
        })?;
        if let Some(kind) = key_kind {
            map.inner.write(cls.py(), |b| b.set_key_kind(kind));
        }
        Ok(map)
    }

    /// Adds one key.
    fn add(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<()> {
        self.writable(py, "add a key")?;
        // The key is read before the lock is taken (reading may run Python
        // code); an integer as `[u8; 8]`, whose length the hash then knows.
        let key = key_bytes(key)?;
        let kind = key.kind();
        self.inner.write(py, |b| {
            if let Some(f) = b.owned_mut() {
                match key {
                    KeyBytes::Int(k) => f.insert(&k),
                    k => f.insert(k.as_slice()),
                }
                record(f, kind);
            }
        });
        Ok(())
    }

    /// ``key in bf``; ``TypeError`` for a key of a kind the filter does not
    /// hold (an ``int`` in a filter of ``str``, or the reverse: see
    /// ``key_kind``).
    fn __contains__(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        let key = key_bytes(key)?;
        let kind = key.kind();
        let answer = self.inner.read(py, |b| match key {
            KeyBytes::Int(k) => b.contains_one(&k, kind),
            k => b.contains_one(k.as_slice(), kind),
        });
        answer.map_err(|filter| key_kind_mismatch(filter, kind))
    }

    /// Adds every key of an array (NumPy, PyArrow, pandas, Polars) or
    /// iterable; the GIL is released while the keys are inserted. Returns
    /// the number of keys added. Missing keys (Arrow and Polars nulls,
    /// pandas' ``NA``, NumPy's ``NaT``) are no keys: ``nulls="skip"`` (the
    /// default) leaves them out, so the count returned is that many short
    /// of the batch's length; ``nulls="raise"`` raises ``ValueError`` at
    /// the first, before anything is added from its piece.
    #[pyo3(signature = (keys, *, nulls = "skip"))]
    fn add_many(&self, keys: &Bound<'_, PyAny>, nulls: &str) -> PyResult<usize> {
        self.writable(keys.py(), "add keys")?;
        let skip = match nulls {
            "skip" => true,
            "raise" => false,
            other => {
                return Err(PyValueError::new_err(format!(
                    "nulls must be \"skip\" or \"raise\", got {other:?}"
                )));
            }
        };
        let mut missing = 0;
        let n = feed_nullable(keys, |py, keys, first| {
            if let Some(nulls) = keys.nulls {
                if !skip {
                    return Err(nulls_error(first + nulls.first().unwrap_or(0)));
                }
                missing += nulls.count();
            }
            let present = keys.present();
            if keys.len() < HOLD_GIL_BELOW {
                self.inner
                    .write(py, |f| present.with(|keys| insert(f, keys)));
            } else {
                self.inner
                    .write_detached(py, |f| present.with(|keys| insert(f, keys)));
            }
            Ok(())
        })?;
        Ok(n - missing)
    }

    /// Adds every key of each argument (as ``set.update``): a
    /// ``BloomFilter`` is OR-ed in (``|=``), anything else is keys, as for
    /// ``add_many``.
    #[pyo3(signature = (*others))]
    fn update(slf: &Bound<'_, Self>, others: &Bound<'_, PyTuple>) -> PyResult<()> {
        for other in others.iter() {
            match other.cast::<BloomFilter>() {
                Ok(filter) => {
                    slf.get().writable(slf.py(), "update it in place")?;
                    combine_into(slf, filter, lesshash::BloomFilter::union)?;
                }
                Err(_) => {
                    slf.get().add_many(&other, "skip")?;
                }
            }
        }
        Ok(())
    }

    /// Whether each key may be in the set, one answer per key, in order.
    /// ``False`` is certain; ``True`` is wrong with probability about
    /// `expected_fpr`. ``TypeError`` for keys of a kind the filter does not
    /// hold (see ``key_kind``).
    ///
    /// `output`: ``"numpy"`` (the default), a NumPy ``bool`` array, or
    /// ``"arrow"``, a ``pyarrow.BooleanArray`` (for an Arrow pipeline:
    /// ``table.filter(...)``). `nulls`: the answer for a missing key (Arrow
    /// and Polars nulls, pandas' ``NA``, NumPy's ``NaT``): ``"null"`` (the
    /// default for Arrow output, as Arrow's kernels and SQL answer: a
    /// filter on it drops the row, and so does one on its negation),
    /// ``"false"`` (the default for NumPy output, which has no null, as
    /// pandas' ``isin`` answers: no key is missing from no set), or
    /// ``"raise"`` (``ValueError`` naming the first).
    #[pyo3(signature = (keys, *, nulls = None, output = "numpy"))]
    fn contains_many<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        nulls: Option<&str>,
        output: &str,
    ) -> PyResult<Bound<'py, PyAny>> {
        let arrow = arrow_output(output)?;
        let policy = match nulls.unwrap_or(if arrow { "null" } else { "false" }) {
            "null" if arrow => NullAnswer::Null,
            "null" => {
                return Err(PyValueError::new_err(
                    "nulls=\"null\" needs output=\"arrow\": a NumPy bool array has no null \
                     (nulls=\"false\" answers False for them)",
                ));
            }
            "false" => NullAnswer::False,
            "raise" => NullAnswer::Raise,
            other => {
                return Err(PyValueError::new_err(format!(
                    "nulls must be \"null\", \"false\" or \"raise\", got {other:?}"
                )));
            }
        };
        let mut out: Vec<bool> = Vec::new();
        let mut kind = KeyKind::Unrecorded;
        // Arrow output with null answers: the validity of every answer.
        let mut validity = arrow_buffer::NullBufferBuilder::new(0);
        feed_nullable(keys, |py, keys, first| {
            if let (NullAnswer::Raise, Some(nulls)) = (policy, keys.nulls) {
                return Err(nulls_error(first + nulls.first().unwrap_or(0)));
            }
            kind = kind.combine(keys.kind);
            let start = out.len();
            out.resize(start + keys.len(), false);
            let answers = &mut out[start..];
            if keys.len() < HOLD_GIL_BELOW {
                self.inner.read(py, |f| contains(f, keys, answers))
            } else {
                self.inner.read_detached(py, |f| contains(f, keys, answers))
            }
            .map_err(to_py)?;
            match (keys.nulls, policy) {
                (Some(nulls), NullAnswer::False) => nulls.answer_false(answers),
                (Some(nulls), NullAnswer::Null) => nulls.append_validity(&mut validity),
                (None, NullAnswer::Null) => validity.append_n_non_nulls(keys.len()),
                _ => {}
            }
            Ok(())
        })?;
        // A list's kind is all its keys' (ints and strs: mixed), known only
        // now.
        let filter = self.inner.read(py, |b| b.view().key_kind());
        KeyKind::check(filter, kind).map_err(to_py)?;
        if !arrow {
            return Ok(out.into_pyarray(py).into_any());
        }
        // Packed 64 answers at a time (`From<Vec<bool>>` sets a bit at a
        // time).
        let bits = arrow_buffer::BooleanBuffer::collect_bool(out.len(), |i| out[i]);
        let answers = arrow_array::BooleanArray::new(bits, validity.finish());
        let answers = pyo3_arrow::PyArray::from_array_ref(std::sync::Arc::new(answers));
        Ok(answers.to_pyarrow(py)?.unbind().into_bound(py))
    }

    /// The kind of keys the filter holds, as recorded in its file:
    /// ``"int64"`` (``int``, NumPy and Arrow integers, dates, times,
    /// timestamps), ``"text"`` (``str``), ``"bytes"`` (``bytes``, or
    /// ``str`` and ``bytes``), ``"mixed"`` (integers and text or bytes), or
    /// ``"unrecorded"`` (no keys yet, or a file written before kinds were
    /// recorded). Every insert records its keys' kind; queries with keys of
    /// the other family (integers against text or bytes) raise
    /// ``TypeError``. Set it to ``"mixed"`` to let keys of every kind
    /// query the filter (on a mapped filter: this object only, the file is
    /// not changed).
    #[getter]
    fn key_kind(&self, py: Python<'_>) -> &'static str {
        self.inner.read(py, |b| b.view().key_kind().name())
    }

    #[setter]
    fn set_key_kind(&self, py: Python<'_>, kind: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let Some(kind) = kind else {
            return Err(PyAttributeError::new_err("cannot delete key_kind"));
        };
        let name = kind.extract::<&str>().map_err(|_| {
            PyTypeError::new_err(format!(
                "key_kind must be a str (\"mixed\", \"int64\", \"text\", \"bytes\", \
                 \"unrecorded\"), got {}",
                kind.get_type()
                    .name()
                    .map_or_else(|_| "?".into(), |n| n.to_string())
            ))
        })?;
        let kind = crate::errors::key_kind(name)?;
        self.inner.write(py, |b| b.set_key_kind(kind));
        Ok(())
    }

    /// The union with every filter of `others` as a new filter (all must
    /// have equal layout, scheme, bits, hashes and seed): exactly the filter
    /// of all their key sets. Always an owned filter, also from mapped ones.
    #[pyo3(signature = (*others))]
    fn union(&self, py: Python<'_>, others: Vec<PyRef<'_, BloomFilter>>) -> PyResult<BloomFilter> {
        self.combined(py, &others, lesshash::BloomFilter::union)
    }

    fn __or__(&self, py: Python<'_>, other: PyRef<'_, BloomFilter>) -> PyResult<BloomFilter> {
        self.union(py, vec![other])
    }

    fn __ior__(slf: &Bound<'_, Self>, other: &Bound<'_, BloomFilter>) -> PyResult<()> {
        slf.get().writable(slf.py(), "update it in place (|=)")?;
        combine_into(slf, other, lesshash::BloomFilter::union)
    }

    /// The intersection with every filter of `others` as a new filter (all
    /// compatible, as for ``union``): the AND of their bits. It holds every
    /// key in all the sets, but it is not the filter of their intersection:
    /// a bit can be set in each input by different keys, so its false
    /// positive rate lies between that filter's and the inputs' (the Rust
    /// crate's ``BloomFilter::intersect`` gives the formula).
    #[pyo3(signature = (*others))]
    fn intersection(
        &self,
        py: Python<'_>,
        others: Vec<PyRef<'_, BloomFilter>>,
    ) -> PyResult<BloomFilter> {
        self.combined(py, &others, lesshash::BloomFilter::intersect)
    }

    fn __and__(&self, py: Python<'_>, other: PyRef<'_, BloomFilter>) -> PyResult<BloomFilter> {
        self.intersection(py, vec![other])
    }

    fn __iand__(slf: &Bound<'_, Self>, other: &Bound<'_, BloomFilter>) -> PyResult<()> {
        slf.get().writable(slf.py(), "update it in place (&=)")?;
        combine_into(slf, other, lesshash::BloomFilter::intersect)
    }

    /// Keeps only the bits set in every filter of `others` (``&=`` with
    /// each, in order).
    #[pyo3(signature = (*others))]
    fn intersection_update(slf: &Bound<'_, Self>, others: &Bound<'_, PyTuple>) -> PyResult<()> {
        slf.get().writable(slf.py(), "update it in place")?;
        for other in others.iter() {
            let other = other.cast::<BloomFilter>().map_err(|_| {
                PyTypeError::new_err(format!(
                    "intersection_update takes BloomFilters, got {}",
                    type_name(&other)
                ))
            })?;
            combine_into(slf, other, lesshash::BloomFilter::intersect)?;
        }
        Ok(())
    }

    /// Whether every bit set here is set in `other` (``<=``): then every
    /// key this filter may hold, `other` may hold too. The filter of a
    /// subset of `other`'s keys always is one; the converse is probable,
    /// not certain, as a membership answer is. ``ValueError`` for filters
    /// of other parameters, as for ``|``.
    fn issubset(&self, py: Python<'_>, other: &BloomFilter) -> PyResult<bool> {
        read_both(py, &self.inner, &other.inner, |a, b| {
            a.owned()?.is_subset(&*b.owned()?)
        })
        .map_err(to_py)
    }

    /// ``other.issubset(self)`` (``>=``).
    fn issuperset(&self, py: Python<'_>, other: &BloomFilter) -> PyResult<bool> {
        other.issubset(py, self)
    }

    /// ``True`` if a key was added (a bit is set), as a set is true when
    /// not empty.
    fn __bool__(&self, py: Python<'_>) -> bool {
        self.inner.read_detached(py, |b| !b.view().is_empty())
    }

    /// ``==`` and ``!=``: equal parameters and bits, owned or mapped (a
    /// map compared is copied first); ``<=``, ``<``, ``>=``, ``>``: the
    /// subset order of ``issubset``.
    fn __richcmp__(
        &self,
        py: Python<'_>,
        other: &Bound<'_, PyAny>,
        op: CompareOp,
    ) -> PyResult<Py<PyAny>> {
        let Ok(other) = other.cast::<BloomFilter>() else {
            return Ok(py.NotImplemented());
        };
        let other = other.get();
        // The order of sets: ``<=`` is issubset, ``<`` a subset not equal.
        let answer = match op {
            CompareOp::Eq | CompareOp::Ne => {
                return compare(py, &self.inner, &other.inner, op, Backing::equals);
            }
            CompareOp::Le => self.issubset(py, other)?,
            CompareOp::Ge => other.issubset(py, self)?,
            CompareOp::Lt => self.issubset(py, other)? && !self.equal(py, other)?,
            CompareOp::Gt => other.issubset(py, self)? && !self.equal(py, other)?,
        };
        Ok(answer.into_pyobject(py)?.to_owned().into_any().unbind())
    }

    /// An independent, writable copy (of a map too: its bits read into
    /// memory).
    fn copy(&self, py: Python<'_>) -> PyResult<BloomFilter> {
        self.inner
            .read_detached(py, Backing::to_owned_filter)
            .map(BloomFilter::wrap)
            .map_err(to_py)
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<BloomFilter> {
        self.copy(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<BloomFilter> {
        self.copy(py)
    }

    /// Removes every key (the size and parameters stay).
    fn clear(&self, py: Python<'_>) -> PyResult<()> {
        self.writable(py, "clear it")?;
        self.inner.write_detached(py, |b| {
            b.owned_mut().map(lesshash::BloomFilter::clear);
        });
        Ok(())
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
    /// synced, then renamed over it). A map writes a copy of its contents
    /// (also over its own file, which it then keeps mapping as it was).
    fn save(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<()> {
        persist::save(py, &self.inner, &path)
    }

    /// Reads a filter written by `save`, the crate or the CLI.
    #[classmethod]
    fn load(cls: &Bound<'_, PyType>, path: std::path::PathBuf) -> PyResult<BloomFilter> {
        persist::load(cls.py(), &path).map(BloomFilter::wrap)
    }

    /// Pickling: an owned filter as its bytes; a map as its path and
    /// `verify` flag, so that a process sharing the storage maps the same
    /// file instead of receiving a copy.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyTuple>)> {
        let py = slf.py();
        let mapped = slf.get().inner.read(py, |b| {
            b.mapped()
                .map(|(p, v)| (p.to_path_buf(), v, b.key_kind_override()))
        });
        let Some((path, verify, key_kind)) = mapped else {
            let (from_bytes, args) = persist::reduce(slf.as_any())?;
            return Ok((from_bytes, PyTuple::new(py, [args.0])?));
        };
        // A map pickles as its path: a file gone by now would make a
        // pickle that can never load, so say so here, at pickling.
        if let Err(e) = std::fs::metadata(&path) {
            let note = "pickling a mapped BloomFilter, which pickles as its path: \
                        the file is no longer there (pickle a copy, .copy(), to send \
                        the bits): ";
            return Err(at_path_because(
                lesshash::Error::Io {
                    context: "looking up the file",
                    source: e,
                },
                &path,
                note,
            ));
        }
        let reopen = slf.get_type().getattr("_open_pickled")?;
        // With its key kind where set (`bf.key_kind = ...`), else the
        // file's (two arguments, as before kinds were recorded).
        let args = match key_kind {
            None => (path.into_os_string(), verify).into_pyobject(py)?,
            Some(k) => (path.into_os_string(), verify, k.name()).into_pyobject(py)?,
        };
        Ok((reopen, args))
    }

    /// The filter as two frames for a transport that guarantees integrity
    /// itself (``lesshash.dask``): the 64-byte header as ``bytes`` and the
    /// payload as a read-only buffer over the filter's own bits (no copy;
    /// a change to the filter while the buffer lives copies the bits
    /// first, so the buffer always shows the filter as it was). A map's
    /// payload is copied. No checksum: ``_from_frames`` checks the header
    /// and the payload's length and padding.
    fn _frames<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyBytes>, Payload)> {
        let lent = self.inner.write_detached(py, Backing::lend);
        let (header, payload) = match lent {
            Some(f) => (Header::of(&f).to_bytes(), Payload::lent(f)),
            None => self.inner.read_detached(py, |b| match b {
                Backing::Mapped {
                    filter, key_kind, ..
                } => {
                    let bytes = filter.as_bytes();
                    let end = bytes.len() - lesshash::format::TRAILER_LEN;
                    // The map's key kind (set or the file's).
                    let mut header = *filter.header();
                    header.key_kind = *key_kind;
                    (
                        header.to_bytes(),
                        Payload::copied(bytes[lesshash::format::HEADER_LEN..end].to_vec()),
                    )
                }
                _ => unreachable!("only a map has no bits to lend"),
            }),
        };
        Ok((PyBytes::new(py, &header), payload))
    }

    /// A filter from ``_frames()``' two frames (any bytes-like objects):
    /// the header verified (its checksum and fields), the payload's length
    /// and padding checked, the bits copied once. ``ValueError`` names
    /// what is wrong.
    ///
    /// For a payload that is the OR of several filters' bits
    /// (``lesshash.dask.build`` joins slices of many): ``union_of``, their
    /// headers, gives the key kind a union of them would have, and
    /// ``insert_calls`` replaces the header's insert counter (the caller
    /// counts partitions held by two filters once).
    #[classmethod]
    #[pyo3(signature = (header, payload, insert_calls=None, union_of=Vec::new()))]
    fn _from_frames(
        _cls: &Bound<'_, PyType>,
        header: &Bound<'_, PyAny>,
        payload: &Bound<'_, PyAny>,
        insert_calls: Option<u64>,
        union_of: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<BloomFilter> {
        let mut header = with_received(header, "header", <[u8]>::to_vec)?;
        if insert_calls.is_some() || !union_of.is_empty() {
            let mut parsed = Header::parse(&header).map_err(to_py)?;
            for other in &union_of {
                let other = with_received(other, "union_of", Header::parse)?;
                parsed.key_kind = parsed.key_kind.combine(other.map_err(to_py)?.key_kind);
            }
            if let Some(calls) = insert_calls {
                parsed.insert_calls = calls;
            }
            header = parsed.to_bytes().to_vec();
        }
        with_received(payload, "payload", |p| {
            lesshash::BloomFilter::from_header_and_payload(&header, p)
        })?
        .map(BloomFilter::wrap)
        .map_err(to_py)
    }

    /// The format's checksum of the filter (XXH3-64 of the header and the
    /// payload, as a file of it stores): one pass over the bits, no copy.
    /// Names the contents (``lesshash.dask`` keys a scattered filter by it).
    fn _digest(&self, py: Python<'_>) -> u64 {
        self.inner.read_detached(py, |b| {
            let digest =
                |f: &lesshash::BloomFilter| checksum(&Header::of(f).to_bytes(), &f.payload_bytes());
            match b {
                Backing::Owned(f) => digest(f),
                Backing::Lent(f) => digest(f),
                Backing::Mapped {
                    filter, key_kind, ..
                } => {
                    let bytes = filter.as_bytes();
                    let rest = &bytes[lesshash::format::HEADER_LEN..];
                    let (payload, trailer) =
                        rest.split_at(rest.len() - lesshash::format::TRAILER_LEN);
                    if *key_kind == filter.key_kind() {
                        // The file's stored checksum (of its header and payload).
                        u64::from_le_bytes(trailer.try_into().expect("8 bytes"))
                    } else {
                        let mut header = *filter.header();
                        header.key_kind = *key_kind;
                        checksum(&header.to_bytes(), payload)
                    }
                }
            }
        })
    }

    /// Sets the insert counter (``insert_calls``): for a filter combined
    /// from parts whose key counts are known (``lesshash.dask.build``, where
    /// a partition may reach two parts). Copies the bits once.
    fn _set_insert_calls(&self, py: Python<'_>, calls: u64) -> PyResult<()> {
        self.writable(py, "set its insert counter")?;
        self.inner
            .write_detached(py, |b| {
                let Some(f) = b.owned_mut() else {
                    return Ok(()); // a map: refused above
                };
                let mut header = Header::of(f);
                header.insert_calls = calls;
                *f = lesshash::BloomFilter::from_header_and_payload(
                    &header.to_bytes(),
                    &f.payload_bytes(),
                )?;
                Ok(())
            })
            .map_err(to_py)
    }

    /// Whether the filter is a read-only map (``BloomFilter.open``).
    #[getter]
    fn read_only(&self, py: Python<'_>) -> bool {
        self.inner.read(py, |b| b.mapped().is_some())
    }

    /// The mapped file's absolute path, or ``None`` for an owned filter.
    #[getter]
    fn path(&self, py: Python<'_>) -> Option<std::ffi::OsString> {
        self.inner
            .read(py, |b| b.mapped().map(|(p, _)| p.as_os_str().to_owned()))
    }

    /// Bits in the filter (m).
    #[getter]
    fn bits(&self, py: Python<'_>) -> u64 {
        self.inner.read(py, |b| b.view().num_bits())
    }

    /// Probes per key (k).
    #[getter]
    fn hashes(&self, py: Python<'_>) -> u32 {
        self.inner.read(py, |b| b.view().num_hashes())
    }

    #[getter]
    fn layout(&self, py: Python<'_>) -> &'static str {
        self.inner.read(py, |b| b.view().layout().name())
    }

    #[getter]
    fn scheme(&self, py: Python<'_>) -> &'static str {
        self.inner.read(py, |b| b.view().scheme().name())
    }

    #[getter]
    fn seed(&self, py: Python<'_>) -> u64 {
        self.inner.read(py, |b| b.view().seed())
    }

    /// The 128-bit hash family: ``"xxh3-128"`` or ``"folded-multiply"``.
    #[getter]
    fn hash_family(&self, py: Python<'_>) -> &'static str {
        self.inner.read(py, |b| b.view().hash_family().name())
    }

    /// Bits per key added so far (`bits / insert_calls`; repeats count), or
    /// ``None`` before the first key.
    #[getter]
    fn bits_per_key(&self, py: Python<'_>) -> Option<f64> {
        self.inner.read(py, |b| {
            let f = b.view();
            {
                let n = f.insert_calls();
                (n > 0).then(|| f.num_bits() as f64 / n as f64)
            }
        })
    }

    /// Keys added so far, repeats included (kept in the file; unions add).
    #[getter]
    fn insert_calls(&self, py: Python<'_>) -> u64 {
        self.inner.read(py, |b| b.view().insert_calls())
    }

    /// The false-positive rate now, from the fill and the layout's formula.
    #[getter]
    fn expected_fpr(&self, py: Python<'_>) -> f64 {
        self.inner.read(py, |b| b.view().expected_fpr())
    }

    /// The number of distinct keys, estimated from the fill.
    #[getter]
    fn estimated_len(&self, py: Python<'_>) -> f64 {
        self.inner.read(py, |b| b.view().estimated_len())
    }

    /// The fraction of bits set.
    #[getter]
    fn fill_ratio(&self, py: Python<'_>) -> f64 {
        self.inner.read(py, |b| b.view().fill_ratio())
    }

    /// Memory the bits take, in bytes (for a map: mapped, not allocated;
    /// resident only as far as queries have touched them).
    #[getter]
    fn nbytes(&self, py: Python<'_>) -> usize {
        self.inner.read(py, Backing::nbytes)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let path = match self.path(py) {
            None => String::new(),
            Some(p) => format!(", path={}, read_only=True", p.into_pyobject(py)?.repr()?),
        };
        Ok(self.inner.read(py, |b| {
            let f = b.view();
            format!(
                "BloomFilter(layout='{}', scheme='{}', bits={}, hashes={}, seed={:#x}, \
             hash_family='{}', key_kind='{}', insert_calls={}, fill_ratio={:.4}, \
             estimated_len={:.0}, expected_fpr={:.3e}{path})",
                f.layout().name(),
                f.scheme().name(),
                f.num_bits(),
                f.num_hashes(),
                f.seed(),
                f.hash_family().name(),
                f.key_kind().name(),
                f.insert_calls(),
                f.fill_ratio(),
                f.estimated_len(),
                f.expected_fpr(),
            )
        }))
    }
}

/// `op` (the crate's `union` or `intersect`) of `other` into `slf`, in
/// place; `slf` was checked writable. With itself it is itself (and its
/// lock cannot be held for writing and reading at once).
fn combine_into(
    slf: &Bound<'_, BloomFilter>,
    other: &Bound<'_, BloomFilter>,
    op: fn(&mut lesshash::BloomFilter, &lesshash::BloomFilter) -> Result<(), lesshash::Error>,
) -> PyResult<()> {
    if slf.is(other) {
        return Ok(());
    }
    write_from(slf.py(), &slf.get().inner, &other.get().inner, |a, b| {
        match a.owned_mut() {
            Some(a) => op(a, &*b.owned()?),
            None => Ok(()), // a map: refused by the caller
        }
    })
    .map_err(to_py)
}

/// The name of `obj`'s type, for messages.
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "?".into(), |n| n.to_string())
}

/// A batch (or piece) shorter than this is worked on with the GIL held:
/// its work is microseconds (the crate runs it on the calling thread,
/// below one parallel task), less than giving the GIL away and taking it
/// back, which costs up to a switch interval when other threads wait for
/// it (DuckDB's threads, calling a function every 2,048 rows).
const HOLD_GIL_BELOW: usize = 16_384;

/// `contains_many`'s answer for a missing key.
#[derive(Clone, Copy)]
enum NullAnswer {
    Null,
    False,
    Raise,
}
