//! lesshash Bloom filters as a Polars expression plugin.
//!
//! Two expressions, registered from Python by `lesshash.polars` (the
//! `pl.col(...).lesshash` namespace):
//!
//! * `contains`: whether each key may be in a filter, elementwise, on
//!   Polars' threads without the GIL, so the lazy optimizer keeps it in the
//!   plan and the streaming engine runs it batch by batch. The filter is a
//!   file (mapped once per process, checked by its identity per batch) or a
//!   filter's bytes carried in the expression (parsed once per process).
//! * `build`: an aggregation whose value is a filter's bytes, bit for bit
//!   the filter `lesshash.BloomFilter(...).add_many(keys)` makes.
//!
//! Keys are encoded by the library's Arrow table (`lesshash::arrow`): a
//! Polars chunk goes over to an arrow-rs array through the Arrow C data
//! interface, without a copy ([`bridge`]), so a key answers here exactly
//! as `contains_many` answers it.

// The plugin interface is C's: the exported functions take raw pointers.
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod bridge;
mod expr;
mod filters;

use pyo3::prelude::*;
use pyo3_polars::PolarsAllocator;

/// Memory that Polars frees was allocated by Polars' allocator (the
/// plugin interface's rule: buffers cross the boundary both ways).
#[global_allocator]
static ALLOC: PolarsAllocator = PolarsAllocator::new();

/// The Python module maturin builds the wheel around; Polars itself loads
/// this library by path and calls the `_polars_plugin_*` functions.
#[pymodule]
fn _lesshash_polars(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
