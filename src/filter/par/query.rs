//! Parallel queries: keys split into tasks of [`TASK`] keys, each running
//! the sequential pipeline (prefetching included) over its own keys and
//! writing its own part of the output, with no synchronisation. Every
//! filter's `par_contains_batch` is its view's, below.

#![forbid(unsafe_code)]

use rayon::prelude::*;

use crate::Error;
use crate::filter::batch::{Plan, copy_answers};
use crate::filter::view::FilterView;
use crate::hash::Key;
use crate::util::parts::{TASK, sequential};

impl FilterView<'_> {
    /// [`contains_batch`](Self::contains_batch) on rayon's thread pool
    /// (tasks of 16,384 keys, `parts::TASK`, each running the sequential pipeline over
    /// its own keys and its own part of `out`); the sequential path
    /// below one task's worth of keys.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] naming `out`.
    pub fn par_contains_batch<K: Key + Sync>(
        &self,
        keys: &[K],
        out: &mut [bool],
    ) -> Result<(), Error> {
        Error::check_len("out", keys.len(), out.len())?;
        if sequential(keys.len()) {
            self.contains_keys_with(keys, |i, found| copy_answers(out, i, found));
            return Ok(());
        }
        keys.par_chunks(TASK)
            .zip(out.par_chunks_mut(TASK))
            .for_each(|(ks, os)| {
                self.contains_keys_with(ks, |i, found| copy_answers(os, i, found))
            });
        Ok(())
    }

    /// The parallel query of keys given by their hashes (`plan` is the
    /// geometry's; lengths checked by the caller).
    pub(crate) fn par_contains_hashes(&self, plan: &Plan, hashes: &[u128], out: &mut [bool]) {
        if sequential(hashes.len()) {
            return self.contains_hashes_with(plan, hashes, |i, found| copy_answers(out, i, found));
        }
        hashes
            .par_chunks(TASK)
            .zip(out.par_chunks_mut(TASK))
            .for_each(|(hs, os)| {
                self.contains_hashes_with(plan, hs, |i, found| copy_answers(os, i, found))
            });
    }
}
