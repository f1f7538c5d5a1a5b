//! Builds a Bloom filter of the users in one Parquet dataset with
//! `bloom_agg`, saves it, and filters another dataset (events) with
//! `bloom_contains` in SQL, comparing with the exact answer.
//!
//! ```sh
//! cargo run -p lesshash-datafusion --example sql_filter
//! ```

use datafusion::arrow::array::{AsArray, RecordBatch};
use datafusion::arrow::datatypes::Int64Type;
use datafusion::error::Result;
use datafusion::prelude::{ParquetReadOptions, SessionContext};
use lesshash::BloomFilter;

#[tokio::main]
async fn main() -> std::result::Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::temp_dir().join(format!("lesshash-sql-filter-{}", std::process::id()));
    let (users, events) = (dir.join("users"), dir.join("events"));
    let filter_path = dir.join("users.lhbf");
    let (users, events, filter_path) = (s(&users), s(&events), s(&filter_path));

    let ctx = SessionContext::new();
    lesshash_datafusion::register(&ctx);

    // Two Parquet datasets, written by DataFusion: 50,000 users (the even
    // ids below 100,000), and a million events from 200,000 ids (one in a
    // hundred without a user).
    run(
        &ctx,
        &format!(
            "COPY (SELECT value * 2 AS user_id, concat('user-', value) AS name \
                   FROM generate_series(1, 50000)) \
             TO '{users}/' STORED AS PARQUET"
        ),
    )
    .await?;
    run(
        &ctx,
        &format!(
            "COPY (SELECT value AS event_id, \
                          CASE WHEN value % 100 = 0 THEN NULL ELSE (value * 7919) % 200000 END AS user_id \
                   FROM generate_series(1, 1000000)) \
             TO '{events}/' STORED AS PARQUET"
        ),
    )
    .await?;
    ctx.register_parquet("users", users, ParquetReadOptions::default())
        .await?;
    ctx.register_parquet("events", events, ParquetReadOptions::default())
        .await?;

    // The filter, built in SQL on every core (expected_items, fpr), and
    // saved with the library: any lesshash interface reads it.
    let batches = ctx
        .sql("SELECT bloom_agg(user_id, 50000, 0.01) FROM users")
        .await?
        .collect()
        .await?;
    let bytes = batches[0].column(0).as_binary::<i32>().value(0);
    let filter = BloomFilter::from_bytes(bytes)?;
    filter.write_file(filter_path)?;
    println!(
        "bloom_agg: {} users in a {} KiB filter (k = {}, {:.2}% expected false positives), saved to {filter_path}",
        filter.insert_calls(),
        bytes.len() / 1024,
        filter.num_hashes(),
        100.0 * filter.expected_fpr(),
    );

    // Filter the events with it, and compare with the exact semi-join.
    let total = count(&ctx, "SELECT count(*) FROM events").await?;
    let kept = count(
        &ctx,
        &format!("SELECT count(*) FROM events WHERE bloom_contains(user_id, '{filter_path}')"),
    )
    .await?;
    let exact = count(
        &ctx,
        "SELECT count(*) FROM events WHERE user_id IN (SELECT user_id FROM users)",
    )
    .await?;
    let unknown = count(
        &ctx,
        &format!(
            "SELECT count(*) FROM events WHERE bloom_contains(user_id, '{filter_path}') IS NULL"
        ),
    )
    .await?;
    println!("events: {total}, without a user id: {unknown}");
    println!(
        "kept by bloom_contains: {kept}; by the exact IN (SELECT ...): {exact}; \
         false positives: {} ({:.2}% of the {} events of other ids)",
        kept - exact,
        100.0 * (kept - exact) as f64 / (total - unknown - exact) as f64,
        total - unknown - exact,
    );
    assert!(kept >= exact, "a Bloom filter has no false negatives");

    std::fs::remove_dir_all(&dir).ok();
    Ok(())
}

fn s(p: &std::path::Path) -> &str {
    p.to_str().expect("a UTF-8 temporary directory")
}

async fn run(ctx: &SessionContext, sql: &str) -> Result<Vec<RecordBatch>> {
    ctx.sql(sql).await?.collect().await
}

async fn count(ctx: &SessionContext, sql: &str) -> Result<i64> {
    let batches = run(ctx, sql).await?;
    Ok(batches[0].column(0).as_primitive::<Int64Type>().value(0))
}
