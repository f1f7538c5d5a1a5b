//! The filters `contains` expressions name, resolved once per process.
//!
//! Polars hands the plugin the expression's keyword arguments (pickled by
//! Python when the expression was made) on every batch. They are looked up
//! by their XXH3-128 digest: parsed, and the filter mapped or parsed, only
//! the first time. A file is then checked to be the one mapped
//! ([`MappedFilter::is_current`]: one `stat` per batch), so a filter
//! replaced on disk between or during queries is mapped afresh.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use lesshash::{BloomFilter, FilterView, MappedFilter};
use polars::prelude::{polars_bail, polars_err, PolarsResult};
use serde_pickle::{DeOptions, HashableValue, Value};

/// How many requests (keyword arguments) and files the process keeps
/// resolved at most; the least recently used goes first.
const ENTRIES: usize = 16;

/// A filter an expression queries.
pub enum Filter {
    /// A filter file, mapped read-only.
    Mapped(MappedFilter),
    /// A filter's bytes carried in the expression, parsed.
    Owned(BloomFilter),
}

impl Filter {
    pub fn view(&self) -> FilterView<'_> {
        match self {
            Filter::Mapped(m) => m.view(),
            Filter::Owned(f) => f.view(),
        }
    }
}

/// What a null key answers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Nulls {
    /// Null (Polars' and SQL's unknown: `filter` drops the row).
    Null,
    /// False (no key is missing from no set).
    False,
}

/// Where a request's filter is.
enum Source {
    File(PathBuf),
    Parsed(Arc<Filter>),
}

/// One `contains` expression's keyword arguments, parsed.
pub struct Request {
    source: Source,
    pub nulls: Nulls,
}

impl Request {
    /// The filter to answer with now (a file's current version).
    pub fn filter(&self) -> PolarsResult<Arc<Filter>> {
        match &self.source {
            Source::File(path) => file(path),
            Source::Parsed(f) => Ok(Arc::clone(f)),
        }
    }
}

/// Requests and files resolved so far, most recently used last.
#[derive(Default)]
struct Cache {
    requests: Vec<((u128, usize), Arc<Request>)>,
    files: Vec<(PathBuf, Arc<Filter>)>,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    requests: Vec::new(),
    files: Vec::new(),
});

/// Held while a filter is opened or parsed, so that batches asking for the
/// same new filter at once resolve it once (the others wait for it rather
/// than check its checksum again).
static OPENING: Mutex<()> = Mutex::new(());

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while a lock was held leaves at worst a stale entry, which is
    // checked before use: carry on.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Moves entry `i` of `v` to the most recently used end.
fn touch<T>(v: &mut Vec<T>, i: usize) -> &T {
    let entry = v.remove(i);
    v.push(entry);
    v.last().expect("just pushed")
}

fn push_bounded<T>(v: &mut Vec<T>, entry: T) {
    if v.len() >= ENTRIES {
        v.remove(0);
    }
    v.push(entry);
}

/// The request `kwargs` (the pickled keyword arguments) make.
pub fn request(kwargs: &[u8]) -> PolarsResult<Arc<Request>> {
    let key = (xxhash_rust::xxh3::xxh3_128(kwargs), kwargs.len());
    let find = || {
        let mut cache = lock(&CACHE);
        let i = cache.requests.iter().position(|(k, _)| *k == key)?;
        Some(Arc::clone(&touch(&mut cache.requests, i).1))
    };
    if let Some(hit) = find() {
        return Ok(hit);
    }
    let _opening = lock(&OPENING);
    if let Some(hit) = find() {
        return Ok(hit);
    }
    let request = Arc::new(parse(kwargs)?);
    push_bounded(&mut lock(&CACHE).requests, (key, Arc::clone(&request)));
    Ok(request)
}

fn parse(kwargs: &[u8]) -> PolarsResult<Request> {
    let bad = |what: &str| {
        polars_err!(InvalidOperation:
            "lesshash.contains: {what} (make the expression with lesshash.polars: \
             pl.col(...).lesshash.contains(filter))")
    };
    let value = serde_pickle::value_from_slice(kwargs, DeOptions::new())
        .map_err(|e| bad(&format!("cannot read the keyword arguments: {e}")))?;
    let Value::Dict(map) = value else {
        return Err(bad("the keyword arguments are not a dict"));
    };
    let get = |name: &str| map.get(&HashableValue::String(name.to_owned()));
    let nulls = match get("nulls") {
        None => Nulls::Null,
        Some(Value::String(s)) if s == "null" => Nulls::Null,
        Some(Value::String(s)) if s == "false" => Nulls::False,
        Some(other) => {
            polars_bail!(InvalidOperation:
                "lesshash.contains: nulls must be \"null\" or \"false\", got {other}")
        }
    };
    let source = match (get("path"), get("filter")) {
        (Some(Value::String(path)), None) => Source::File(PathBuf::from(path)),
        (None, Some(Value::Bytes(bytes))) => {
            let filter = BloomFilter::from_bytes(bytes).map_err(|e| {
                polars_err!(ComputeError:
                    "lesshash.contains: the filter's bytes are not a lesshash filter: {e}")
            })?;
            Source::Parsed(Arc::new(Filter::Owned(filter)))
        }
        _ => {
            return Err(bad(
                "expected a filter file's `path` (str) or a filter's bytes",
            ))
        }
    };
    Ok(Request { source, nulls })
}

/// The filter file at `path`, mapped (and its checksum checked) unless the
/// process holds its current version.
pub fn file(path: &Path) -> PolarsResult<Arc<Filter>> {
    let find = || {
        let mut cache = lock(&CACHE);
        let i = cache
            .files
            .iter()
            .position(|(p, f)| p == path && matches!(&**f, Filter::Mapped(m) if m.is_current()))?;
        Some(Arc::clone(&touch(&mut cache.files, i).1))
    };
    if let Some(hit) = find() {
        return Ok(hit);
    }
    let _opening = lock(&OPENING);
    if let Some(hit) = find() {
        return Ok(hit);
    }
    let mapped = MappedFilter::open(path).map_err(|e| {
        polars_err!(ComputeError:
            "lesshash.contains: cannot use the filter file '{}': {e}", path.display())
    })?;
    let filter = Arc::new(Filter::Mapped(mapped));
    let mut cache = lock(&CACHE);
    // An older version of the same file is of no more use.
    cache.files.retain(|(p, _)| p != path);
    push_bounded(&mut cache.files, (path.to_owned(), Arc::clone(&filter)));
    Ok(filter)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pickled_path(path: &str) -> Vec<u8> {
        // pickle.dumps({"path": path}, protocol=2) by hand: PROTO 2,
        // EMPTY_DICT, BINUNICODE "path", BINUNICODE path, SETITEM, STOP.
        let mut out = vec![0x80, 2, b'}'];
        for s in ["path", path] {
            out.push(b'X');
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        out.extend_from_slice(b"s.");
        out
    }

    #[test]
    fn a_file_is_mapped_once_until_it_is_replaced() {
        let dir = std::env::temp_dir().join(format!("lesshash-polars-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.lhbf");
        let mut f = BloomFilter::with_fpr(100, 0.01).unwrap();
        f.insert(&1u64);
        std::fs::write(&path, f.to_bytes()).unwrap();
        let request = request(&pickled_path(path.to_str().unwrap())).unwrap();
        assert_eq!(request.nulls, Nulls::Null);
        let a = request.filter().unwrap();
        let b = request.filter().unwrap();
        assert!(Arc::ptr_eq(&a, &b), "mapped once");
        assert!(a.view().contains(&1u64));

        // Replaced (a new inode): mapped afresh, and answers as the new one.
        let mut g = BloomFilter::with_fpr(100, 0.01).unwrap();
        g.insert(&2u64);
        let tmp = dir.join("g.lhbf");
        std::fs::write(&tmp, g.to_bytes()).unwrap();
        std::fs::rename(&tmp, &path).unwrap();
        let c = request.filter().unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert!(c.view().contains(&2u64) && !c.view().contains(&1u64));

        std::fs::remove_file(&path).unwrap();
        let err = request.filter().err().unwrap().to_string();
        assert!(
            err.contains("cannot use the filter file") && err.contains("f.lhbf"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_keyword_arguments_are_named() {
        let err = request(b"not a pickle").err().unwrap().to_string();
        assert!(err.contains("cannot read the keyword arguments"), "{err}");
    }
}
