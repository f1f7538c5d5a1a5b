//! The Parquet storage of Arrow types Parquet has no logical type for.
//!
//! Parquet's TIMESTAMP and TIME have no seconds unit and its DATE is days,
//! so the parquet crate writes Arrow's `timestamp[s]`, `time32[s]` and
//! `date64` as plain integers, which every reader then sees as numbers.
//! Written as pyarrow writes them instead (milliseconds, milliseconds,
//! days, with those logical types) and with the input's Arrow schema
//! recorded beside them, every reader sees dates, times and timestamps
//! again: arrow-rs and pyarrow give a `date64` back as it was and the
//! seconds as the same values in milliseconds (as they read pyarrow's own
//! such files); each cell keeps its key (`lesshash::temporal`).

use std::sync::Arc;

use anyhow::{Result, anyhow};
use arrow_array::cast::AsArray;
use arrow_array::types::{Date64Type, Time32SecondType, TimestampSecondType};
use arrow_array::{
    Array, ArrayRef, Date32Array, PrimitiveArray, RecordBatch, Time32MillisecondArray,
    TimestampMillisecondArray,
};
use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

/// Milliseconds in a day.
const MILLIS_PER_DAY: i64 = 86_400_000;

/// The type a top-level column of `data_type` is stored as, if not its own
/// (a dictionary's: its values', as the parquet crate writes a dictionary).
fn stored(data_type: &DataType) -> Option<DataType> {
    Some(match data_type {
        DataType::Dictionary(key, value) => {
            DataType::Dictionary(key.clone(), Box::new(stored(value)?))
        }
        DataType::Timestamp(TimeUnit::Second, tz) => {
            DataType::Timestamp(TimeUnit::Millisecond, tz.clone())
        }
        DataType::Time32(TimeUnit::Second) => DataType::Time32(TimeUnit::Millisecond),
        DataType::Date64 => DataType::Date32,
        _ => return None,
    })
}

/// The schema `schema`'s batches are stored as, if it differs.
pub(crate) fn stored_schema(schema: &Schema) -> Option<SchemaRef> {
    if !schema
        .fields()
        .iter()
        .any(|f| stored(f.data_type()).is_some())
    {
        return None;
    }
    let fields: Vec<Arc<Field>> = schema
        .fields()
        .iter()
        .map(|f| match stored(f.data_type()) {
            Some(t) => Arc::new(f.as_ref().clone().with_data_type(t)),
            None => Arc::clone(f),
        })
        .collect();
    Some(Arc::new(Schema::new_with_metadata(
        fields,
        schema.metadata().clone(),
    )))
}

/// `batch`, from the input named `source`, as `schema` ([`stored_schema`]
/// of its own) stores it.
///
/// # Errors
/// Naming the column and the input: a value the stored unit cannot hold
/// (seconds beyond the milliseconds' range, a `date64` that is not a whole
/// day), which would otherwise be lost.
pub(crate) fn to_stored(
    batch: &RecordBatch,
    schema: &SchemaRef,
    source: &str,
) -> Result<RecordBatch> {
    let columns = batch
        .columns()
        .iter()
        .zip(schema.fields())
        .map(|(column, field)| {
            if column.data_type() == field.data_type() {
                return Ok(Arc::clone(column));
            }
            convert(column.as_ref(), field.data_type()).map_err(|why| {
                anyhow!(
                    "cannot write column {:?} of {source} to Parquet: {why}; write an Arrow IPC \
                     output to keep it",
                    field.name()
                )
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RecordBatch::try_new(Arc::clone(schema), columns)?)
}

fn convert(column: &dyn Array, to: &DataType) -> Result<ArrayRef, String> {
    fn millis(v: i64) -> Result<i64, String> {
        v.checked_mul(1_000)
            .ok_or_else(|| format!("{v} s is beyond the range of Parquet's milliseconds"))
    }
    Ok(match (column.data_type(), to) {
        (DataType::Dictionary(_, _), DataType::Dictionary(_, value)) => {
            let dictionary = column.as_any_dictionary();
            dictionary.with_values(convert(dictionary.values().as_ref(), value)?)
        }
        (DataType::Timestamp(TimeUnit::Second, _), DataType::Timestamp(_, tz)) => {
            let a: &PrimitiveArray<TimestampSecondType> = column.as_primitive();
            let ms: TimestampMillisecondArray = a.try_unary(millis)?;
            Arc::new(ms.with_timezone_opt(tz.clone()))
        }
        (DataType::Time32(TimeUnit::Second), _) => {
            let a: &PrimitiveArray<Time32SecondType> = column.as_primitive();
            let ms: Time32MillisecondArray = a.try_unary(|v| {
                v.checked_mul(1_000).ok_or_else(|| {
                    format!("time {v} s is beyond the range of Parquet's milliseconds")
                })
            })?;
            Arc::new(ms)
        }
        (DataType::Date64, _) => {
            let a: &PrimitiveArray<Date64Type> = column.as_primitive();
            let days: Date32Array = a.try_unary(|v| {
                if v % MILLIS_PER_DAY != 0 {
                    return Err(format!(
                        "date64 value {v} ms is not a whole day (Parquet's DATE holds days)"
                    ));
                }
                i32::try_from(v / MILLIS_PER_DAY)
                    .map_err(|_| format!("date64 value {v} ms is beyond Parquet's DATE range"))
            })?;
            Arc::new(days)
        }
        (from, to) => return Err(format!("no stored form of {from} as {to}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Date64Array, Int64Array, Time32SecondArray, TimestampSecondArray};

    fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
        RecordBatch::try_from_iter(columns).unwrap()
    }

    #[test]
    fn seconds_become_milliseconds_and_date64_days() {
        let b = batch(vec![
            ("id", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef),
            (
                "ts",
                Arc::new(
                    TimestampSecondArray::from(vec![Some(-1), None, Some(1_700_000_000)])
                        .with_timezone("UTC"),
                ),
            ),
            ("t", Arc::new(Time32SecondArray::from(vec![0, 86_399, 1]))),
            (
                "d",
                Arc::new(Date64Array::from(vec![
                    Some(-MILLIS_PER_DAY),
                    Some(19_700 * MILLIS_PER_DAY),
                    None,
                ])),
            ),
        ]);
        let schema = stored_schema(&b.schema()).unwrap();
        let s = to_stored(&b, &schema, "in.arrow").unwrap();
        assert_eq!(
            s.column(1).data_type(),
            &DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into()))
        );
        let ts = s
            .column(1)
            .as_primitive::<arrow_array::types::TimestampMillisecondType>();
        assert_eq!(
            ts.iter().collect::<Vec<_>>(),
            [Some(-1_000), None, Some(1_700_000_000_000)]
        );
        let t = s
            .column(2)
            .as_primitive::<arrow_array::types::Time32MillisecondType>();
        assert_eq!(t.values().to_vec(), [0, 86_399_000, 1_000]);
        let d = s.column(3).as_primitive::<arrow_array::types::Date32Type>();
        assert_eq!(d.iter().collect::<Vec<_>>(), [Some(-1), Some(19_700), None]);
        assert!(Arc::ptr_eq(s.column(0), b.column(0)));
        // A dictionary of them: its values stored so, its keys kept.
        let values = Arc::new(TimestampSecondArray::from(vec![7, -2])) as ArrayRef;
        let dict = arrow_array::DictionaryArray::<arrow_array::types::Int8Type>::try_new(
            vec![Some(1), None, Some(0)].into(),
            values,
        )
        .unwrap();
        let d = batch(vec![("when", Arc::new(dict) as ArrayRef)]);
        let schema = stored_schema(&d.schema()).unwrap();
        let s = to_stored(&d, &schema, "in.arrow").unwrap();
        let dict = s.column(0).as_any_dictionary();
        let ms = dict
            .values()
            .as_primitive::<arrow_array::types::TimestampMillisecondType>();
        assert_eq!(ms.values().to_vec(), [7_000, -2_000]);
        assert_eq!(dict.keys().logical_null_count(), 1);
        // Nothing to change: no schema.
        assert!(
            stored_schema(&Schema::new(vec![Field::new("x", DataType::Int64, true)])).is_none()
        );
    }

    #[test]
    fn values_the_stored_unit_cannot_hold_are_refused_by_column() {
        let part_day = batch(vec![(
            "when",
            Arc::new(Date64Array::from(vec![MILLIS_PER_DAY + 1])) as ArrayRef,
        )]);
        let schema = stored_schema(&part_day.schema()).unwrap();
        let e = to_stored(&part_day, &schema, "in.arrow")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"when\"") && e.contains("not a whole day"),
            "{e}"
        );
        let far = batch(vec![(
            "ts",
            Arc::new(TimestampSecondArray::from(vec![i64::MAX / 10])) as ArrayRef,
        )]);
        let schema = stored_schema(&far.schema()).unwrap();
        let e = to_stored(&far, &schema, "in.arrow")
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"ts\"") && e.contains("beyond"), "{e}");
        // A null's slot is not a value: whatever it holds passes.
        let null_slot = batch(vec![(
            "ts",
            Arc::new(TimestampSecondArray::new(
                vec![i64::MAX].into(),
                Some(vec![false].into()),
            )) as ArrayRef,
        )]);
        let schema = stored_schema(&null_slot.schema()).unwrap();
        assert!(
            to_stored(&null_slot, &schema, "in.arrow")
                .unwrap()
                .column(0)
                .is_null(0)
        );
    }
}
