//! DuckDB's native `lesshash_contains(filter_path, key)`: a filter asked
//! from SQL at the cost of its own probe, with no Python per batch.
//!
//! This extension module doubles as a DuckDB extension: DuckDB loads a
//! shared library named `<name>.duckdb_extension` that ends in a 512-byte
//! metadata footer and exports `<name>_init_c_api`. `lesshash/duckdb.py`
//! copies this very library, appends the footer (`C_STRUCT`, the C API
//! version [`C_API_VERSION`], DuckDB's platform) and `LOAD`s the copy, so
//! the wheel carries the extension and nothing else is built. DuckDB then
//! calls [`lesshash_init_c_api`], which registers the function set through
//! DuckDB's stable C extension API (`libduckdb-sys`'s loadable bindings:
//! function pointers handed over at load, no DuckDB linked in). The copy
//! never runs the Python module's init; its Python symbols resolve against
//! the interpreter that loaded DuckDB.
//!
//! The function: `lesshash_contains(path VARCHAR, key T) -> BOOLEAN`, one
//! overload per key type T (every integer width, DATE, TIME and the
//! TIMESTAMPs (with a time zone too) as microseconds, VARCHAR, BLOB), each key encoded as
//! every other interface encodes that type (integers widened to 64 bits,
//! text as its UTF-8 bytes). `path` must be a constant: it is read when
//! the query is bound, where the file is opened (mapped, its checksum
//! verified once per file version: [`FILES`]) and its key kind
//! checked against T, so a wrong path, a corrupt file or a text filter
//! asked integers fails before a row is read. A NULL key answers NULL.
//!
//! DuckDB calls the function from several threads at once, 2,048 rows at a
//! time; each call reads the bind data (an `Arc` of the mapped filter) and
//! runs the crate's batch query over the vector's data in place.
// FFI with DuckDB's C API: each block says why its pointers are valid.
#![allow(unsafe_code)]

use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use lesshash::temporal::{TimeUnit, micros};
use lesshash::{KeyKind, MappedCache, MappedFilter};
use libduckdb_sys as ffi;

/// The DuckDB C extension API version requested at load and written in the
/// footer: the first version in which every call used here is stable (bind
/// callbacks and constant folding included). A DuckDB too old for it
/// refuses the `LOAD` with its own message, and `register` falls back to
/// the Python function.
pub const C_API_VERSION: &str = "v1.5.6";

/// The SQL function's name.
const NAME: &str = "lesshash_contains";

/// Rows converted per batch query when keys must be widened or sliced
/// first (DuckDB's vectors are 2,048 rows; a larger one is walked in steps).
const STEP: usize = 2048;

/// The key types the function is overloaded for, and how each is read.
#[derive(Clone, Copy, Debug)]
enum KeyType {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    /// DuckDB's DATE: days since 1970 as i32, as Arrow's Date32; the key
    /// is its midnight's microseconds (`lesshash::temporal`).
    Date,
    /// TIME and the TIMESTAMPs: an i64 count of their unit; the key is
    /// microseconds (`lesshash::temporal`), as for Arrow's.
    Time,
    Timestamp,
    TimestampS,
    TimestampMs,
    TimestampNs,
    /// TIMESTAMPTZ: the UTC instant in microseconds; and in nanoseconds.
    TimestampTz,
    TimestampTzNs,
    /// TIME_NS: nanoseconds since midnight.
    TimeNs,
    Varchar,
    Blob,
}

impl KeyType {
    const ALL: [KeyType; 19] = [
        KeyType::I8,
        KeyType::I16,
        KeyType::I32,
        KeyType::I64,
        KeyType::U8,
        KeyType::U16,
        KeyType::U32,
        KeyType::U64,
        KeyType::Date,
        KeyType::Time,
        KeyType::Timestamp,
        KeyType::TimestampS,
        KeyType::TimestampMs,
        KeyType::TimestampNs,
        KeyType::TimestampTz,
        KeyType::TimestampTzNs,
        KeyType::TimeNs,
        KeyType::Varchar,
        KeyType::Blob,
    ];

    fn duckdb_type(self) -> ffi::duckdb_type {
        use KeyType::*;
        match self {
            I8 => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TINYINT,
            I16 => ffi::DUCKDB_TYPE_DUCKDB_TYPE_SMALLINT,
            I32 => ffi::DUCKDB_TYPE_DUCKDB_TYPE_INTEGER,
            I64 => ffi::DUCKDB_TYPE_DUCKDB_TYPE_BIGINT,
            U8 => ffi::DUCKDB_TYPE_DUCKDB_TYPE_UTINYINT,
            U16 => ffi::DUCKDB_TYPE_DUCKDB_TYPE_USMALLINT,
            U32 => ffi::DUCKDB_TYPE_DUCKDB_TYPE_UINTEGER,
            U64 => ffi::DUCKDB_TYPE_DUCKDB_TYPE_UBIGINT,
            Date => ffi::DUCKDB_TYPE_DUCKDB_TYPE_DATE,
            Time => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIME,
            Timestamp => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP,
            TimestampS => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_S,
            TimestampMs => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_MS,
            TimestampNs => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_NS,
            TimestampTz => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_TZ,
            TimestampTzNs => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIMESTAMP_TZ_NS,
            TimeNs => ffi::DUCKDB_TYPE_DUCKDB_TYPE_TIME_NS,
            Varchar => ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR,
            Blob => ffi::DUCKDB_TYPE_DUCKDB_TYPE_BLOB,
        }
    }

    fn sql_name(self) -> &'static str {
        use KeyType::*;
        match self {
            I8 => "TINYINT",
            I16 => "SMALLINT",
            I32 => "INTEGER",
            I64 => "BIGINT",
            U8 => "UTINYINT",
            U16 => "USMALLINT",
            U32 => "UINTEGER",
            U64 => "UBIGINT",
            Date => "DATE",
            Time => "TIME",
            Timestamp => "TIMESTAMP",
            TimestampS => "TIMESTAMP_S",
            TimestampMs => "TIMESTAMP_MS",
            TimestampNs => "TIMESTAMP_NS",
            TimestampTz => "TIMESTAMPTZ",
            TimestampTzNs => "TIMESTAMPTZ_NS",
            TimeNs => "TIME_NS",
            Varchar => "VARCHAR",
            Blob => "BLOB",
        }
    }

    fn kind(self) -> KeyKind {
        match self {
            KeyType::Varchar => KeyKind::Text,
            KeyType::Blob => KeyKind::Bytes,
            _ => KeyKind::Int64,
        }
    }
}

/// What a bound call holds: the filter and the key type of its overload.
struct Bound {
    filter: Arc<MappedFilter>,
    key_type: KeyType,
}

/// The filter files queries name: each mapped and verified once per
/// version of the file, then one `stat` per bind, so a file replaced
/// between queries is opened again; versions since replaced or removed (a
/// re-registered filter's old snapshot) are let go once no bound query
/// holds them.
static FILES: MappedCache = MappedCache::new(64);

/// The bind-time error for a key kind the filter was not built from, in
/// SQL's terms (the datafusion crate's words).
fn kind_error(path: &str, filter: KeyKind, key_type: KeyType) -> String {
    let cast = match filter {
        KeyKind::Int64 => "CAST(key AS BIGINT)",
        _ => "CAST(key AS VARCHAR)",
    };
    format!(
        "{NAME}: the filter {path} was built from {} keys but these keys (type {}) are {}: \
         the integer 7 and the text '7' are different keys, so every answer would be false; \
         give keys of the filter's kind ({cast} if the values are the same)",
        filter.name(),
        key_type.sql_name(),
        key_type.kind().name(),
    )
}

/// Reads the constant path argument, opens the filter and checks its kind.
///
/// # Safety
/// `info` is the bind info DuckDB passes to the bind callback.
unsafe fn bind(info: ffi::duckdb_bind_info) -> Result<Bound, String> {
    // SAFETY (all calls below): `info` is live for this callback; each
    // handle DuckDB returns is destroyed once, before returning.
    unsafe {
        let key_type = *(ffi::duckdb_scalar_function_bind_get_extra_info(info) as *const KeyType);
        let mut context: ffi::duckdb_client_context = std::ptr::null_mut();
        ffi::duckdb_scalar_function_get_client_context(info, &mut context);
        let mut expr = ffi::duckdb_scalar_function_bind_get_argument(info, 0);
        let path = if ffi::duckdb_expression_is_foldable(expr) {
            let mut value: ffi::duckdb_value = std::ptr::null_mut();
            let mut error = ffi::duckdb_expression_fold(context, expr, &mut value);
            let path = if !error.is_null() {
                let message = CStr::from_ptr(ffi::duckdb_error_data_message(error))
                    .to_string_lossy()
                    .into_owned();
                ffi::duckdb_destroy_error_data(&mut error);
                Err(format!(
                    "{NAME}: the filter path could not be evaluated: {message}"
                ))
            } else if ffi::duckdb_is_null_value(value) {
                Err(format!("{NAME}: the filter path is NULL"))
            } else {
                let text = ffi::duckdb_get_varchar(value);
                let path = CStr::from_ptr(text).to_string_lossy().into_owned();
                ffi::duckdb_free(text as *mut c_void);
                Ok(path)
            };
            ffi::duckdb_destroy_value(&mut value);
            path
        } else {
            Err(format!(
                "{NAME}: the filter path (the first argument) must be a constant, such as a string literal"
            ))
        };
        ffi::duckdb_destroy_expression(&mut expr);
        ffi::duckdb_destroy_client_context(&mut context);
        let path = path?;
        let filter = FILES
            .open(&path)
            .map_err(|e| format!("{NAME}: {path}: {e}"))?;
        if !filter.key_kind().accepts(key_type.kind()) {
            return Err(kind_error(&path, filter.key_kind(), key_type));
        }
        Ok(Bound { filter, key_type })
    }
}

unsafe extern "C" fn bind_callback(info: ffi::duckdb_bind_info) {
    // SAFETY: DuckDB calls this with a live bind info.
    let result = catch_unwind(AssertUnwindSafe(|| unsafe { bind(info) }))
        .unwrap_or_else(|_| Err(format!("{NAME}: internal error while binding (a panic)")));
    match result {
        Ok(bound) => unsafe {
            // SAFETY: the box is freed by `drop_bound`, DuckDB's delete
            // callback, once per copy `copy_bound` made.
            ffi::duckdb_scalar_function_set_bind_data(
                info,
                Box::into_raw(Box::new(bound)) as *mut c_void,
                Some(drop_bound),
            );
            ffi::duckdb_scalar_function_set_bind_data_copy(info, Some(copy_bound));
        },
        Err(message) => set_error(message, |m| unsafe {
            // SAFETY: `info` is live; DuckDB copies the message.
            ffi::duckdb_scalar_function_bind_set_error(info, m)
        }),
    }
}

unsafe extern "C" fn drop_bound(data: *mut c_void) {
    // SAFETY: `data` came from `Box::into_raw` in `bind_callback` or
    // `copy_bound`, and DuckDB deletes each once.
    drop(unsafe { Box::from_raw(data as *mut Bound) });
}

unsafe extern "C" fn copy_bound(data: *mut c_void) -> *mut c_void {
    // SAFETY: `data` is a live `Bound` (see `drop_bound`).
    let bound = unsafe { &*(data as *const Bound) };
    Box::into_raw(Box::new(Bound {
        filter: Arc::clone(&bound.filter),
        key_type: bound.key_type,
    })) as *mut c_void
}

unsafe extern "C" fn drop_key_type(data: *mut c_void) {
    // SAFETY: the extra info was `Box::into_raw` of a `KeyType`.
    drop(unsafe { Box::from_raw(data as *mut KeyType) });
}

fn set_error(message: String, set: impl FnOnce(*const c_char)) {
    let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
    set(message.as_ptr());
}

/// Answers one chunk: `out[i]` whether row i's key may be in the filter,
/// NULL where the key is NULL.
///
/// # Safety
/// The arguments are those DuckDB passes to the scalar function.
unsafe fn execute(
    info: ffi::duckdb_function_info,
    input: ffi::duckdb_data_chunk,
    output: ffi::duckdb_vector,
) -> Result<(), String> {
    // SAFETY: DuckDB flattens the chunk before calling (every vector holds
    // `rows` values at its data pointer, the validity mask one bit per row
    // or null when every row is valid); the output vector is a BOOLEAN
    // vector of at least `rows` bytes; the bind data is the `Bound` set at
    // bind time and outlives the call.
    unsafe {
        let bound = &*(ffi::duckdb_scalar_function_get_bind_data(info) as *const Bound);
        let rows = ffi::duckdb_data_chunk_get_size(input) as usize;
        let keys = ffi::duckdb_data_chunk_get_vector(input, 1);
        let data = ffi::duckdb_vector_get_data(keys);
        let validity = ffi::duckdb_vector_get_validity(keys) as *const u64;
        let out =
            std::slice::from_raw_parts_mut(ffi::duckdb_vector_get_data(output) as *mut bool, rows);
        let valid =
            |row: usize| validity.is_null() || *validity.add(row / 64) >> (row % 64) & 1 == 1;
        let filter = &bound.filter;
        // Keys of type `$t` queried as the 64-bit integer `$key` makes of
        // each, a chunk at a time.
        macro_rules! keyed {
            ($t:ty, $key:expr) => {{
                let keys = std::slice::from_raw_parts(data as *const $t, rows);
                let mut wide = [0u64; STEP];
                for (keys, out) in keys.chunks(STEP).zip(out.chunks_mut(STEP)) {
                    let wide = &mut wide[..keys.len()];
                    for (w, &k) in wide.iter_mut().zip(keys) {
                        *w = $key(k);
                    }
                    filter
                        .contains_batch(wide, out)
                        .map_err(|e| e.to_string())?;
                }
            }};
        }
        // Signed types sign-extend, unsigned zero-extend: the encoding of
        // every interface (KeyKind::Int64).
        macro_rules! widened {
            ($t:ty) => {
                keyed!($t, |k: $t| k as i64 as u64)
            };
        }
        // A DATE, or a TIME or TIMESTAMP in another unit than
        // microseconds: the key of each (`lesshash::temporal::micros`).
        macro_rules! micros {
            ($t:ty, $unit:expr) => {
                keyed!($t, |k: $t| micros(k.into(), $unit) as u64)
            };
        }
        match bound.key_type {
            KeyType::I8 => widened!(i8),
            KeyType::I16 => widened!(i16),
            KeyType::I32 => widened!(i32),
            KeyType::Date => micros!(i32, TimeUnit::Day),
            KeyType::U8 => widened!(u8),
            KeyType::U16 => widened!(u16),
            KeyType::U32 => widened!(u32),
            KeyType::TimestampS => micros!(i64, TimeUnit::Second),
            KeyType::TimestampMs => micros!(i64, TimeUnit::Millisecond),
            KeyType::TimestampNs | KeyType::TimestampTzNs | KeyType::TimeNs => {
                micros!(i64, TimeUnit::Nanosecond)
            }
            KeyType::I64
            | KeyType::U64
            | KeyType::Time
            | KeyType::Timestamp
            | KeyType::TimestampTz => {
                // Already 64 bits: queried in place.
                let keys = std::slice::from_raw_parts(data as *const u64, rows);
                filter
                    .contains_batch(keys, out)
                    .map_err(|e| e.to_string())?;
            }
            KeyType::Varchar | KeyType::Blob => {
                let strings = data as *const ffi::duckdb_string_t;
                let mut slices: Vec<&[u8]> = Vec::with_capacity(rows.min(STEP));
                for (start, out) in (0..rows).step_by(STEP).zip(out.chunks_mut(STEP)) {
                    slices.clear();
                    for row in start..start + out.len() {
                        // A NULL row's string is not defined: never read.
                        slices.push(if valid(row) {
                            string_bytes(&*strings.add(row))
                        } else {
                            &[]
                        });
                    }
                    filter
                        .contains_batch(&slices, out)
                        .map_err(|e| e.to_string())?;
                }
            }
        }
        if !validity.is_null() {
            ffi::duckdb_vector_ensure_validity_writable(output);
            let out_validity = ffi::duckdb_vector_get_validity(output);
            std::ptr::copy_nonoverlapping(validity, out_validity, rows.div_ceil(64));
        }
        Ok(())
    }
}

/// The bytes of a DuckDB string: up to 12 inline after the length, longer
/// ones behind a pointer (DuckDB's `string_t`).
///
/// # Safety
/// `s` is a valid (non-NULL row's) string of a vector that outlives the
/// borrow (a long string's bytes live in the vector's heap, not in `s`).
unsafe fn string_bytes(s: &ffi::duckdb_string_t) -> &[u8] {
    // SAFETY: both union members start with the length; strings of at most
    // 12 bytes are inline, longer ones point at `length` bytes the vector
    // owns.
    unsafe {
        let len = s.value.inlined.length as usize;
        if len <= 12 {
            std::slice::from_raw_parts(s.value.inlined.inlined.as_ptr() as *const u8, len)
        } else {
            std::slice::from_raw_parts(s.value.pointer.ptr as *const u8, len)
        }
    }
}

unsafe extern "C" fn execute_callback(
    info: ffi::duckdb_function_info,
    input: ffi::duckdb_data_chunk,
    output: ffi::duckdb_vector,
) {
    // SAFETY: DuckDB passes live handles (see `execute`).
    let result = catch_unwind(AssertUnwindSafe(|| unsafe { execute(info, input, output) }))
        .unwrap_or_else(|_| Err(format!("{NAME}: internal error (a panic)")));
    if let Err(message) = result {
        set_error(message, |m| unsafe {
            // SAFETY: `info` is live; DuckDB copies the message.
            ffi::duckdb_scalar_function_set_error(info, m)
        });
    }
}

/// Registers the function set on `con`.
///
/// # Safety
/// The extension API is initialised and `con` is a live connection.
unsafe fn register(con: ffi::duckdb_connection) -> Result<(), String> {
    let name = CString::new(NAME).expect("no NUL in the name");
    // SAFETY: every handle created here is destroyed here; DuckDB copies
    // the functions when the set is registered.
    unsafe {
        let mut set = ffi::duckdb_create_scalar_function_set(name.as_ptr());
        let mut path_type = ffi::duckdb_create_logical_type(ffi::DUCKDB_TYPE_DUCKDB_TYPE_VARCHAR);
        let mut boolean = ffi::duckdb_create_logical_type(ffi::DUCKDB_TYPE_DUCKDB_TYPE_BOOLEAN);
        let mut added = true;
        for key_type in KeyType::ALL {
            let mut key = ffi::duckdb_create_logical_type(key_type.duckdb_type());
            if ffi::duckdb_get_type_id(key) != key_type.duckdb_type() {
                // A type this DuckDB does not have (TIME_NS and
                // TIMESTAMPTZ_NS are newer than 1.1): no such overload.
                ffi::duckdb_destroy_logical_type(&mut key);
                continue;
            }
            let mut function = ffi::duckdb_create_scalar_function();
            ffi::duckdb_scalar_function_set_name(function, name.as_ptr());
            ffi::duckdb_scalar_function_add_parameter(function, path_type);
            ffi::duckdb_scalar_function_add_parameter(function, key);
            ffi::duckdb_destroy_logical_type(&mut key);
            ffi::duckdb_scalar_function_set_return_type(function, boolean);
            ffi::duckdb_scalar_function_set_extra_info(
                function,
                Box::into_raw(Box::new(key_type)) as *mut c_void,
                Some(drop_key_type),
            );
            ffi::duckdb_scalar_function_set_bind(function, Some(bind_callback));
            ffi::duckdb_scalar_function_set_function(function, Some(execute_callback));
            added &= ffi::duckdb_add_scalar_function_to_set(set, function) == ffi::DuckDBSuccess;
            ffi::duckdb_destroy_scalar_function(&mut function);
        }
        let registered =
            added && ffi::duckdb_register_scalar_function_set(con, set) == ffi::DuckDBSuccess;
        ffi::duckdb_destroy_logical_type(&mut path_type);
        ffi::duckdb_destroy_logical_type(&mut boolean);
        ffi::duckdb_destroy_scalar_function_set(&mut set);
        if registered {
            Ok(())
        } else {
            Err(format!(
                "lesshash: DuckDB refused to register {NAME} (is another function of that name loaded?)"
            ))
        }
    }
}

/// DuckDB's entry point for the extension `lesshash` (the name of the file
/// it loads, `lesshash.duckdb_extension`): takes the C API's function
/// table, then registers [`NAME`] on a connection of its own.
///
/// # Safety
/// Called by DuckDB's loader with its extension info and access table.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn lesshash_init_c_api(
    info: ffi::duckdb_extension_info,
    access: *const ffi::duckdb_extension_access,
) -> bool {
    // SAFETY: `info` and `access` are DuckDB's, live for this call; the
    // database handle it returns is live while the extension loads.
    let result = catch_unwind(AssertUnwindSafe(|| unsafe {
        match ffi::duckdb_rs_extension_api_init(info, access, C_API_VERSION) {
            Ok(true) => {}
            // DuckDB has recorded why (the version it cannot serve).
            Ok(false) => return Ok(false),
            Err(e) => return Err(format!("lesshash: {e}")),
        }
        let Some(get_database) = (*access).get_database else {
            return Err("lesshash: DuckDB gave no get_database".to_owned());
        };
        let db = get_database(info);
        if db.is_null() {
            return Ok(false);
        }
        let mut con: ffi::duckdb_connection = std::ptr::null_mut();
        if ffi::duckdb_connect(*db, &mut con) != ffi::DuckDBSuccess {
            return Err("lesshash: could not connect to the database being loaded into".to_owned());
        }
        let registered = register(con);
        ffi::duckdb_disconnect(&mut con);
        registered.map(|()| true)
    }))
    .unwrap_or_else(|_| Err("lesshash: internal error while loading (a panic)".to_owned()));
    match result {
        Ok(loaded) => loaded,
        Err(message) => {
            // SAFETY: `access` is DuckDB's; it copies the message.
            if let Some(set) = unsafe { (*access).set_error } {
                set_error(message, |m| unsafe { set(info, m) });
            }
            false
        }
    }
}
