//! The key of a date, time, timestamp or duration: one integer per value,
//! whatever unit or type a reader chose for it.
//!
//! Engines read the same cell in different units and even types: a
//! Parquet `TIMESTAMP(MILLIS)` written from pyarrow's `timestamp[s]` is
//! milliseconds in Polars and arrow-rs, microseconds in DuckDB, seconds or
//! nanoseconds in pandas; a Parquet DATE written from `date64` is days in
//! pyarrow and DuckDB, a Date64 in arrow-rs and a millisecond `Datetime` in
//! Polars. A key that is the reader's count would make one cell several
//! keys. So every temporal value has one key, in one unit:
//!
//! | value | key (an `i64`, hashed as its 8 little-endian bytes) |
//! |---|---|
//! | a timestamp (any time zone: the instant) | microseconds since 1970-01-01T00:00:00 UTC |
//! | a date | the same, of its midnight: the instant a reader that makes dates timestamps gives it |
//! | a time of day | microseconds since midnight |
//! | a duration | microseconds |
//!
//! Microseconds because they are Python's, DuckDB's, Spark's and Polars'
//! default resolution and cover ±292,000 years. A finer value is floored
//! to its microsecond (values less than a microsecond apart share a key,
//! which can only add false positives); a coarser one is multiplied,
//! saturating at `i64::MIN` / `i64::MAX` beyond ±292,000 years (such
//! values share the extreme key, whatever their unit, so the rule stays a
//! function of the value). The key is the value's exact microseconds,
//! floored and clamped to `i64`, so the same value in any unit gives the
//! same key.

#![forbid(unsafe_code)]

/// The unit of a temporal count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// Days (a date; Arrow's `Date32`).
    Day,
    /// Seconds.
    Second,
    /// Milliseconds (Arrow's `Date64` too).
    Millisecond,
    /// Microseconds: the key's unit.
    Microsecond,
    /// Nanoseconds.
    Nanosecond,
}

/// Microseconds in a day.
pub const MICROS_PER_DAY: i64 = 86_400_000_000;

/// The key of a temporal value of `value` `unit`s: `value` in
/// microseconds, floored from nanoseconds, saturating from coarser units.
///
/// ```
/// use lesshash::temporal::{TimeUnit, micros};
/// assert_eq!(micros(1_700_000_000, TimeUnit::Second), 1_700_000_000_000_000);
/// assert_eq!(micros(1_700_000_000_000, TimeUnit::Millisecond), 1_700_000_000_000_000);
/// assert_eq!(micros(-1, TimeUnit::Nanosecond), -1); // floored, not truncated
/// assert_eq!(micros(19_700, TimeUnit::Day), micros(19_700 * 86_400, TimeUnit::Second));
/// assert_eq!(micros(i64::MAX, TimeUnit::Second), i64::MAX);
/// ```
#[inline]
#[must_use]
pub const fn micros(value: i64, unit: TimeUnit) -> i64 {
    match unit {
        TimeUnit::Day => value.saturating_mul(MICROS_PER_DAY),
        TimeUnit::Second => value.saturating_mul(1_000_000),
        TimeUnit::Millisecond => value.saturating_mul(1_000),
        TimeUnit::Microsecond => value,
        TimeUnit::Nanosecond => value.div_euclid(1_000),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule against exact arithmetic in `i128`: floor of the value in
    /// microseconds, clamped to `i64`.
    fn oracle(value: i64, unit: TimeUnit) -> i64 {
        let v = i128::from(value);
        let us = match unit {
            TimeUnit::Day => v * 86_400 * 1_000_000,
            TimeUnit::Second => v * 1_000_000,
            TimeUnit::Millisecond => v * 1_000,
            TimeUnit::Microsecond => v,
            TimeUnit::Nanosecond => v.div_euclid(1_000),
        };
        us.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }

    const UNITS: [TimeUnit; 5] = [
        TimeUnit::Day,
        TimeUnit::Second,
        TimeUnit::Millisecond,
        TimeUnit::Microsecond,
        TimeUnit::Nanosecond,
    ];

    #[test]
    fn micros_is_the_floor_clamped() {
        let mut edges = vec![
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
        ];
        for f in [1_000, 1_000_000, MICROS_PER_DAY] {
            edges.extend([
                i64::MAX / f,
                i64::MAX / f + 1,
                i64::MIN / f,
                i64::MIN / f - 1,
            ]);
        }
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
        // A date is its midnight.
        for d in [-1i64, 0, 19_700] {
            assert_eq!(
                micros(d, TimeUnit::Day),
                micros(d * 86_400_000, TimeUnit::Millisecond)
            );
        }
        // Beyond the microsecond range, coarser units agree too.
        let s = i64::MAX / 1_000;
        assert_eq!(
            micros(s, TimeUnit::Second),
            micros(s * 1_000, TimeUnit::Millisecond)
        );
        assert_eq!(micros(i64::MAX / 86_400, TimeUnit::Day), i64::MAX);
    }
}
