//! Empty: this package holds lesshash's benchmarks (`benches/`) and the
//! report generator (`examples/bench_report.rs`); see docs/benchmarks.md.

#![forbid(unsafe_code)]
