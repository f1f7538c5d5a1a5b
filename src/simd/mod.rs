//! The vector code, one axis per folder: the CPU-feature tokens ([`cpu`]),
//! a filter's choice of vector code ([`kernel`]: [`Kernel`](kernel::Kernel),
//! and only that), the lane traits the index arithmetic is written over
//! ([`lanes`]), and the backends by computation: the flat layouts' batch
//! indices ([`flat`]: scalar, `wide`, AVX2) and the blocked layouts'
//! in-register line tests ([`block`]: AVX2, AVX-512, `wide`).
//!
//! Each backend is a thin module beside its portable form; which one runs
//! is decided once per filter (its `Kernel`, proven available by a token)
//! and never changes an answer: every backend is tested bit for bit
//! against the scalar oracle of its computation (`scheme` for the flat
//! indices, `layout::blocked::addressing` for the blocked line tests).
//! `cfg(target_arch = "x86_64")` gates the intrinsics backends; `wide`
//! compiles everywhere, to the target's vector instructions where it has
//! them. The XXH3 lanes of the batched hash are not here: they are the
//! hash's formulas run four keys at a time, in `hash/avx512.rs`, beside
//! the scalar formulas they are tested against.

// Not `forbid`: it would extend to the backends with `unsafe` (each
// intrinsics module allows it, with a SAFETY comment per block).
#![deny(unsafe_code)]

pub(crate) mod block;
pub(crate) mod cpu;
pub(crate) mod flat;
pub(crate) mod kernel;
pub(crate) mod lanes;
