//! In-block kernels of the blocked layouts.
//!
//! (Filled in by the SIMD kernels; the scalar kernel is the oracle.)

pub mod scalar;
