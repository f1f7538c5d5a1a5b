//! The limits every constructor checks, and the validation of rates and
//! probabilities with the messages that name the parameter at fault. The
//! public paths are [`BloomFilter::MAX_HASHES`](crate::BloomFilter::MAX_HASHES)
//! and [`BloomFilter::MAX_BITS`](crate::BloomFilter::MAX_BITS).

#![forbid(unsafe_code)]

/// The largest k any layout accepts.
pub(crate) const MAX_HASHES: u32 = 64;

/// The largest filter, in bits, that the builder accepts: 2^46 bits (8 TiB).
/// Index arithmetic is exact up to 2^64; this bound keeps a mistyped size
/// from asking the allocator for the impossible.
pub const MAX_BITS: u64 = 1 << 46;

/// A rate as messages show it: plain decimals from 1e-4 up (`0.01`),
/// scientific notation below (`1e-300`, not 300 digits: Rust's `{}` never
/// uses an exponent).
pub fn format_rate(p: f64) -> String {
    if p == 0.0 || (1e-4..1e6).contains(&p.abs()) || !p.is_finite() {
        format!("{p}")
    } else {
        format!("{p:e}")
    }
}

/// Validates a target false-positive rate.
pub(crate) fn check_fpr(p: f64) -> Result<f64, crate::Error> {
    check_probability("fpr", p)
}

/// Accepts a probability strictly between 0 and 1 (NaN rejected), or an
/// [`Error::InvalidParameter`](crate::Error::InvalidParameter) naming
/// `name`: the filter's rate, the sketch's epsilon and delta, Parquet's
/// fpp.
pub(crate) fn check_probability(name: &'static str, p: f64) -> Result<f64, crate::Error> {
    if p > 0.0 && p < 1.0 {
        Ok(p)
    } else {
        Err(crate::Error::invalid(
            name,
            format!(
                "must be a number strictly between 0 and 1, got {}",
                format_rate(p)
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_print_plainly_and_tiny_ones_in_scientific_notation() {
        assert_eq!(format_rate(0.01), "0.01");
        assert_eq!(format_rate(0.0001), "0.0001");
        assert_eq!(format_rate(1e-300), "1e-300");
        assert_eq!(format_rate(0.0), "0");
        assert_eq!(format_rate(1.5), "1.5");
        assert_eq!(format_rate(f64::NAN), "NaN");
        assert_eq!(format_rate(-2e-9), "-2e-9");
        assert!(check_fpr(1e-300).is_ok());
        let e = check_fpr(0.0).unwrap_err().to_string();
        assert!(e.contains("`fpr`") && e.contains("got 0"), "{e}");
    }
}
