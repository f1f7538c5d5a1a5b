//! Polars chunks as arrow-rs arrays (zero copy, through the Arrow C data
//! interface), and the library's answers back as a Polars column.

use arrow_array::ffi::{from_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{make_array, Array, ArrayRef};
use polars::prelude::*;
use polars_arrow::bitmap::Bitmap;
use polars_arrow::ffi as c;

/// Chunk `i` of `s` as an arrow-rs array over the same buffers, in its
/// logical type (dates as Date32, categoricals as dictionaries: what
/// Polars exports to Arrow).
pub fn chunk(s: &Series, i: usize) -> PolarsResult<ArrayRef> {
    let field = s
        .dtype()
        .to_arrow_field(s.name().clone(), CompatLevel::newest());
    let mut schema = c::export_field_to_c(&field);
    let mut array = c::export_array_to_c(s.to_arrow(i, CompatLevel::newest()));
    // SAFETY: polars-arrow's `ArrowSchema` / `ArrowArray` and arrow-rs'
    // `FFI_ArrowSchema` / `FFI_ArrowArray` are both the C data interface's
    // structs (`#[repr(C)]`, the same fields in the same order), and both
    // were just exported, so they are valid. `from_raw` moves each out,
    // leaving a released (empty) struct behind, whose drop does nothing:
    // the buffers are released once, by arrow-rs.
    let (schema, array) = unsafe {
        (
            FFI_ArrowSchema::from_raw((&mut schema as *mut c::ArrowSchema).cast()),
            FFI_ArrowArray::from_raw((&mut array as *mut c::ArrowArray).cast()),
        )
    };
    // SAFETY: `array` is described by `schema` (exported together above).
    let data = unsafe { from_ffi(array, &schema) }.map_err(
        |e| polars_err!(ComputeError: "lesshash: cannot read column `{}` as Arrow: {e}", s.name()),
    )?;
    Ok(make_array(data))
}

/// arrow-rs answers as a Polars boolean array (the bits copied: one bit
/// per key).
pub fn answers(found: &arrow_array::BooleanArray) -> polars_arrow::array::BooleanArray {
    let values = found.values();
    let bits = Bitmap::from_u8_vec(values.sliced().to_vec(), values.len());
    let validity = found
        .nulls()
        .map(|n| Bitmap::from_u8_vec(n.inner().sliced().to_vec(), n.len()));
    polars_arrow::array::BooleanArray::new(ArrowDataType::Boolean, bits, validity)
}
