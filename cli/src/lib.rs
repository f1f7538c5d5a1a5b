//! The library part of the `lesshash` command line: the paper's experiment
//! (Sec. 8 of Kirsch and Mitzenmacher, "Less Hashing, Same Performance:
//! Building a Better Bloom Filter", Random Structures & Algorithms, 2008),
//! which `lesshash experiment` runs and `tests/experiment.rs` checks
//! against the exact rates; and the reader of untrusted Parquet and Arrow
//! IPC input (`columnar`), here so that a fuzz target can drive it. The
//! binary is `src/bin/lesshash/`.

#![forbid(unsafe_code)]

// The command line's own layers, public for the binary and the fuzz
// targets only: no API promise.
#[doc(hidden)]
pub mod columnar;
pub mod experiment;
#[doc(hidden)]
pub mod input_format;
