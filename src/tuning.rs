//! [`Tuning`]: how a filter's probes run (kernel, prefetch), as opposed to
//! what they compute ([`Geometry`](crate::geometry::Geometry)).

#![forbid(unsafe_code)]

use crate::simd::kernel::Kernel;
use crate::util::prefetch::Prefetch;

/// How a filter's probes run, not what they compute: the index routine of
/// the batch paths (and the in-register block line test it brings) and the
/// batch prefetch mode. A filter's own option (builder, `set_kernel`,
/// `set_prefetch`), not process state, so that tests and threads cannot
/// race on it. Never changes an answer, so it is not part of a filter's
/// identity: it has no `PartialEq`, and [`Geometry`]'s leaves it out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tuning {
    pub(crate) kernel: Kernel,
    pub(crate) prefetch: Prefetch,
    /// Chunks ahead, 1 to [`Prefetch::MAX_DISTANCE`](crate::Prefetch::MAX_DISTANCE).
    pub(crate) prefetch_distance: u32,
}

impl Default for Tuning {
    /// [`Kernel::auto`], [`Prefetch::Auto`], [`Prefetch::DEFAULT_DISTANCE`](crate::Prefetch::DEFAULT_DISTANCE).
    fn default() -> Self {
        Self {
            kernel: Kernel::auto(),
            prefetch: Prefetch::Auto,
            prefetch_distance: Prefetch::DEFAULT_DISTANCE,
        }
    }
}
