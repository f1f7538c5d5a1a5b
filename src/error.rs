//! The crate's one error type.
//!
//! Every fallible operation in lesshash returns [`Error`]. Each variant's
//! message names the parameter or field at fault, so that a message printed by a
//! pipeline is enough to find the cause without a debugger.

#![forbid(unsafe_code)]

/// Errors returned by lesshash.
///
/// The enum is `#[non_exhaustive]`: later versions may add variants (for
/// example for new file-format fields) without a breaking change.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A construction parameter is out of range (NaN, zero, negative, too
    /// large, or inconsistent with another parameter).
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParameter {
        /// The parameter's name as it appears in the API (`fpr`, `bits`, ...).
        name: &'static str,
        /// Why the value was rejected, including the value itself.
        reason: String,
    },

    /// The requested filter is larger than this platform can address or
    /// than the allocator could provide.
    #[error("cannot allocate {bytes} bytes for `{name}`")]
    Allocation {
        /// The parameter that determined the size.
        name: &'static str,
        /// The number of bytes requested.
        bytes: u128,
    },

    /// Two slices passed to one batch call have different lengths.
    #[error("length mismatch: `{name}` has length {got}, expected {expected}")]
    LengthMismatch {
        /// The argument whose length is wrong (usually the output slice).
        name: &'static str,
        /// The length that was required.
        expected: usize,
        /// The length that was passed.
        got: usize,
    },

    /// A pre-hashed insert or query was made on a filter whose scheme needs
    /// the key's bytes (the `Independent` scheme hashes them k times).
    #[error(
        "pre-hashed keys need a two-hash scheme: the `{scheme}` scheme hashes the key's bytes k times"
    )]
    PrehashedUnsupported {
        /// The filter's scheme.
        scheme: &'static str,
    },

    /// Two filters (or sketches) that were to be combined differ in a
    /// parameter that must be equal.
    #[error("incompatible `{parameter}`: {left} vs {right}")]
    Incompatible {
        /// The first parameter found to differ (`layout`, `seed`, `bits`, ...).
        parameter: &'static str,
        /// The value on the left-hand side.
        left: String,
        /// The value on the right-hand side.
        right: String,
    },
}

impl Error {
    /// Shorthand for [`Error::InvalidParameter`].
    pub(crate) fn invalid(name: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidParameter {
            name,
            reason: reason.into(),
        }
    }
}
