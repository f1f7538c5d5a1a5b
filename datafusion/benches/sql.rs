//! DataFusion queries with lesshash's functions against the scan they add
//! to and the exact query they replace, in one run.
//!
//! ```sh
//! cargo bench -p lesshash-datafusion --bench sql
//! ```
//!
//! Data (written once under `target/lesshash-df-bench/`, Snappy Parquet
//! by DataFusion): `events(user_id BIGINT, v DOUBLE)`, 1e7 rows whose
//! user ids are drawn from 2e6 (half of them users, 1% null), and
//! `users(id BIGINT)`, 1e6 rows; a filter of the users at 1% saved as
//! `users.lhbf`. The session runs on every core
//! (`target_partitions` = the machine's parallelism).
//!
//! Ids: `sql/events-1e7/<query>`:
//! * `scan-not-null`: `SELECT count(*) FROM events WHERE user_id IS NOT NULL`;
//! * `bloom_contains`: `... WHERE bloom_contains(user_id, 'users.lhbf')`;
//! * `in-subquery`: `... WHERE user_id IN (SELECT id FROM users)` (exact);
//!
//! and `sql/users-1e6/<query>`:
//! * `scan-sum`: `SELECT sum(id) FROM users` (a scan that reads the
//!   column: a count of non-null ids comes from the Parquet statistics
//!   without reading it);
//! * `bloom_agg`: `SELECT bloom_agg(id, 1000000, 0.01) FROM users`.
//!
//! The targets: `bloom_contains` at most 1.3x its scan and at
//! least 3x faster than `in-subquery`; `bloom_agg` at most 1.5x its scan.

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};

const EVENTS: u64 = 10_000_000;
const USERS: u64 = 1_000_000;

fn data_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    target.join("lesshash-df-bench")
}

async fn run(ctx: &SessionContext, sql: &str) -> usize {
    let batches = ctx
        .sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    batches.iter().map(|b| b.num_rows()).sum()
}

/// Writes the datasets and the filter unless they are there.
async fn prepare(ctx: &SessionContext, dir: &Path) {
    let done = dir.join("ready");
    if done.exists() {
        return;
    }
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).expect("bench data directory");
    let d = dir.display();
    run(
        ctx,
        &format!(
            "COPY (SELECT CASE WHEN value % 100 = 0 THEN NULL \
                               ELSE (value * 2654435761) % {two_m} END AS user_id, \
                          CAST(value AS DOUBLE) AS v \
                   FROM generate_series(1, {EVENTS})) \
             TO '{d}/events/' STORED AS PARQUET",
            two_m = 2 * USERS
        ),
    )
    .await;
    run(
        ctx,
        &format!(
            "COPY (SELECT value * 2 AS id FROM generate_series(0, {last})) \
             TO '{d}/users/' STORED AS PARQUET",
            last = USERS - 1
        ),
    )
    .await;
    ctx.register_parquet(
        "users_prep",
        format!("{d}/users/"),
        ParquetReadOptions::default(),
    )
    .await
    .expect("users");
    let batches = ctx
        .sql(&format!(
            "SELECT bloom_agg(id, {USERS}, 0.01) FROM users_prep"
        ))
        .await
        .expect("bloom_agg")
        .collect()
        .await
        .expect("bloom_agg");
    use datafusion::arrow::array::AsArray;
    let bytes = batches[0].column(0).as_binary::<i32>().value(0);
    std::fs::write(dir.join("users.lhbf"), bytes).expect("filter file");
    std::fs::write(done, b"").expect("marker");
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(threads));
    lesshash_datafusion::register(&ctx);
    let dir = data_dir();
    rt.block_on(async {
        prepare(&ctx, &dir).await;
        let d = dir.display();
        ctx.register_parquet(
            "events",
            format!("{d}/events/"),
            ParquetReadOptions::default(),
        )
        .await
        .expect("events");
        ctx.register_parquet(
            "users",
            format!("{d}/users/"),
            ParquetReadOptions::default(),
        )
        .await
        .expect("users");
    });
    let filter = dir.join("users.lhbf");
    let filter = filter.display();

    let mut g = c.benchmark_group("sql/events-1e7");
    for (name, sql) in [
        (
            "scan-not-null",
            "SELECT count(*) FROM events WHERE user_id IS NOT NULL".to_string(),
        ),
        (
            "bloom_contains",
            format!("SELECT count(*) FROM events WHERE bloom_contains(user_id, '{filter}')"),
        ),
        (
            "in-subquery",
            "SELECT count(*) FROM events WHERE user_id IN (SELECT id FROM users)".to_string(),
        ),
    ] {
        g.bench_function(name, |b| b.iter(|| rt.block_on(run(&ctx, &sql))));
    }
    g.finish();

    let mut g = c.benchmark_group("sql/users-1e6");
    for (name, sql) in [
        ("scan-sum", "SELECT sum(id) FROM users".to_string()),
        (
            "bloom_agg",
            format!("SELECT bloom_agg(id, {USERS}, 0.01) FROM users"),
        ),
    ] {
        g.bench_function(name, |b| b.iter(|| rt.block_on(run(&ctx, &sql))));
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .without_plots();
    targets = bench
}
criterion_main!(benches);
