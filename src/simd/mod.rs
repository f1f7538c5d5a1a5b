//! The vector code, one tree: the CPU-feature tokens ([`cpu`]), the lane
//! traits the index arithmetic is written over ([`lanes`]), the flat
//! layouts' batch index kernel and the choice of backend ([`kernel`]:
//! [`Kernel`](kernel::Kernel), scalar, `wide`, AVX2), and the blocked
//! layouts' in-register probes ([`block`]: AVX2, AVX-512, `wide`).
//!
//! Each backend is a thin module beside its portable form; which one runs
//! is decided once per filter (its `Kernel`, proven available by a token)
//! and never changes an answer: every backend is tested bit for bit
//! against the scalar oracle of its computation (`scheme` for the flat
//! probes, `layout::blocked::addressing` for the blocked ones).
//! `cfg(target_arch = "x86_64")` gates the intrinsics backends; `wide`
//! compiles everywhere, to the target's vector instructions where it has
//! them. The XXH3 lanes of the batched hash are the hash engine's, in
//! `hash/`.

// Not `forbid`: it would extend to the backends with `unsafe` (each
// intrinsics module allows it, with a SAFETY comment per block).
#![deny(unsafe_code)]

pub(crate) mod block;
pub(crate) mod cpu;
pub(crate) mod kernel;
pub(crate) mod lanes;
