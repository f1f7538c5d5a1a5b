//! `bloom_agg(keys [, expected_items [, fpr]])`: the aggregate.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Schema, UInt64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue, exec_err, plan_err};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::{AggregateOrderSensitivity, format_state_name};
use datafusion::logical_expr::{
    Accumulator, AggregateUDFImpl, ColumnarValue, Signature, Volatility,
};
use datafusion::physical_expr::PhysicalExpr;
use lesshash::{BloomFilter, KeyKind};

use crate::keys::{hash_non_null, key_kind, lesshash_error};

/// The function's name in SQL.
const NAME: &str = "bloom_agg";

/// The false-positive rate `bloom_agg` sizes its filter for when called
/// without `fpr` (or with `NULL`): 1%, lesshash's and the command line's
/// usual default.
pub const DEFAULT_FPR: f64 = 0.01;

/// The seed `BloomFilter::with_fpr` builds with, under which the spooled
/// hashes are computed.
const SEED: u64 = lesshash::DEFAULT_SEED;

/// The largest value a `Binary` result holds (its offsets are `i32`).
const MAX_BINARY: usize = i32::MAX as usize;

/// `bloom_agg(keys [, expected_items [, fpr]])`: a lesshash filter of the
/// non-null keys, as its bytes in the v1 format (`Binary`): what
/// `BloomFilter::with_fpr(expected_items, fpr)` and `insert_array` of the
/// same keys write, bit for bit, however the input is partitioned (each
/// partition builds its own filter and the filters are combined by union,
/// which is exact, the insert counter summed).
///
/// * `expected_items` (an integer constant): the number of distinct keys
///   the filter is sized for. Omitted (or `NULL`), the filter is sized for
///   the number of distinct keys actually seen: each partition keeps the
///   keys' 128-bit hashes (16 bytes per distinct key, deduplicated as it
///   goes) and the final step counts them, builds
///   `with_fpr(distinct, fpr)` and inserts them. Give it for large inputs:
///   the filter then takes its final size (about 1.2 bytes per key at 1%)
///   from the start.
/// * `fpr` (a constant in (0, 1)): the false-positive rate, [`DEFAULT_FPR`]
///   when omitted or `NULL`.
///
/// `NULL` keys are skipped. An empty input (or one of `NULL`s only) gives an
/// empty filter's bytes, not `NULL`: a filter that answers `false` for
/// every key. The filter records the kind of keys (int64, text, bytes) of
/// the column's type, so that querying it with another kind is caught.
///
/// Registered by [`register`](crate::register); [`bloom_agg`](crate::bloom_agg) makes the
/// [`AggregateUDF`](datafusion::logical_expr::AggregateUDF).
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct BloomAgg {
    signature: Signature,
}

impl BloomAgg {
    /// The function.
    pub fn new() -> Self {
        Self {
            signature: Signature::user_defined(Volatility::Immutable),
        }
    }
}

impl Default for BloomAgg {
    fn default() -> Self {
        Self::new()
    }
}

impl AggregateUDFImpl for BloomAgg {
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
        Ok(DataType::Binary)
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        // One layout for both modes: a filter's bytes, or the spooled
        // hashes (16 little-endian bytes each, sorted, distinct); and the
        // number of keys inserted. `LargeBinary`: hashes pass 2 GiB at
        // 134 million distinct keys.
        Ok(vec![
            Arc::new(Field::new(
                format_state_name(args.name, "bytes"),
                DataType::LargeBinary,
                true,
            )),
            Arc::new(Field::new(
                format_state_name(args.name, "inserted"),
                DataType::UInt64,
                true,
            )),
        ])
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let key_type = args
            .expr_fields
            .first()
            .map(|f| f.data_type().clone())
            .ok_or_else(|| DataFusionError::Internal(format!("{NAME} without arguments")))?;
        let kind = key_kind(NAME, &key_type)?;
        let expected_items = match args.exprs.get(1) {
            Some(e) => expected_items(e)?,
            None => None,
        };
        let fpr = match args.exprs.get(2) {
            Some(e) => fpr(e)?,
            None => DEFAULT_FPR,
        };
        // Parameters are checked before any row is read, by building a
        // filter (a minimal one when sized at the end).
        let mut filter = BloomFilter::with_fpr(expected_items.unwrap_or(0), fpr)
            .map_err(|e| DataFusionError::Execution(format!("{NAME}: {e}")))?;
        filter.set_key_kind(kind);
        let state = match expected_items {
            Some(_) => State::Sized(Box::new(filter)),
            None => State::Spooled {
                hashes: Vec::new(),
                distinct: 0,
                inserted: 0,
            },
        };
        Ok(Box::new(BloomAccumulator { state, kind, fpr }))
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        AggregateOrderSensitivity::Insensitive
    }
}

/// The argument types `bloom_agg` is called with, or a planning error
/// naming the function and the type at fault.
fn check_arguments(arg_types: &[DataType]) -> Result<Vec<DataType>> {
    if arg_types.is_empty() || arg_types.len() > 3 {
        return plan_err!(
            "{NAME} takes 1 to 3 arguments (keys [, expected_items [, fpr]]), got {}",
            arg_types.len()
        );
    }
    key_kind(NAME, &arg_types[0])?;
    let mut types = vec![arg_types[0].clone()];
    if let Some(t) = arg_types.get(1) {
        types.push(match t {
            t if t.is_signed_integer() => DataType::Int64,
            t if t.is_unsigned_integer() => DataType::UInt64,
            t if t.is_floating() || t.is_decimal() => DataType::Float64,
            DataType::Null => DataType::Null,
            other => {
                return plan_err!(
                    "{NAME}: expected_items must be an integer constant, not of type {other}"
                );
            }
        });
    }
    if let Some(t) = arg_types.get(2) {
        types.push(match t {
            t if t.is_numeric() => DataType::Float64,
            DataType::Null => DataType::Null,
            other => {
                return plan_err!("{NAME}: fpr must be a number in (0, 1), not of type {other}");
            }
        });
    }
    Ok(types)
}

/// The value of a constant argument, or an error naming it.
fn constant(expr: &Arc<dyn PhysicalExpr>, argument: &str) -> Result<ScalarValue> {
    let batch = RecordBatch::new_empty(Arc::new(Schema::empty()));
    match expr.evaluate(&batch) {
        Ok(ColumnarValue::Scalar(value)) => Ok(value),
        _ => plan_err!("{NAME}: {argument} must be a constant, not {expr}"),
    }
}

/// `expected_items`: `None` for `NULL` (size from the distinct keys).
fn expected_items(expr: &Arc<dyn PhysicalExpr>) -> Result<Option<u64>> {
    let value = constant(expr, "expected_items")?;
    let n = match value {
        v if v.is_null() => return Ok(None),
        ScalarValue::Int64(Some(n)) => u64::try_from(n).ok(),
        ScalarValue::UInt64(Some(n)) => Some(n),
        ScalarValue::Float64(Some(x)) if x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(64) => {
            Some(x as u64)
        }
        _ => None,
    };
    match n {
        Some(n) => Ok(Some(n)),
        None => plan_err!("{NAME}: expected_items must be a whole number >= 0, not {value}"),
    }
}

/// `fpr`: [`DEFAULT_FPR`] for `NULL`; its range is the builder's to check.
fn fpr(expr: &Arc<dyn PhysicalExpr>) -> Result<f64> {
    match constant(expr, "fpr")? {
        v if v.is_null() => Ok(DEFAULT_FPR),
        ScalarValue::Float64(Some(p)) => Ok(p),
        other => plan_err!("{NAME}: fpr must be a number in (0, 1), not {other}"),
    }
}

/// One partition's (or group's) filter in the making.
#[derive(Debug)]
struct BloomAccumulator {
    state: State,
    kind: KeyKind,
    fpr: f64,
}

#[derive(Debug)]
enum State {
    /// `expected_items` given: the filter itself (boxed: a filter's
    /// parameters and derived constants are a few hundred bytes, the
    /// spool a few words).
    Sized(Box<BloomFilter>),
    /// Sized at the end: the keys' hashes; the first `distinct` sorted
    /// and distinct, the rest appended since; and how many keys (not
    /// `NULL`) were inserted, which the filter's counter records.
    Spooled {
        hashes: Vec<u128>,
        distinct: usize,
        inserted: u64,
    },
}

impl BloomAccumulator {
    /// Sorts and deduplicates the spooled hashes.
    fn compact(&mut self) {
        if let State::Spooled {
            hashes, distinct, ..
        } = &mut self.state
            && *distinct != hashes.len()
        {
            hashes.sort_unstable();
            hashes.dedup();
            *distinct = hashes.len();
        }
    }

    /// The filter's bytes: the one built, or the one the spooled hashes
    /// make.
    fn filter_bytes(&mut self) -> Result<Vec<u8>> {
        self.compact();
        match &self.state {
            State::Sized(filter) => Ok(filter.to_bytes()),
            State::Spooled {
                hashes, inserted, ..
            } => {
                let mut filter = BloomFilter::with_fpr(hashes.len() as u64, self.fpr)
                    .map_err(|e| DataFusionError::Execution(format!("{NAME}: {e}")))?;
                filter.set_key_kind(self.kind);
                let mut by_hash = filter.prehashed_mut().map_err(lesshash_error)?;
                // The spooled hashes are XXH3-128 under SEED (`hash_non_null`).
                if by_hash.seed() != SEED || by_hash.hash_family() != lesshash::HashFamily::Xxh3 {
                    return exec_err!("{NAME}: the default filter's seed or hash family changed");
                }
                by_hash.insert_batch(hashes);
                // The counter counts every key inserted, repeats included,
                // as `insert_array` does: insert some again (their bits are
                // set already) until it does.
                let mut left = inserted.saturating_sub(hashes.len() as u64);
                while left > 0 {
                    let n = usize::try_from(left)
                        .unwrap_or(usize::MAX)
                        .min(hashes.len());
                    if n == 0 {
                        break;
                    }
                    by_hash.insert_batch(&hashes[..n]);
                    left -= n as u64;
                }
                Ok(filter.to_bytes())
            }
        }
    }
}

impl Accumulator for BloomAccumulator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let Some(keys) = values.first() else {
            return exec_err!("{NAME}: no keys");
        };
        match &mut self.state {
            State::Sized(filter) => {
                filter
                    .insert_array(keys.as_ref())
                    .map_err(|e| DataFusionError::Execution(format!("{NAME}: {e}")))?;
            }
            State::Spooled {
                hashes,
                distinct,
                inserted,
            } => {
                let n = hash_non_null(keys.as_ref(), SEED, hashes)?;
                *inserted = inserted.saturating_add(n as u64);
                // Deduplicate when the unsorted tail outgrows the sorted
                // part: memory stays within about twice 16 bytes per
                // distinct key (plus a batch), each hash sorted O(log n)
                // times.
                if hashes.len() - *distinct > (*distinct).max(1 << 16) {
                    self.compact();
                }
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.compact();
        Ok(match &self.state {
            State::Sized(filter) => vec![
                ScalarValue::LargeBinary(Some(filter.to_bytes())),
                ScalarValue::UInt64(Some(filter.insert_calls())),
            ],
            State::Spooled {
                hashes, inserted, ..
            } => {
                let bytes: Vec<u8> = hashes.iter().flat_map(|h| h.to_le_bytes()).collect();
                vec![
                    ScalarValue::LargeBinary(Some(bytes)),
                    ScalarValue::UInt64(Some(*inserted)),
                ]
            }
        })
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let [bytes, inserted_column] = states else {
            return exec_err!("{NAME}: expected 2 state columns, got {}", states.len());
        };
        let bytes = bytes.as_binary::<i64>();
        let inserted_column = inserted_column.as_primitive::<UInt64Type>();
        for row in 0..bytes.len() {
            if bytes.is_null(row) {
                continue;
            }
            let part = bytes.value(row);
            match &mut self.state {
                State::Sized(filter) => {
                    let other = BloomFilter::from_bytes(part).map_err(|e| {
                        DataFusionError::Internal(format!("{NAME}: a partial filter: {e}"))
                    })?;
                    filter
                        .union(&other)
                        .map_err(|e| DataFusionError::Internal(format!("{NAME}: {e}")))?;
                }
                State::Spooled {
                    hashes, inserted, ..
                } => {
                    if part.len() % 16 != 0 {
                        return exec_err!("{NAME}: a partial state of {} bytes", part.len());
                    }
                    hashes.extend(
                        part.chunks_exact(16)
                            .map(|c| u128::from_le_bytes(c.try_into().expect("16 bytes"))),
                    );
                    if !inserted_column.is_null(row) {
                        *inserted = inserted.saturating_add(inserted_column.value(row));
                    }
                }
            }
        }
        self.compact();
        Ok(())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let bytes = self.filter_bytes()?;
        if bytes.len() > MAX_BINARY {
            return exec_err!(
                "{NAME}: the filter is {} bytes, more than a Binary value holds (2 GiB): \
                 build it with lesshash itself (the command line or the library) instead",
                bytes.len()
            );
        }
        Ok(ScalarValue::Binary(Some(bytes)))
    }

    fn size(&self) -> usize {
        size_of::<Self>()
            + match &self.state {
                State::Sized(filter) => filter.size_in_bytes(),
                State::Spooled { hashes, .. } => hashes.capacity() * size_of::<u128>(),
            }
    }
}
