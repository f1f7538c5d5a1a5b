//! Filter layouts: how the k probes of a key are placed in the bit array.
//!
//! Each layout has its own module with its own sizing rule, false-positive
//! formula and cardinality estimate; the builder and the filter dispatch on
//! [`Layout`]. A layout never borrows another layout's formula: sizing a
//! partitioned (or blocked) filter with the classic formula is how peers
//! shipped filters that miss their target rate.

#![forbid(unsafe_code)]

pub(crate) mod classic;
pub(crate) mod partitioned;

use crate::Error;

/// Where the k probes of a key go.
///
/// The explicit discriminants are the layout's id in the binary format and
/// never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
#[repr(u8)]
pub enum Layout {
    /// One array of m bits; each probe anywhere in it. The most accurate
    /// layout per bit; each probe may touch another cache line.
    #[default]
    Classic = 1,
    /// k disjoint sub-arrays of `m / k` bits; probe i goes to sub-array i
    /// (the paper's partition scheme, Sec. 5.1; Yu et al.'s "Count-Min Bloom
    /// filter"). Slightly less accurate than classic; the probes of a key are
    /// always distinct.
    Partitioned = 2,
}

impl Layout {
    /// A short stable name (used in messages and by the CLI).
    pub fn name(self) -> &'static str {
        match self {
            Layout::Classic => "classic",
            Layout::Partitioned => "partitioned",
        }
    }

    /// Parses a [`name`](Self::name).
    pub fn from_name(name: &str) -> Option<Layout> {
        Some(match name {
            "classic" => Layout::Classic,
            "partitioned" => Layout::Partitioned,
            _ => return None,
        })
    }

    /// Every layout.
    pub const ALL: [Layout; 2] = [Layout::Classic, Layout::Partitioned];

    /// The `(bits, hashes)` this layout needs to hold `n` keys at rate `p`
    /// (p already validated), with k fixed when given.
    pub(crate) fn size_for(self, n: u64, p: f64, k: Option<u32>) -> Result<(u64, u32), Error> {
        match self {
            Layout::Classic => classic::size_for(n, p, k),
            Layout::Partitioned => partitioned::size_for(n, p, k),
        }
    }

    /// The optimal k for m bits and n keys in this layout.
    pub(crate) fn optimal_hashes(self, m: u64, n: u64) -> u32 {
        crate::params::optimal_hashes(m, n)
    }

    /// The expected false-positive rate of m bits, k probes, n keys.
    pub fn fpr(self, m: u64, n: u64, k: u32) -> f64 {
        match self {
            Layout::Classic => crate::params::classic_fpr_exact(m, n, k),
            Layout::Partitioned => crate::params::partitioned_fpr(m, n, k),
        }
    }
}

/// Tries k over a window around the optimum for `p` and keeps the smallest m
/// (the smaller k on a tie); `bits_for(k)` returns the smallest m for that k.
pub(crate) fn best_over_k(
    p: f64,
    fixed_k: Option<u32>,
    bits_for: impl Fn(u32) -> Option<u64>,
) -> Result<(u64, u32), Error> {
    let candidates = match fixed_k {
        Some(k) => k..=k,
        None => {
            // Asymptotically k = log2(1/p); tiny n favours a smaller k.
            let k0 = (1.0 / p).log2().round().max(1.0) as u32;
            (k0 / 2).max(1)..=(k0 + 3).min(crate::params::MAX_HASHES)
        }
    };
    let mut best: Option<(u64, u32)> = None;
    for k in candidates {
        if let Some(m) = bits_for(k) {
            if best.is_none_or(|(bm, _)| m < bm) {
                best = Some((m, k));
            }
        }
    }
    best.ok_or_else(|| {
        Error::invalid(
            "fpr",
            format!(
                "a rate of {p} needs more than the maximum of {} bits for this many items",
                crate::params::MAX_BITS
            ),
        )
    })
}
