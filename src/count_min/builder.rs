//! [`CountMinBuilder`]: a sketch's dimensions from its error bounds (the
//! classic rules and the paper's two-hash rules, Sec. 9) or given
//! directly, validated.

#![forbid(unsafe_code)]

use std::f64::consts::E;

use super::{CountMinScheme, CountMinSketch, MAX_COUNTERS, MAX_ROWS};
use crate::Error;
use crate::hash::DEFAULT_SEED;
use crate::util::bits::AlignedWords;
use crate::util::limits::check_probability;
use crate::util::primes::{is_prime, next_prime};

/// Builds a [`CountMinSketch`] from either
///
/// * `epsilon` and `delta`: the scheme's sizing rule (see
///   [`CountMinSketch`]); or
/// * `width` and `depth`: explicit tables (for the two-hash scheme `width`
///   must be prime and `depth <= width`; for example the smallest prime at or above `2e/epsilon`).
///
/// Invalid or contradictory parameters give [`Error::InvalidParameter`]
/// naming the parameter; nothing is clamped silently.
///
/// ```
/// use lesshash::{CountMinScheme, CountMinSketch};
///
/// let sketch = CountMinSketch::builder().width(8191).depth(4).seed(7).build()?;
/// assert_eq!(sketch.size_in_bytes(), 8191 * 4 * 8);
///
/// let err = CountMinSketch::builder().width(8192).depth(4).build().unwrap_err();
/// assert!(err.to_string().contains("`width`")); // not prime
/// # Ok::<(), lesshash::Error>(())
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct CountMinBuilder {
    epsilon: Option<f64>,
    delta: Option<f64>,
    width: Option<u64>,
    depth: Option<u32>,
    scheme: CountMinScheme,
    seed: u64,
    conservative: bool,
}

impl Default for CountMinBuilder {
    fn default() -> Self {
        Self {
            epsilon: None,
            delta: None,
            width: None,
            depth: None,
            scheme: CountMinScheme::default(),
            seed: DEFAULT_SEED,
            conservative: false,
        }
    }
}

/// The tables of a sketch: `copies` independent groups of `depth` tables of
/// `width` counters each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountMinDimensions {
    /// Counters per table.
    pub width: u64,
    /// Tables per copy.
    pub depth: u32,
    /// Independent copies (1 except for the two-hash copies construction).
    pub copies: u32,
}

impl CountMinBuilder {
    /// The additive error as a fraction of the stream's total, strictly
    /// between 0 and 1.
    pub fn epsilon(mut self, epsilon: f64) -> Self {
        self.epsilon = Some(epsilon);
        self
    }

    /// The probability that an estimate exceeds its error bound, strictly
    /// between 0 and 1.
    pub fn delta(mut self, delta: f64) -> Self {
        self.delta = Some(delta);
        self
    }

    /// Counters per table (explicit geometry).
    pub fn width(mut self, width: u64) -> Self {
        self.width = Some(width);
        self
    }

    /// Number of tables (explicit geometry), 1 to [`CountMinSketch::MAX_ROWS`].
    pub fn depth(mut self, depth: u32) -> Self {
        self.depth = Some(depth);
        self
    }

    /// The index scheme (default [`CountMinScheme::DoubleHashing`]).
    pub fn scheme(mut self, scheme: CountMinScheme) -> Self {
        self.scheme = scheme;
        self
    }

    /// The hash seed (default [`DEFAULT_SEED`]). Sketches to be merged must
    /// share it.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Conservative update (default off): raise counters only as far as the
    /// new estimate. See [`CountMinSketch`] for what it changes.
    pub fn conservative(mut self, on: bool) -> Self {
        self.conservative = on;
        self
    }

    /// Validates the parameters, sizes and allocates the sketch.
    pub fn build(self) -> Result<CountMinSketch, Error> {
        let dims = self.dimensions()?;
        let counters = dims.width * u64::from(dims.depth) * u64::from(dims.copies);
        // `counters <= MAX_COUNTERS = 2^40`, so the bit count cannot overflow.
        let storage = AlignedWords::zeroed(counters * 64, "width")?;
        Ok(CountMinSketch {
            scheme: self.scheme,
            seed: self.seed,
            width: dims.width,
            depth: dims.depth,
            copies: dims.copies,
            conservative: self.conservative,
            total: 0,
            len: counters as usize,
            counters: storage,
        })
    }

    /// The dimensions the parameters call for, without allocating.
    pub fn dimensions(&self) -> Result<CountMinDimensions, Error> {
        let explicit = self.width.is_some() || self.depth.is_some();
        let from_error = self.epsilon.is_some() || self.delta.is_some();
        let dims = match (explicit, from_error) {
            (true, true) => {
                return Err(Error::invalid(
                    "width",
                    "conflicts with `epsilon`/`delta`: give either (epsilon, delta) or (width, depth)",
                ));
            }
            (false, false) => {
                return Err(Error::invalid(
                    "epsilon",
                    "missing: give (epsilon, delta) or (width, depth)",
                ));
            }
            (true, false) => self.explicit_dimensions()?,
            (false, true) => {
                let epsilon = check_probability(
                    "epsilon",
                    self.epsilon
                        .ok_or_else(|| Error::invalid("epsilon", "required with `delta`"))?,
                )?;
                let delta = check_probability(
                    "delta",
                    self.delta
                        .ok_or_else(|| Error::invalid("delta", "required with `epsilon`"))?,
                )?;
                match self.scheme {
                    CountMinScheme::Independent => classic_dimensions(epsilon, delta)?,
                    CountMinScheme::DoubleHashing => two_hash_dimensions(epsilon, delta)?,
                }
            }
        };
        debug_assert!(check_dimensions(self.scheme, dims).is_ok(), "{dims:?}");
        Ok(dims)
    }

    fn explicit_dimensions(&self) -> Result<CountMinDimensions, Error> {
        let width = self
            .width
            .ok_or_else(|| Error::invalid("width", "required with `depth`"))?;
        let depth = self
            .depth
            .ok_or_else(|| Error::invalid("depth", "required with `width`"))?;
        let dims = CountMinDimensions {
            width,
            depth,
            copies: 1,
        };
        check_dimensions(self.scheme, dims)
            .map_err(|(name, reason)| Error::invalid(name, reason))?;
        Ok(dims)
    }
}

/// The rules every sketch's dimensions obey under `scheme`, or the field
/// at fault (`width`, `depth`, `copies`) and why. The builder's explicit
/// dimensions and a loaded file's header are both checked here, so the
/// rules exist once; the sizing from (epsilon, delta) produces only
/// dimensions that pass (asserted in debug builds).
///
/// The products are computed after each factor is bounded, with checked
/// arithmetic anyway: a loaded header may hold any value.
pub(crate) fn check_dimensions(
    scheme: CountMinScheme,
    dims: CountMinDimensions,
) -> Result<(), (&'static str, String)> {
    let CountMinDimensions {
        width,
        depth,
        copies,
    } = dims;
    if width == 0 || width > MAX_COUNTERS {
        return Err((
            "width",
            format!("must be between 1 and {MAX_COUNTERS}, got {width}"),
        ));
    }
    if depth == 0 || depth > MAX_ROWS {
        return Err((
            "depth",
            format!("must be between 1 and {MAX_ROWS}, got {depth}"),
        ));
    }
    if copies == 0 || copies > MAX_ROWS {
        return Err((
            "copies",
            format!("must be between 1 and {MAX_ROWS}, got {copies}"),
        ));
    }
    // The classic sketch's indexer reads `depth` tables and no copies.
    if scheme == CountMinScheme::Independent && copies != 1 {
        return Err((
            "copies",
            format!("the classic sketch has exactly one copy, got {copies}"),
        ));
    }
    let rows = u64::from(depth) * u64::from(copies);
    if rows > u64::from(MAX_ROWS) {
        return Err((
            "copies",
            format!("depth {depth} times copies {copies} exceeds the {MAX_ROWS} tables allowed"),
        ));
    }
    if width.checked_mul(rows).is_none_or(|n| n > MAX_COUNTERS) {
        let tables = if copies == 1 {
            format!("depth {depth}")
        } else {
            format!("depth {depth} times copies {copies}")
        };
        return Err((
            "width",
            format!("width {width} times {tables} exceeds the {MAX_COUNTERS} counters allowed"),
        ));
    }
    if scheme == CountMinScheme::DoubleHashing {
        if !is_prime(width) {
            let hint = match next_prime(width) {
                Some(p) => format!("; the next prime is {p}"),
                None => String::new(),
            };
            return Err((
                "width",
                format!("the two-hash scheme needs a prime width, got {width}{hint}"),
            ));
        }
        if u64::from(depth) > width {
            return Err((
                "depth",
                format!(
                    "the two-hash scheme needs depth <= width (distinct strides mod w), got {depth} > {width}"
                ),
            ));
        }
    }
    Ok(())
}

/// A width computed in floating point, as an integer, or an error naming
/// `epsilon` when it exceeds [`MAX_COUNTERS`].
fn width_for(ideal: f64) -> Result<u64, Error> {
    let w = ideal.ceil();
    if w.is_nan() || w > MAX_COUNTERS as f64 {
        return Err(Error::invalid(
            "epsilon",
            format!("needs a width of {w:e} counters, more than the {MAX_COUNTERS} allowed"),
        ));
    }
    Ok((w as u64).max(1))
}

/// Checks the total size of a sizing result.
fn check_total(dims: CountMinDimensions) -> Result<CountMinDimensions, Error> {
    let rows = u64::from(dims.depth) * u64::from(dims.copies);
    if rows > u64::from(MAX_ROWS) {
        return Err(Error::invalid(
            "delta",
            format!("needs {rows} tables, more than the {MAX_ROWS} allowed"),
        ));
    }
    if dims
        .width
        .checked_mul(rows)
        .is_none_or(|n| n > MAX_COUNTERS)
    {
        return Err(Error::invalid(
            "epsilon",
            format!(
                "needs {rows} tables of {} counters, more than the {MAX_COUNTERS} allowed",
                dims.width
            ),
        ));
    }
    Ok(dims)
}

/// The classic rule: `w = ceil(e/epsilon)`, `d = ceil(ln 1/delta)`.
fn classic_dimensions(epsilon: f64, delta: f64) -> Result<CountMinDimensions, Error> {
    let width = width_for(E / epsilon)?;
    let depth = (1.0 / delta).ln().ceil().max(1.0);
    if depth > f64::from(MAX_ROWS) {
        return Err(Error::invalid(
            "delta",
            format!("needs {depth} tables, more than the {MAX_ROWS} allowed"),
        ));
    }
    check_total(CountMinDimensions {
        width,
        depth: depth as u32,
        copies: 1,
    })
}

/// Theorem 9.1's bound for one two-hash sketch of `depth` tables of prime
/// `width`: `2/(epsilon*w^2) + (2/(epsilon*w))^d`, capped at 1.
pub fn two_hash_bound(epsilon: f64, width: u64, depth: u32) -> f64 {
    let ew = epsilon * width as f64;
    let r = 2.0 / ew;
    (2.0 / (ew * width as f64) + r.powf(f64::from(depth))).min(1.0)
}

/// The smallest `d <= min(width, MAX_ROWS)` with `two_hash_bound <= target`.
fn smallest_depth(epsilon: f64, width: u64, target: f64) -> Option<u32> {
    let max = width.min(u64::from(MAX_ROWS)) as u32;
    (1..=max).find(|&d| two_hash_bound(epsilon, width, d) <= target)
}

/// The paper's rules for the two-hash sketch (see the module docs).
fn two_hash_dimensions(epsilon: f64, delta: f64) -> Result<CountMinDimensions, Error> {
    let min_width = width_for(2.0 * E / epsilon)?;
    let width = next_prime(min_width)
        .filter(|&p| p <= MAX_COUNTERS)
        .ok_or_else(|| {
            Error::invalid(
                "epsilon",
                format!("no prime width between {min_width} and {MAX_COUNTERS}"),
            )
        })?;
    let single = smallest_depth(epsilon, width, delta).map(|depth| CountMinDimensions {
        width,
        depth,
        copies: 1,
    });
    let copies = smallest_depth(epsilon, width, epsilon).and_then(|depth| {
        let per_copy = two_hash_bound(epsilon, width, depth);
        // per_copy <= epsilon < 1, and per_copy^c decreases to 0.
        let mut copies = 1u32;
        let mut bound = per_copy;
        while bound > delta {
            if copies >= MAX_ROWS {
                return None;
            }
            copies += 1;
            bound *= per_copy;
        }
        Some(CountMinDimensions {
            width,
            depth,
            copies,
        })
    });
    let dims = match (single, copies) {
        (Some(s), Some(c)) => {
            if u64::from(c.depth) * u64::from(c.copies) < u64::from(s.depth) {
                c
            } else {
                s
            }
        }
        (Some(s), None) => s,
        (None, Some(c)) => c,
        (None, None) => {
            return Err(Error::invalid(
                "delta",
                format!(
                    "{delta} is not reachable with at most {MAX_ROWS} tables at epsilon = {epsilon}"
                ),
            ));
        }
    };
    check_total(dims)
}
