//! Which hash engine a kernel runs, and the public batch hash.
//!
//! The AVX2 kernel hashes keys of at most 16 bytes four per register
//! (`hash::avx2`); the scalar and portable kernels run the same closed
//! formulas one key at a time (`hash::short`): `wide`'s 64-bit multiplies
//! are per-lane scalar code on SSE2 and NEON, which have no 64-bit vector
//! multiply, so lanes would only add shuffles. Every engine returns
//! XXH3-128 exactly.

#![forbid(unsafe_code)]

use super::Kernel;
use crate::Error;
use crate::hash::{HashEngine, Key, Secrets};

impl Kernel {
    /// The hash engine this kernel runs (AVX2 only with the CPU's proof).
    #[inline]
    pub(crate) fn hash_engine(self) -> HashEngine {
        #[cfg(target_arch = "x86_64")]
        if self == Kernel::Avx2
            && let Some(token) = crate::cpu::Avx2::detect()
        {
            return HashEngine::Avx2(token);
        }
        HashEngine::Scalar
    }

    /// XXH3-128 of each of `keys` under `seed` into `out`: the same values
    /// as [`hash_key`](crate::hash_key) of each key (what the pre-hashed
    /// calls take), computed several keys at a time where the keys are at
    /// most 16 bytes long and share XXH3's length class (1-3, 4-8 or 9-16
    /// bytes: every batch of integers or fixed-width ids).
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] naming `out` unless it has the length of
    /// `keys`; [`Error::InvalidParameter`] naming `kernel` if this kernel
    /// is not available on this CPU.
    pub fn hash_batch<K: Key>(self, keys: &[K], seed: u64, out: &mut [u128]) -> Result<(), Error> {
        self.check_available()?;
        Error::check_len("out", keys.len(), out.len())?;
        self.hash_engine().hash_into(keys, &Secrets::new(seed), out);
        Ok(())
    }
}
