//! Python exceptions for the crate's errors, and argument checks that name
//! the argument.

use lesshash::{Error, KeyKind};
use pyo3::exceptions::{PyMemoryError, PyOSError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyInt};

/// The crate's error as the Python exception a user would expect: `OSError`
/// (its errno subclass, e.g. `FileNotFoundError`) for I/O and for a path
/// that names no file to use (the crate's `Error::io_kind`), `MemoryError`
/// for an allocation that failed, `TypeError` for keys of a kind the filter
/// does not hold ([`key_kind_mismatch`]: a key of the wrong type, as
/// floats and `None` are), `ValueError` for everything else (bad
/// parameters, mismatched filters, corrupt bytes). The message is the
/// crate's, which names the parameter or field at fault. Errors of a file
/// go through [`at_path`], which names it.
pub fn to_py(err: Error) -> PyErr {
    convert(err, None, "")
}

/// [`to_py`] for an error about the file at `path`: an `OSError` carries
/// `errno`, `strerror` and `filename` as Python's own `open` sets them (so
/// `e.errno == errno.ENOENT` works, and the subclass follows from the
/// errno); any other exception names the path before the message.
pub fn at_path(err: Error, path: &std::path::Path) -> PyErr {
    convert(err, Some(path), "")
}

/// [`at_path`] with `note` (why the file was being used) before the
/// message, or before the `strerror` of an `OSError`.
pub fn at_path_because(err: Error, path: &std::path::Path, note: &str) -> PyErr {
    convert(err, Some(path), note)
}

fn convert(err: Error, path: Option<&std::path::Path>, note: &str) -> PyErr {
    let prefix = path.map_or(String::new(), |p| format!("{}: ", p.display())) + note;
    match err {
        Error::Io { context, source } => {
            let errno = source
                .raw_os_error()
                .unwrap_or_else(|| errno_of(source.kind()));
            // The OS's description without std's " (os error N)" suffix:
            // Python shows the errno itself.
            let text = source.to_string();
            let text = text.split(" (os error").next().unwrap_or(&text);
            os_error(errno, format!("{note}{context}: {text}"), path)
        }
        e @ Error::Allocation { .. } => PyMemoryError::new_err(format!("{prefix}{e}")),
        Error::KeyKindMismatch { filter, keys } => key_kind_mismatch(filter, keys),
        // A path that names no file to use (a directory, a socket): the
        // file system's problem, as `open` would report it.
        e => match e.io_kind() {
            // The crate's advice names its Rust call; Python's is `load`.
            Some(kind) => os_error(
                errno_of(kind),
                format!("{note}{e}").replace("BloomFilter::read_file", "BloomFilter.load"),
                path,
            ),
            None => PyValueError::new_err(format!("{prefix}{e}")),
        },
    }
}

/// The `TypeError` of a query whose keys are of a kind the filter does not
/// hold (`lesshash::KeyKind::check`): names both kinds, the conversion
/// that gives keys of the filter's kind, and the override.
pub fn key_kind_mismatch(filter: KeyKind, keys: KeyKind) -> PyErr {
    let convert = match filter {
        KeyKind::Int64 => {
            " (int(key); .astype('int64') for NumPy and pandas; \
             pyarrow.compute.cast(keys, 'int64') for Arrow)"
        }
        _ => " (str(key); .astype(str) for NumPy and pandas)",
    };
    PyTypeError::new_err(format!(
        "the filter was built from {filter} keys but these keys are {keys}: the integer 7 and \
         the text \"7\" are different keys, so every answer would be \"absent\"; give keys of \
         the filter's kind{convert}, or, if these keys really are what was inserted, let the \
         filter answer keys of every kind: bf.key_kind = \"mixed\" (docs/python.md, \"Key \
         kinds\")"
    ))
}

/// A `key_kind` name (`lesshash::KeyKind::name`): `"unrecorded"`,
/// `"int64"`, `"text"`, `"bytes"` or `"mixed"`; else a `ValueError`
/// listing them.
pub fn key_kind(name: &str) -> PyResult<KeyKind> {
    KeyKind::ALL
        .into_iter()
        .find(|k| k.name() == name)
        .ok_or_else(|| {
            let names: Vec<String> = KeyKind::ALL
                .iter()
                .map(|k| format!("'{}'", k.name()))
                .collect();
            PyValueError::new_err(format!(
                "unknown key kind {name:?}: expected one of {}",
                names.join(", ")
            ))
        })
}

/// `OSError(errno, strerror[, filename])`: Python picks the subclass from
/// the errno (`FileNotFoundError` for ENOENT, ...) and sets the attributes.
fn os_error(errno: i32, strerror: String, path: Option<&std::path::Path>) -> PyErr {
    match path {
        Some(p) => PyOSError::new_err((errno, strerror, p.as_os_str().to_owned())),
        None => PyOSError::new_err((errno, strerror)),
    }
}

/// The errno of an error kind that came without one (the crate's checks):
/// the POSIX values, which Linux, macOS, the BSDs and the Windows C
/// runtime share for these. EINVAL (a path that names no file to use)
/// has no subclass, so it stays `OSError` itself.
fn errno_of(kind: std::io::ErrorKind) -> i32 {
    use std::io::ErrorKind as K;
    match kind {
        K::NotFound => 2,
        K::PermissionDenied => 13,
        K::AlreadyExists => 17,
        K::NotADirectory => 20,
        K::IsADirectory => 21,
        K::InvalidInput => 22,
        _ => 5, // EIO
    }
}

/// The crate's value called `name`, parsed by the type's own `FromStr`
/// (`Layout`, `Scheme`, `CountMinScheme`), or a `ValueError` with the
/// crate's message, which lists the valid names.
pub fn named<T>(name: &str) -> PyResult<T>
where
    T: std::str::FromStr<Err = lesshash::ParseNameError>,
{
    name.parse()
        .map_err(|e: lesshash::ParseNameError| PyValueError::new_err(e.to_string()))
}

/// A non-negative 64-bit integer argument, with errors that name it.
pub fn unsigned(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<u64> {
    if !obj.is_instance_of::<PyInt>() && !obj.hasattr(pyo3::intern!(obj.py(), "__index__"))? {
        return Err(PyTypeError::new_err(format!(
            "`{name}` must be an int, got {}",
            obj.get_type().name()?
        )));
    }
    if let Ok(v) = obj.extract::<u64>() {
        return Ok(v);
    }
    let value = obj.py().import("operator")?.call_method1("index", (obj,))?;
    if value.lt(0)? {
        Err(PyValueError::new_err(format!(
            "`{name}` must be at least 0, got {value}"
        )))
    } else {
        Err(PyOverflowError::new_err(format!(
            "`{name}` must be below 2**64, got {value}"
        )))
    }
}

/// A `seed` argument: an int in [0, 2**64), or the string `"random"` for a
/// secret seed drawn from the operating system (`lesshash::random_seed`).
pub fn seed(obj: &Bound<'_, PyAny>) -> PyResult<u64> {
    if let Ok(s) = obj.extract::<&str>() {
        return if s == "random" {
            lesshash::random_seed().map_err(to_py)
        } else {
            Err(PyValueError::new_err(format!(
                "`seed` must be an int or \"random\", got {s:?}"
            )))
        };
    }
    unsigned(obj, "seed")
}

/// `bytes` as is; `bytearray`, `memoryview` and other buffers copied into
/// `bytes`; anything else a `TypeError`.
pub fn bytes_like<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.clone());
    }
    let py = obj.py();
    let view = py
        .import("builtins")?
        .getattr("memoryview")?
        .call1((obj,))
        .map_err(|_| {
            PyTypeError::new_err(format!(
                "expected bytes (or a bytes-like object), got {}",
                obj.get_type()
                    .name()
                    .map_or_else(|_| "?".into(), |n| n.to_string())
            ))
        })?;
    Ok(view.call_method0("tobytes")?.cast_into::<PyBytes>()?)
}

/// The `TypeError` of a change to a mapped (read-only) filter: names the
/// file and the two ways to a writable copy.
pub fn read_only(path: &std::path::Path, what: &str) -> PyErr {
    let path = path.display();
    PyTypeError::new_err(format!(
        "cannot {what}: this BloomFilter is a read-only memory map of {path} \
         (BloomFilter.open); for a writable filter take a copy with .copy() \
         or load the file with BloomFilter.load('{path}')"
    ))
}
