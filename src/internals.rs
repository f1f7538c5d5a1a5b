//! Not part of the public API: hidden from the documentation, with no
//! semver promise. It gathers, under the module names of the crate's own
//! layout, the oracles, kernels, constants and format details that
//! lesshash's integration tests, benches, fuzz targets and command-line
//! tool reach for. A library user needs none of it; the public items cover
//! every operation.

#![forbid(unsafe_code)]

/// Hashing primitives: the raw XXH3-128, the folded-multiply family's
/// oracle, the split into (h1, h2), and the seeds and hashes of the
/// `Independent` baseline.
pub mod hash {
    pub use crate::filter::batch::hash_batch_with;
    pub use crate::hash::reference::folded_multiply;
    pub use crate::hash::{hash128, independent_hash, independent_seed, split};
}

/// The scalar oracle of every scheme's probe sequence.
pub mod scheme {
    pub use crate::scheme::{
        Progression, for_each_index, reduce, reference_index, reference_indices,
        reference_indices_in, start_and_stride,
    };
}

/// The index routines' flat-layout interface and the run-time choice.
pub mod kernel {
    pub use crate::simd::flat::{FlatSpec, flat_indices};
    pub use crate::simd::kernel::{best_available, env_kernel};
}

/// The batch pipeline's chunk size.
pub mod batch {
    pub use crate::filter::batch::CHUNK;
}

/// The blocked layouts' salts and Parquet's.
pub mod salts {
    pub use crate::util::salts::{PARQUET, SALTS};
}

/// Deterministic primality, for the two-hash schemes' prime ranges.
pub mod primes {
    pub use crate::util::primes::{is_prime, next_prime};
}

/// Parameter limits and the rate formatting of messages.
pub mod limits {
    pub use crate::util::limits::{MAX_BITS, format_rate};
}

/// Where an output file goes (links followed, streams written in place,
/// everything else through a temporary file renamed over the target): the
/// rules of `BloomFilter::write_file`, for the command line's `-o`.
pub mod output_file {
    pub use crate::format::output_file::{
        create_temp_beside, is_stream, parent_dir, resolve_links,
    };
}

/// The false-positive terms behind the public rates.
pub mod rates {
    pub use crate::rates::block_rates::{block_mixture, blocked_load_fpr, split_block_load_fpr};
    pub use crate::rates::coincidence::{Overlaps, pair_collision_rate, partial_overlap_rate};

    /// The classic layout's enumerated two-hash rate, where
    /// [`Layout::fpr`](crate::Layout::fpr) uses it (`None` where it uses
    /// the model): for tests that check the exact rate two-sided.
    pub fn classic_enumerated(scheme: crate::Scheme, m: u64, n: u64, k: u32) -> Option<f64> {
        crate::layout::flat::classic::two_hash_fpr(scheme, m, n, k)
    }
}

/// The Bloom filter format's ids and streaming limit.
pub mod format {
    pub use crate::format::frame::EAGER_LIMIT;
    pub use crate::format::header::{layout_from_id, scheme_from_id, scheme_id};
}

/// The Count-Min sketch's column oracle, error bound and format details.
pub mod count_min {
    pub use crate::count_min::format::{MAGIC, VERSION, scheme_from_id, scheme_id};
    pub use crate::count_min::{reference_columns, two_hash_bound, two_hash_start};
}

/// Parquet's Thrift header.
pub mod parquet {
    pub use crate::parquet::thrift::{ParquetHeader, parquet_header, parse_parquet_header};
}
