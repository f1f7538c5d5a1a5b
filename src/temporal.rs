//! The key of a date, time, timestamp or duration: one integer per value,
//! whatever unit a reader chose for it.
//!
//! Engines read the same cell in different units: a Parquet
//! `TIMESTAMP(MILLIS)` is milliseconds in pyarrow, nanoseconds in older
//! pandas, microseconds in DuckDB, seconds again where pyarrow's embedded
//! schema says `timestamp[s]`. A key that was the count of the reader's
//! unit made the same instant four keys. So the key is the value in one
//! unit per kind of value:
//!
//! | value | key (as an `i64`, hashed as its 8 little-endian bytes) |
//! |---|---|
//! | a date | days since 1970-01-01 |
//! | a timestamp (any time zone: the instant), a time of day, a duration | microseconds (since 1970-01-01T00:00:00 UTC, since midnight, in all) |
//!
//! Microseconds because they are Python's, DuckDB's, Spark's and Polars'
//! default resolution and cover ±292,000 years. A finer value is floored
//! to its microsecond (values less than a microsecond apart share a key,
//! which can only add false positives); a coarser one is multiplied,
//! saturating at `i64::MIN` / `i64::MAX` beyond ±292,000 years (such
//! values share the extreme key, whatever their unit, so the rule stays a
//! function of the value). Floors and saturation are both monotone, so the
//! same value in any unit gives the same key.

#![forbid(unsafe_code)]

/// The unit of a time, timestamp or duration count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// Seconds.
    Second,
    /// Milliseconds.
    Millisecond,
    /// Microseconds: the key's unit.
    Microsecond,
    /// Nanoseconds.
    Nanosecond,
}

/// Milliseconds in a day (a `Date64`'s unit per day).
pub const MILLIS_PER_DAY: i64 = 86_400_000;

/// The key of a timestamp, time of day or duration of `value` `unit`s:
/// `value` in microseconds, floored from nanoseconds, saturating from
/// seconds and milliseconds.
///
/// ```
/// use lesshash::temporal::{TimeUnit, micros};
/// assert_eq!(micros(1_700_000_000, TimeUnit::Second), 1_700_000_000_000_000);
/// assert_eq!(micros(1_700_000_000_000, TimeUnit::Millisecond), 1_700_000_000_000_000);
/// assert_eq!(micros(-1, TimeUnit::Nanosecond), -1); // floored, not truncated
/// assert_eq!(micros(i64::MAX, TimeUnit::Second), i64::MAX);
/// ```
#[inline]
#[must_use]
pub const fn micros(value: i64, unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Second => value.saturating_mul(1_000_000),
        TimeUnit::Millisecond => value.saturating_mul(1_000),
        TimeUnit::Microsecond => value,
        TimeUnit::Nanosecond => value.div_euclid(1_000),
    }
}

/// The key of a date given in milliseconds since 1970-01-01 (Arrow's
/// `Date64`): its day, floored (a `Date64` should be a whole day; one that
/// is not counts as the day it falls in).
///
/// ```
/// use lesshash::temporal::{MILLIS_PER_DAY, days_from_millis};
/// assert_eq!(days_from_millis(19_700 * MILLIS_PER_DAY), 19_700);
/// assert_eq!(days_from_millis(-1), -1);
/// ```
#[inline]
#[must_use]
pub const fn days_from_millis(millis: i64) -> i64 {
    millis.div_euclid(MILLIS_PER_DAY)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule against exact arithmetic in `i128`: floor of the value in
    /// microseconds, clamped to `i64`.
    fn oracle(value: i64, unit: TimeUnit) -> i64 {
        let v = i128::from(value);
        let us = match unit {
            TimeUnit::Second => v * 1_000_000,
            TimeUnit::Millisecond => v * 1_000,
            TimeUnit::Microsecond => v,
            TimeUnit::Nanosecond => v.div_euclid(1_000),
        };
        us.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }

    const UNITS: [TimeUnit; 4] = [
        TimeUnit::Second,
        TimeUnit::Millisecond,
        TimeUnit::Microsecond,
        TimeUnit::Nanosecond,
    ];

    #[test]
    fn micros_is_the_floor_clamped() {
        let edges = [
            0,
            1,
            -1,
            999,
            -999,
            1_000,
            -1_000,
            -1_001,
            i64::MAX,
            i64::MIN,
            i64::MAX / 1_000,
            i64::MAX / 1_000 + 1,
            i64::MIN / 1_000,
            i64::MIN / 1_000 - 1,
            i64::MAX / 1_000_000,
            i64::MAX / 1_000_000 + 1,
            i64::MIN / 1_000_000,
            i64::MIN / 1_000_000 - 1,
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let random = (0..10_000).map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x as i64) >> (x % 60)
        });
        for v in edges.into_iter().chain(random) {
            for unit in UNITS {
                assert_eq!(micros(v, unit), oracle(v, unit), "{v} {unit:?}");
            }
            assert_eq!(
                i128::from(days_from_millis(v)),
                i128::from(v).div_euclid(i128::from(MILLIS_PER_DAY))
            );
        }
    }

    #[test]
    fn one_instant_in_every_unit_is_one_key() {
        for s in [-86_401i64, -1, 0, 1, 1_700_000_000, 4_102_444_800] {
            let key = micros(s, TimeUnit::Second);
            assert_eq!(micros(s * 1_000, TimeUnit::Millisecond), key);
            assert_eq!(micros(s * 1_000_000, TimeUnit::Microsecond), key);
            assert_eq!(micros(s * 1_000_000_000, TimeUnit::Nanosecond), key);
            // A nanosecond later is the same microsecond; one earlier is not.
            assert_eq!(micros(s * 1_000_000_000 + 1, TimeUnit::Nanosecond), key);
            assert_eq!(micros(s * 1_000_000_000 - 1, TimeUnit::Nanosecond), key - 1);
        }
        // Beyond the microsecond range, seconds and milliseconds agree too.
        let s = i64::MAX / 1_000;
        assert_eq!(
            micros(s, TimeUnit::Second),
            micros(s * 1_000, TimeUnit::Millisecond)
        );
        assert_eq!(days_from_millis(-MILLIS_PER_DAY), -1);
        assert_eq!(days_from_millis(-MILLIS_PER_DAY - 1), -2);
    }
}
