//! The bottom layer, above only `error`: what every filter type and the
//! sketch build on. The bit storage and the
//! storage traits every probe uses (`bits`), the size limits (`limits`),
//! the blocked layouts' salts (`salts`), the prime ranges of two-hash
//! flat filters and the sketch's widths (`primes`), the prefetch option and
//! instruction (`prefetch`), and the parallel update driver without
//! atomics (`parts`, feature `rayon`).

// `deny`, not `forbid`: `prefetch` holds the prefetch instruction's one
// `unsafe` block; the other files forbid it.
#![deny(unsafe_code)]

pub(crate) mod bits;
pub(crate) mod limits;
#[cfg(feature = "rayon")]
pub(crate) mod parts;
pub(crate) mod prefetch;
pub(crate) mod primes;
pub(crate) mod salts;
