//! The filters `contains` expressions name, resolved once per process.
//!
//! Polars hands the plugin the expression's keyword arguments (pickled by
//! Python when the expression was made) on every batch. They are looked up
//! by their XXH3-128 digest: parsed, and the filter parsed, only the first
//! time. A filter file is mapped through a [`MappedCache`]: verified once
//! per version of the file, then one `stat` per batch, so a filter
//! replaced on disk between or during queries is mapped afresh.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use lesshash::{BloomFilter, FilterView, MappedCache, MappedFilter};
use polars::prelude::{polars_bail, polars_err, PolarsResult};
use serde_pickle::{DeOptions, HashableValue, Value};

/// How many requests (keyword arguments) and files the process keeps
/// resolved at most; the least recently used goes first.
const ENTRIES: usize = 16;

/// A filter an expression queries.
#[derive(Clone)]
pub enum Filter {
    /// A filter file, mapped read-only.
    Mapped(Arc<MappedFilter>),
    /// A filter's bytes carried in the expression, parsed.
    Owned(Arc<BloomFilter>),
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
    Parsed(Filter),
}

/// One `contains` expression's keyword arguments, parsed.
pub struct Request {
    source: Source,
    pub nulls: Nulls,
}

impl Request {
    /// The filter to answer with now (a file's current version).
    pub fn filter(&self) -> PolarsResult<Filter> {
        match &self.source {
            Source::File(path) => file(path),
            Source::Parsed(f) => Ok(f.clone()),
        }
    }
}

/// A request's key: its keyword arguments' XXH3-128 digest and length.
type RequestKey = (u128, usize);

/// Requests resolved so far, most recently used last.
static REQUESTS: Mutex<Vec<(RequestKey, Arc<Request>)>> = Mutex::new(Vec::new());

/// Held while a request is parsed, so that batches of a new expression
/// parse it (and check a carried filter's checksum) once.
static PARSING: Mutex<()> = Mutex::new(());

/// The filter files requests name.
static FILES: MappedCache = MappedCache::new(ENTRIES);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while a lock was held leaves the list whole (entries are
    // pushed and removed whole, and never change): carry on.
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The request `kwargs` (the pickled keyword arguments) make.
pub fn request(kwargs: &[u8]) -> PolarsResult<Arc<Request>> {
    let key = (xxhash_rust::xxh3::xxh3_128(kwargs), kwargs.len());
    let find = || {
        let mut requests = lock(&REQUESTS);
        let i = requests.iter().position(|(k, _)| *k == key)?;
        let entry = requests.remove(i);
        let request = Arc::clone(&entry.1);
        requests.push(entry);
        Some(request)
    };
    if let Some(hit) = find() {
        return Ok(hit);
    }
    let _parsing = lock(&PARSING);
    if let Some(hit) = find() {
        return Ok(hit);
    }
    let request = Arc::new(parse(kwargs)?);
    let mut requests = lock(&REQUESTS);
    if requests.len() >= ENTRIES {
        requests.remove(0);
    }
    requests.push((key, Arc::clone(&request)));
    Ok(request)
}

fn parse(kwargs: &[u8]) -> PolarsResult<Request> {
    let bad = |what: &str| {
        polars_err!(InvalidOperation:
            "lesshash.contains: {what} (make the expression with lesshash.polars: \
             pl.col(...).lesshash.contains(filter))")
    };
    // Polars passes no bytes at all for an empty `kwargs`.
    if kwargs.is_empty() {
        return Err(bad(
            "no keyword arguments: expected a filter file's `path` (str) or a filter's bytes",
        ));
    }
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
            Source::Parsed(Filter::Owned(Arc::new(filter)))
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
pub fn file(path: &Path) -> PolarsResult<Filter> {
    let mapped = FILES.open(path).map_err(|e| {
        polars_err!(ComputeError:
            "lesshash.contains: cannot use the filter file '{}': {e}", path.display())
    })?;
    Ok(Filter::Mapped(mapped))
}
