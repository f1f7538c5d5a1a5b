//! The library part of the `lesshash` command line: the paper's experiment
//! (Sec. 8 of Kirsch and Mitzenmacher, "Less Hashing, Same Performance:
//! Building a Better Bloom Filter", Random Structures & Algorithms, 2008),
//! which `lesshash experiment` runs and `tests/experiment.rs` checks
//! against the exact rates. The binary is `src/bin/lesshash/`.

#![forbid(unsafe_code)]

pub mod experiment;
