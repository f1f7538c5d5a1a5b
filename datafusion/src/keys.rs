//! Key types at planning, and the keys' 128-bit hashes for `bloom_agg`
//! without `expected_items` (which spools hashes before it can size its
//! filter).

use datafusion::arrow::array::Array;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{DataFusionError, Result, plan_datafusion_err};
use lesshash::KeyKind;

/// The kind of keys a column of `data_type` holds, or a planning error
/// naming the function and the type (`bloom_contains: keys of type Float64
/// are not supported: ...`).
pub(crate) fn key_kind(function: &str, data_type: &DataType) -> Result<KeyKind> {
    lesshash::arrow::key_kind_of(data_type).map_err(|e| {
        let reason = match &e {
            lesshash::Error::UnsupportedKeyType { reason, .. } => (*reason).to_owned(),
            other => other.to_string(),
        };
        plan_datafusion_err!("{function}: keys of type {data_type} are not supported: {reason}")
    })
}

/// The XXH3-128 hashes, under `seed`, of the non-null keys of `keys`,
/// appended to `out`: the hashes `insert_array` computes for the same
/// array (`lesshash::arrow::hash_array`, the encoding of docs/guide.md).
/// Returns how many were appended.
pub(crate) fn hash_non_null(keys: &dyn Array, seed: u64, out: &mut Vec<u128>) -> Result<usize> {
    lesshash::arrow::hash_array(keys, seed, out)
        .map(|done| done.inserted)
        .map_err(lesshash_error)
}

/// A lesshash error as DataFusion's (execution errors; the message is
/// lesshash's, naming the parameter or field at fault).
pub(crate) fn lesshash_error(e: lesshash::Error) -> DataFusionError {
    DataFusionError::Execution(e.to_string())
}
