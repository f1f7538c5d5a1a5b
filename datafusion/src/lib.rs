//! # lesshash-datafusion: lesshash Bloom filters in DataFusion SQL
//!
//! Two functions for [DataFusion](https://datafusion.apache.org) (55),
//! added to a [`SessionContext`] by [`register`]:
//!
//! * `bloom_contains(keys, filter)` ([`BloomContains`]), a scalar
//!   function: whether each key is possibly in a lesshash filter. `filter`
//!   is a path to a filter file (a string; memory-mapped once, its checksum
//!   checked once, then cached while the file is unchanged) or a filter's
//!   bytes (binary, such as `bloom_agg`'s result; parsed once). `Boolean`;
//!   a `NULL` key answers `NULL`.
//! * `bloom_agg(keys [, expected_items [, fpr]])` ([`BloomAgg`]), an
//!   aggregate: the filter of the non-null keys as its bytes in lesshash's
//!   v1 format (`Binary`; docs/format.md), built per partition and
//!   combined by union, so that it runs on every core and returns exactly
//!   the bytes one process would build (`BloomFilter::with_fpr` and
//!   `insert_array`).
//!
//! ```sql
//! -- A filter saved to a file (by the library, the command line, Python):
//! SELECT * FROM events WHERE bloom_contains(user_id, 'users.lhbf');
//! -- A filter of the users (1% false positives), as bytes to save ...
//! SELECT bloom_agg(user_id, 1000000, 0.01) FROM 'users/*.parquet';
//! -- ... or to use in the same query (sized from the distinct keys):
//! SELECT count(*) FROM events
//! WHERE bloom_contains(user_id, (SELECT bloom_agg(user_id) FROM users));
//! ```
//!
//! Keys are hashed as `lesshash::arrow` hashes them (every integer type
//! and the temporal types as 64-bit integers, strings as UTF-8, binary as
//! is, dictionaries as their values): the same key answers the same here,
//! through the Rust API, in Python and on the command line (the encoding
//! table in the repository's docs/guide.md). Other key types (floats,
//! booleans, decimals, nested types) fail at planning, with a message
//! naming the function and the type.
//!
//! ```no_run
//! use datafusion::prelude::SessionContext;
//!
//! # async fn run() -> datafusion::error::Result<()> {
//! let ctx = SessionContext::new();
//! lesshash_datafusion::register(&ctx);
//! let df = ctx
//!     .sql("SELECT count(*) FROM 'events.parquet' WHERE bloom_contains(user_id, 'users.lhbf')")
//!     .await?;
//! df.show().await?;
//! # Ok(())
//! # }
//! ```
//!
//! The whole round trip (write Parquet, build a filter in SQL, save it,
//! filter another dataset with it) is `examples/sql_filter.rs`; the
//! functions' arguments, defaults, null semantics and limits are in the
//! repository's docs/datafusion.md.

mod agg;
mod contains;
mod keys;

use datafusion::execution::context::SessionContext;
use datafusion::logical_expr::{AggregateUDF, ScalarUDF};

pub use agg::{BloomAgg, DEFAULT_FPR};
pub use contains::BloomContains;

/// Adds `bloom_contains` and `bloom_agg` to `ctx`'s functions (replacing
/// any of those names).
pub fn register(ctx: &SessionContext) {
    ctx.register_udf(bloom_contains());
    ctx.register_udaf(bloom_agg());
}

/// The `bloom_contains` scalar function, with a fresh filter cache: to
/// register elsewhere (a `SessionState`, a `FunctionRegistry`) or to call
/// from the DataFrame API (`bloom_contains().call(vec![col("user_id"),
/// lit("users.lhbf")])`).
pub fn bloom_contains() -> ScalarUDF {
    ScalarUDF::new_from_impl(BloomContains::new())
}

/// The `bloom_agg` aggregate function: to register elsewhere or to call
/// from the DataFrame API (`bloom_agg().call(vec![col("user_id")])`).
pub fn bloom_agg() -> AggregateUDF {
    AggregateUDF::new_from_impl(BloomAgg::new())
}
