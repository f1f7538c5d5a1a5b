//! The two expressions: `contains` (elementwise) and `build` (an
//! aggregation).

use std::sync::Arc;

use lesshash::{BloomFilter, Layout, Scheme, DEFAULT_SEED};
use polars::prelude::*;
use pyo3_polars::derive::{_set_panic, _update_last_error, polars_expr};
use pyo3_polars::export::polars_ffi::version_0::{
    export_series, import_series_buffer, CallerContext, SeriesExport,
};
use serde::Deserialize;

use crate::bridge;
use crate::filters::{request, Nulls, Request};

/// Polars types whose values are keys, as the library's Arrow table encodes
/// them (integers, temporal types as their integers, strings, binary;
/// categoricals and enums by their strings).
fn check_keys(name: &str, dtype: &DataType, expression: &str) -> PolarsResult<()> {
    let ok = dtype.is_integer() && !matches!(dtype, DataType::Int128 | DataType::UInt128)
        || dtype.is_temporal()
        || matches!(
            dtype,
            DataType::String | DataType::Binary | DataType::Categorical(..) | DataType::Enum(..)
        );
    if !ok {
        polars_bail!(InvalidOperation:
            "lesshash.{expression}: column `{name}` of type {dtype} cannot be keys \
             (integers, dates and times, strings, binary, categoricals and enums can)");
    }
    Ok(())
}

fn lesshash_error(expression: &str, s: &Series, e: lesshash::Error) -> PolarsError {
    polars_err!(ComputeError: "lesshash.{expression} on column `{}` ({}): {e}", s.name(), s.dtype())
}

/// `contains`: whether each key may be in the request's filter.
fn contains(inputs: &[Series], request: &Request, parallel: bool) -> PolarsResult<Series> {
    let [s] = inputs else {
        polars_bail!(InvalidOperation: "lesshash.contains takes one column, got {}", inputs.len());
    };
    check_keys(s.name(), s.dtype(), "contains")?;
    let filter = request.filter()?;
    let view = filter.view();
    let mut chunks = Vec::with_capacity(s.chunks().len());
    for i in 0..s.chunks().len() {
        let keys = bridge::chunk(s, i)?;
        let found = if parallel {
            view.par_contains_array(&*keys)
        } else {
            view.contains_array(&*keys)
        }
        .map_err(|e| lesshash_error("contains", s, e))?;
        let found = bridge::answers(&found);
        chunks.push(match request.nulls {
            Nulls::Null => found,
            // A null key's answer bit is already false.
            Nulls::False => found.with_validity(None),
        });
    }
    Ok(BooleanChunked::from_chunk_iter(s.name().clone(), chunks).into_series())
}

/// Whether a call may split its keys over threads (the plugin's own
/// rayon pool): not when Polars already runs batches in parallel (the
/// streaming engine, a group-by), only when it hands over a whole column
/// from one thread.
fn may_parallelize(context: CallerContext) -> bool {
    !context.parallel()
}

/// Runs `f`, reporting an error or a panic through the plugin interface's
/// last-error message (Polars raises it as the expression's error).
fn report(f: impl FnOnce() -> PolarsResult<()> + std::panic::UnwindSafe) {
    match std::panic::catch_unwind(f) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => _update_last_error(e),
        Err(_) => _set_panic(),
    }
}

/// The plugin interface's entry for `contains`, written out rather than
/// made by `#[polars_expr]`: the keyword arguments (which carry a filter's
/// bytes when the expression holds a filter object) are looked up by their
/// digest, not parsed again per batch.
///
/// # Safety
/// Called by Polars with `input_len` exported series at `e`, its pickled
/// keyword arguments at `kwargs_ptr`, and a place for the result.
#[no_mangle]
pub unsafe extern "C" fn _polars_plugin_contains(
    e: *mut SeriesExport,
    input_len: usize,
    kwargs_ptr: *const u8,
    kwargs_len: usize,
    return_value: *mut SeriesExport,
    context: *mut CallerContext,
) {
    let kwargs: &[u8] = if kwargs_len == 0 {
        &[]
    } else {
        // SAFETY: Polars passes its kwargs buffer, valid for the call.
        unsafe { std::slice::from_raw_parts(kwargs_ptr, kwargs_len) }
    };
    let return_value = std::panic::AssertUnwindSafe(return_value);
    let context = std::panic::AssertUnwindSafe(context);
    report(move || {
        // SAFETY: Polars passes `input_len` exported series at `e`.
        let inputs = unsafe { import_series_buffer(e, input_len) }?;
        // SAFETY: Polars passes its context, valid for the call.
        let parallel = may_parallelize(unsafe { *context.0 });
        let request: Arc<Request> = request(kwargs)?;
        let out = contains(&inputs, &request, parallel)?;
        // SAFETY: Polars passes a valid, empty place for the result.
        unsafe { *return_value.0 = export_series(&out) };
        Ok(())
    });
}

/// The plugin interface's entry for `contains`'s output type: Boolean,
/// named as the input; an unsupported key type fails here, at planning.
///
/// # Safety
/// Called by Polars with `len` exported fields at `field` and a place for
/// the result.
#[no_mangle]
pub unsafe extern "C" fn _polars_plugin_field_contains(
    field: *mut polars_arrow::ffi::ArrowSchema,
    len: usize,
    return_value: *mut polars_arrow::ffi::ArrowSchema,
    _kwargs_ptr: *const u8,
    _kwargs_len: usize,
) {
    let return_value = std::panic::AssertUnwindSafe(return_value);
    report(move || {
        // SAFETY: Polars passes `len` exported fields at `field`.
        let fields = unsafe { std::slice::from_raw_parts(field, len) };
        let [input] = fields else {
            polars_bail!(InvalidOperation: "lesshash.contains takes one column, got {len}");
        };
        // SAFETY: an exported field, valid for the call.
        let input = Field::from(&unsafe { polars_arrow::ffi::import_field_from_c(input) }?);
        check_keys(input.name(), input.dtype(), "contains")?;
        let out = Field::new(input.name().clone(), DataType::Boolean);
        let out = polars_arrow::ffi::export_field_to_c(&out.to_arrow(CompatLevel::newest()));
        // SAFETY: Polars passes a valid, empty place for the result.
        unsafe { *return_value.0 = out };
        Ok(())
    });
}

/// `build`'s keyword arguments: `lesshash.BloomFilter`'s constructor's.
#[derive(Deserialize)]
struct BuildKwargs {
    expected_items: u64,
    fpr: f64,
    layout: Option<String>,
    scheme: Option<String>,
    seed: Option<u64>,
}

/// The filter `BloomFilter(expected_items, fpr, layout, scheme, seed)`
/// makes in Python (the same defaults).
fn new_filter(kwargs: &BuildKwargs) -> Result<BloomFilter, String> {
    let layout = match &kwargs.layout {
        None => Layout::default(),
        Some(name) => name.parse::<Layout>().map_err(|e| e.to_string())?,
    };
    let scheme = match &kwargs.scheme {
        None => layout.default_scheme(),
        Some(name) => name.parse::<Scheme>().map_err(|e| e.to_string())?,
    };
    BloomFilter::builder()
        .layout(layout)
        .scheme(scheme)
        .seed(kwargs.seed.unwrap_or(DEFAULT_SEED))
        .expected_items(kwargs.expected_items)
        .fpr(kwargs.fpr)
        .build()
        .map_err(|e| e.to_string())
}

/// `build`: a filter of the column's keys (nulls skipped), as its bytes in
/// the v1 format (`lesshash.BloomFilter.from_bytes` reads them).
#[polars_expr(output_type=Binary)]
fn build(inputs: &[Series], context: CallerContext, kwargs: BuildKwargs) -> PolarsResult<Series> {
    let [s] = inputs else {
        polars_bail!(InvalidOperation: "lesshash.build takes one column, got {}", inputs.len());
    };
    check_keys(s.name(), s.dtype(), "build")?;
    let mut filter =
        new_filter(&kwargs).map_err(|e| polars_err!(InvalidOperation: "lesshash.build: {e}"))?;
    for i in 0..s.chunks().len() {
        let keys = bridge::chunk(s, i)?;
        if may_parallelize(context) {
            filter.par_insert_array(&*keys)
        } else {
            filter.insert_array(&*keys)
        }
        .map_err(|e| lesshash_error("build", s, e))?;
    }
    let bytes = Arc::<[u8]>::from(filter.to_bytes());
    Ok(BinaryChunked::from_slice(s.name().clone(), &[&*bytes]).into_series())
}
