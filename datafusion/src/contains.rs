//! `bloom_contains(keys, filter)`: the scalar function.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BooleanArray, new_null_array};
use datafusion::arrow::compute::concat;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility,
};
use lesshash::{BloomFilter, KeyKind, MappedFilter};

use crate::keys::key_kind;

/// The function's name in SQL.
const NAME: &str = "bloom_contains";

/// How many filter files (and filter byte strings) one function instance
/// keeps open at most; the least recently used goes first.
const CACHE_ENTRIES: usize = 16;

/// `bloom_contains(keys, filter)`: whether each key is possibly in a
/// lesshash filter (`true`: possibly, with the filter's false-positive
/// rate; `false`: certainly not; `NULL` for a `NULL` key or filter).
///
/// `filter` is a path (a string: the filter file, memory-mapped with
/// [`MappedFilter`], its checksum checked once) or the filter's bytes in
/// the v1 format (a binary value, such as `bloom_agg`'s result, parsed
/// once). Both are cached in the instance: a file by its path, checked to
/// be the file mapped ([`MappedFilter::is_current`]: its device, inode,
/// length and modification time, one `stat` per batch), so a file replaced
/// between queries (or during one) is mapped afresh; bytes by their value. Keys of every type that
/// `lesshash::arrow` accepts (docs/guide.md's encoding table); any other
/// type fails at planning with a message naming the function and the type.
/// A filter that records another kind of keys (built from integers,
/// queried with text) fails with an error naming both kinds.
///
/// Registered by [`register`](crate::register); [`bloom_contains`](crate::bloom_contains) makes the
/// [`ScalarUDF`](datafusion::logical_expr::ScalarUDF).
pub struct BloomContains {
    signature: Signature,
    cache: Mutex<Cache>,
    /// Held while a filter is opened or parsed, so that partitions asking
    /// for the same new filter at once open it once (and others wait for
    /// it rather than check its checksum again).
    opening: Mutex<()>,
}

impl BloomContains {
    /// A fresh instance, with an empty cache.
    pub fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Stable),
            cache: Mutex::new(Cache::default()),
            opening: Mutex::new(()),
        }
    }

    fn cache(&self) -> MutexGuard<'_, Cache> {
        // A panic while the lock was held left at worst a stale entry,
        // which is checked before use: carry on.
        self.cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn opening(&self) -> MutexGuard<'_, ()> {
        self.opening
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The filter file at `path`, mapped (and its checksum checked) unless
    /// the cache holds it with the same identity.
    fn mapped(&self, path: &str) -> Result<Filter> {
        if let Some(hit) = self.cache().find_file(path) {
            return Ok(hit);
        }
        // Mapped (and checksummed) without the cache's lock, which queries
        // of other filters need meanwhile, but under the opening lock: a
        // partition that missed too finds it mapped once it has the lock.
        let _opening = self.opening();
        if let Some(hit) = self.cache().find_file(path) {
            return Ok(hit);
        }
        let mapped = MappedFilter::open(path).map_err(|e| {
            DataFusionError::Execution(format!("{NAME}: cannot use the filter file '{path}': {e}"))
        })?;
        let filter = Filter::Mapped(Arc::new(mapped));
        self.cache()
            .insert(Key::File(path.to_owned()), filter.clone());
        Ok(filter)
    }

    /// The filter serialized as `bytes`, parsed (checksum checked) unless
    /// the cache holds it.
    fn parsed(&self, bytes: &[u8]) -> Result<Filter> {
        if let Some(hit) = self.find_bytes(bytes) {
            return Ok(hit);
        }
        let _opening = self.opening();
        if let Some(hit) = self.find_bytes(bytes) {
            return Ok(hit);
        }
        let filter = BloomFilter::from_bytes(bytes).map_err(|e| {
            DataFusionError::Execution(format!(
                "{NAME}: the filter argument is not a lesshash filter's bytes: {e}"
            ))
        })?;
        let filter = Filter::Owned(Arc::new(filter));
        self.cache()
            .insert(Key::Bytes(Arc::from(bytes)), filter.clone());
        Ok(filter)
    }

    /// The cached filter serialized as `bytes`: the bytes are compared
    /// outside the cache's lock (a filter's worth of bytes each).
    fn find_bytes(&self, bytes: &[u8]) -> Option<Filter> {
        let candidates = self.cache().bytes_of_len(bytes.len());
        let (key, filter) = candidates.into_iter().find(|(b, _)| **b == *bytes)?;
        self.cache().touch_bytes(&key);
        Some(filter)
    }

    /// The filter a scalar `filter` argument names; `None` for `NULL`.
    fn resolve_scalar(&self, value: &ScalarValue) -> Result<Option<Filter>> {
        Ok(match value {
            ScalarValue::Utf8(Some(path))
            | ScalarValue::LargeUtf8(Some(path))
            | ScalarValue::Utf8View(Some(path)) => Some(self.mapped(path)?),
            ScalarValue::Binary(Some(bytes))
            | ScalarValue::LargeBinary(Some(bytes))
            | ScalarValue::BinaryView(Some(bytes))
            | ScalarValue::FixedSizeBinary(_, Some(bytes)) => Some(self.parsed(bytes)?),
            v if v.is_null() => None,
            other => {
                return exec_err!(
                    "{NAME}: the filter must be a path (a string) or a filter's bytes (binary), not {}",
                    other.data_type()
                );
            }
        })
    }

    /// The answers for `keys` from a column of filters: each run of equal
    /// filter values is resolved once (through the cache) and answers its
    /// rows.
    fn by_rows(&self, keys: &dyn Array, filters: &dyn Array) -> Result<BooleanArray> {
        let column = FilterColumn::new(filters)?;
        let mut parts: Vec<ArrayRef> = Vec::new();
        let mut start = 0;
        while start < keys.len() {
            let value = column.value(start);
            let mut end = start + 1;
            while end < keys.len() && same(column.value(end), value) {
                end += 1;
            }
            let filter = match value {
                None => None,
                Some(v) if column.is_path => {
                    let path = std::str::from_utf8(v).map_err(|e| {
                        DataFusionError::Internal(format!("{NAME}: a path is not UTF-8: {e}"))
                    })?;
                    Some(self.mapped(path)?)
                }
                Some(bytes) => Some(self.parsed(bytes)?),
            };
            let slice = keys.slice(start, end - start);
            parts.push(Arc::new(answer(filter.as_ref(), &slice)?));
            start = end;
        }
        match parts.len() {
            0 => Ok(BooleanArray::from(Vec::<Option<bool>>::new())),
            1 => Ok(parts[0].as_boolean().clone()),
            _ => {
                let parts: Vec<&dyn Array> = parts.iter().map(|a| a.as_ref()).collect();
                Ok(concat(&parts)?.as_boolean().clone())
            }
        }
    }
}

impl Default for BloomContains {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for BloomContains {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BloomContains")
            .field("signature", &self.signature)
            .finish_non_exhaustive()
    }
}

/// Instances are equal as functions: the cache is not part of what the
/// function computes.
impl PartialEq for BloomContains {
    fn eq(&self, other: &Self) -> bool {
        self.signature == other.signature
    }
}

impl Eq for BloomContains {}

impl Hash for BloomContains {
    fn hash<H: Hasher>(&self, state: &mut H) {
        NAME.hash(state);
        self.signature.hash(state);
    }
}

impl ScalarUDFImpl for BloomContains {
    fn name(&self) -> &str {
        NAME
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        check_arguments(arg_types)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        check_arguments(arg_types)?;
        Ok(DataType::Boolean)
    }

    /// `NULL` in (key or filter), `NULL` out.
    fn is_strict(&self) -> bool {
        true
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let rows = args.number_rows;
        let Ok([keys, filter]) = <[ColumnarValue; 2]>::try_from(args.args) else {
            return exec_err!("{NAME} takes two arguments (keys, filter)");
        };
        match (keys, filter) {
            (ColumnarValue::Scalar(key), ColumnarValue::Scalar(filter)) => {
                let filter = self.resolve_scalar(&filter)?;
                let answers = answer(filter.as_ref(), &key.to_array_of_size(1)?)?;
                Ok(ColumnarValue::Scalar(ScalarValue::try_from_array(
                    &answers, 0,
                )?))
            }
            (keys, ColumnarValue::Scalar(filter)) => {
                let filter = self.resolve_scalar(&filter)?;
                let keys = keys.into_array(rows)?;
                Ok(ColumnarValue::Array(Arc::new(answer(
                    filter.as_ref(),
                    &keys,
                )?)))
            }
            (keys, ColumnarValue::Array(filters)) => {
                let keys = keys.into_array(filters.len())?;
                Ok(ColumnarValue::Array(Arc::new(
                    self.by_rows(&keys, &filters)?,
                )))
            }
        }
    }
}

/// The argument types `bloom_contains` is called with (the keys' unchanged,
/// a dictionary of filters unpacked), or a planning error naming the
/// function and the type at fault.
fn check_arguments(arg_types: &[DataType]) -> Result<Vec<DataType>> {
    let [keys, filter] = arg_types else {
        return plan_err!(
            "{NAME} takes two arguments (keys, filter: a file path or a filter's bytes), got {}",
            arg_types.len()
        );
    };
    // NULL keys (the untyped NULL) answer NULL whatever the filter.
    if *keys != DataType::Null {
        key_kind(NAME, keys)?;
    }
    let filter = match filter {
        DataType::Dictionary(_, value) => value.as_ref(),
        other => other,
    };
    if !(is_path_type(filter) || is_bytes_type(filter) || *filter == DataType::Null) {
        return plan_err!(
            "{NAME}: the filter argument must be a file path (a string) or a filter's bytes (binary, as bloom_agg returns), not {filter}"
        );
    }
    Ok(vec![keys.clone(), filter.clone()])
}

fn is_path_type(t: &DataType) -> bool {
    matches!(t, DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
}

fn is_bytes_type(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::FixedSizeBinary(_)
    )
}

/// The answers of `filter` for `keys`: all `NULL` without a filter or for
/// untyped `NULL` keys.
fn answer(filter: Option<&Filter>, keys: &dyn Array) -> Result<BooleanArray> {
    let Some(filter) = filter else {
        return Ok(new_null_array(&DataType::Boolean, keys.len())
            .as_boolean()
            .clone());
    };
    if *keys.data_type() == DataType::Null {
        return Ok(new_null_array(&DataType::Boolean, keys.len())
            .as_boolean()
            .clone());
    }
    let answers = match filter {
        Filter::Mapped(f) => f.contains_array(keys),
        Filter::Owned(f) => f.contains_array(keys),
    };
    answers.map_err(|e| contains_error(e, keys.data_type()))
}

/// A query's error as the function's: a key-kind mismatch told in SQL's
/// terms (both kinds, the column's type and the cast that fixes it).
fn contains_error(e: lesshash::Error, keys_type: &DataType) -> DataFusionError {
    match e {
        lesshash::Error::KeyKindMismatch { filter, keys } => {
            let cast = match filter {
                KeyKind::Int64 => "CAST(keys AS BIGINT)",
                _ => "CAST(keys AS VARCHAR)",
            };
            DataFusionError::Execution(format!(
                "{NAME}: the filter was built from {filter} keys but these keys (type {keys_type}) are {keys}: \
                 the integer 7 and the text '7' are different keys, so every answer would be false; \
                 give keys of the filter's kind ({cast} if the values are the same)"
            ))
        }
        other => DataFusionError::Execution(format!("{NAME}: {other}")),
    }
}

/// Two filter values are the same: the same bytes (a shared buffer
/// compares by address first).
fn same(a: Option<&[u8]>, b: Option<&[u8]>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => std::ptr::eq(a, b) || a == b,
        (None, None) => true,
        _ => false,
    }
}

/// A filter to query: a mapped file or parsed bytes.
#[derive(Clone)]
enum Filter {
    Mapped(Arc<MappedFilter>),
    Owned(Arc<BloomFilter>),
}

/// What a cache entry was made from.
enum Key {
    File(String),
    Bytes(Arc<[u8]>),
}

/// The filters an instance has opened, most recently used last.
#[derive(Default)]
struct Cache {
    entries: Vec<(Key, Filter)>,
}

impl Cache {
    /// The file at `path` if held and still the file there
    /// ([`MappedFilter::is_current`]).
    fn find_file(&mut self, path: &str) -> Option<Filter> {
        let i = self.entries.iter().position(|(k, f)| {
            matches!(k, Key::File(p) if p == path)
                && matches!(f, Filter::Mapped(m) if m.is_current())
        })?;
        Some(self.touch(i))
    }

    /// The byte strings of `len` bytes held, with their filters.
    fn bytes_of_len(&self, len: usize) -> Vec<(Arc<[u8]>, Filter)> {
        self.entries
            .iter()
            .filter_map(|(k, f)| match k {
                Key::Bytes(b) if b.len() == len => Some((Arc::clone(b), f.clone())),
                _ => None,
            })
            .collect()
    }

    /// Marks the entry of `bytes` (if still held) most recently used.
    fn touch_bytes(&mut self, bytes: &Arc<[u8]>) {
        let i = self
            .entries
            .iter()
            .position(|(k, _)| matches!(k, Key::Bytes(b) if Arc::ptr_eq(b, bytes)));
        if let Some(i) = i {
            self.touch(i);
        }
    }

    /// Moves entry `i` to the most recently used end; its filter.
    fn touch(&mut self, i: usize) -> Filter {
        let entry = self.entries.remove(i);
        let filter = entry.1.clone();
        self.entries.push(entry);
        filter
    }

    fn insert(&mut self, key: Key, filter: Filter) {
        // An older version of the same file is of no more use.
        if let Key::File(path) = &key {
            self.entries
                .retain(|(k, _)| !matches!(k, Key::File(p) if p == path));
        }
        if self.entries.len() >= CACHE_ENTRIES {
            self.entries.remove(0);
        }
        self.entries.push((key, filter));
    }
}

/// A column of filter arguments: paths or bytes, read row by row without
/// copying.
struct FilterColumn<'a> {
    array: &'a dyn Array,
    is_path: bool,
}

impl<'a> FilterColumn<'a> {
    fn new(array: &'a dyn Array) -> Result<Self> {
        let t = array.data_type();
        if !(is_path_type(t) || is_bytes_type(t) || *t == DataType::Null) {
            return exec_err!(
                "{NAME}: the filter must be a path (a string) or a filter's bytes (binary), not {t}"
            );
        }
        Ok(Self {
            array,
            is_path: is_path_type(t),
        })
    }

    /// Row `i`'s path (as bytes) or filter bytes; `None` for `NULL`.
    fn value(&self, i: usize) -> Option<&'a [u8]> {
        let a = self.array;
        if a.is_null(i) {
            return None;
        }
        Some(match a.data_type() {
            DataType::Utf8 => a.as_string::<i32>().value(i).as_bytes(),
            DataType::LargeUtf8 => a.as_string::<i64>().value(i).as_bytes(),
            DataType::Utf8View => a.as_string_view().value(i).as_bytes(),
            DataType::Binary => a.as_binary::<i32>().value(i),
            DataType::LargeBinary => a.as_binary::<i64>().value(i),
            DataType::BinaryView => a.as_binary_view().value(i),
            DataType::FixedSizeBinary(_) => a.as_fixed_size_binary().value(i),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{BloomContains, Filter};
    use lesshash::BloomFilter;

    fn same(a: &Filter, b: &Filter) -> bool {
        match (a, b) {
            (Filter::Mapped(a), Filter::Mapped(b)) => std::sync::Arc::ptr_eq(a, b),
            (Filter::Owned(a), Filter::Owned(b)) => std::sync::Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    #[test]
    fn a_file_is_mapped_once_until_it_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.lhbf");
        let mut filter = BloomFilter::with_fpr(10, 0.01).unwrap();
        filter.insert("a");
        filter.write_file(&path).unwrap();
        let f = BloomContains::new();
        let p = path.to_str().unwrap();
        let first = f.mapped(p).unwrap();
        assert!(same(&first, &f.mapped(p).unwrap()));
        filter.insert("b");
        filter.write_file(&path).unwrap();
        let second = f.mapped(p).unwrap();
        assert!(!same(&first, &second));
        assert!(same(&second, &f.mapped(p).unwrap()));
        assert_eq!(f.cache().entries.len(), 1, "the old version is dropped");
    }

    #[test]
    fn bytes_are_parsed_once_per_value() {
        let mut filter = BloomFilter::with_fpr(10, 0.01).unwrap();
        filter.insert("a");
        let (a, b) = (filter.to_bytes(), filter.to_bytes());
        let f = BloomContains::new();
        let first = f.parsed(&a).unwrap();
        assert!(same(&first, &f.parsed(&b).unwrap()));
        filter.insert("b");
        assert!(!same(&first, &f.parsed(&filter.to_bytes()).unwrap()));
        for i in 0..40 {
            filter.insert(&(i as u64));
            f.parsed(&filter.to_bytes()).unwrap();
        }
        assert_eq!(f.cache().entries.len(), super::CACHE_ENTRIES);
    }
}
