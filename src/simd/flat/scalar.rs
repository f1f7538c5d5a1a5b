//! The scalar flat indices: the oracle of the vector backends.
//!
//! One key at a time by the progression's own single-key path
//! ([`Progression::for_each`](crate::scheme::Progression::for_each), itself
//! tested equal to [`crate::scheme::reference_index`]); the `wide` and
//! AVX2 kernels must give exactly its indices (`tests/kernels.rs`).

#![forbid(unsafe_code)]

/// Copies the first `dst.len()` lanes of a vector's array into `dst`: a
/// fixed-size copy (one vector store) for a whole vector, a loop for the
/// partial last one (a variable-length `copy_from_slice` is a `memmove`
/// call; docs/bench-notes/2026-11-26.md).
#[inline(always)]
pub(crate) fn store<T: Copy, const L: usize>(dst: &mut [T], lanes: &[T; L]) {
    if let Ok(whole) = <&mut [T; L]>::try_from(&mut *dst) {
        *whole = *lanes;
    } else {
        for (d, &v) in dst.iter_mut().zip(lanes) {
            *d = v;
        }
    }
}

/// The oracle of [`flat_indices`](super::flat_indices):
/// the scheme's incremental path ([`crate::scheme::for_each_index`], itself
/// tested equal to [`crate::scheme::reference_index`]) one key at a time.
pub(crate) fn flat_indices(spec: &super::FlatSpec, hashes: &[u128], out: &mut [u64]) {
    let n = hashes.len();
    for (j, &h) in hashes.iter().enumerate() {
        spec.progression.for_each(h, spec.k, |i, x| {
            out[i as usize * n + j] = u64::from(i) * spec.stride + x;
            true
        });
    }
}
