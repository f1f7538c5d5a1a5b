//! `bloom_contains` and `bloom_agg` in SQL over real Parquet files, checked
//! against exact answers: the library's own filters and answers for the
//! same keys (no false negatives, false positives at about the rate),
//! `bloom_agg`'s bytes against a single-process build over a table of
//! several files read by 4 partitions, nulls, empty tables, wrong types at
//! planning, corrupt filter files and kind mismatches.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BooleanArray, Date32Array, DictionaryArray,
    Float64Array, Int32Array, Int64Array, RecordBatch, StringArray, UInt64Array,
};
use datafusion::arrow::compute::filter_record_batch;
use datafusion::arrow::datatypes::{DataType, Int32Type, Int64Type, Schema};
use datafusion::common::ScalarValue;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::file::properties::WriterProperties;
use datafusion::physical_plan::displayable;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext, col, lit};
use lesshash::{BloomFilter, KeyKind};

/// Rows of the `t` table; the users are the rows with `r % 3 == 0`.
const ROWS: usize = 12_000;

/// A session with 4 target partitions and the functions registered.
fn session() -> SessionContext {
    let ctx = SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4));
    lesshash_datafusion::register(&ctx);
    ctx
}

/// Rows `rows` of the test table: a row id `r` and one key column per
/// type, each with its own nulls and (some) repeated values.
fn batch(rows: std::ops::Range<usize>) -> RecordBatch {
    let r: Vec<usize> = rows.collect();
    let opt = |every: usize, i: usize| !i.is_multiple_of(every);
    let i32s: Int32Array = r
        .iter()
        .map(|&i| opt(11, i).then_some((i / 2) as i32 - 1000))
        .collect();
    let i64s: Int64Array = r
        .iter()
        .map(|&i| opt(7, i).then_some(i as i64 * 1_000_003 - 5_000_000_000))
        .collect();
    let u64s: UInt64Array = r
        .iter()
        .map(|&i| opt(13, i).then_some(u64::MAX - i as u64))
        .collect();
    let strings: StringArray = r
        .iter()
        .map(|&i| opt(5, i).then(|| format!("user-{i}")))
        .collect();
    let groups: Vec<Option<String>> = r
        .iter()
        .map(|&i| opt(9, i).then(|| format!("group-{}", i % 500)))
        .collect();
    let dict: DictionaryArray<Int32Type> = groups.iter().map(Option::as_deref).collect();
    let binary: BinaryArray = r
        .iter()
        .map(|&i| opt(6, i).then(|| [b"k".as_slice(), &(i as u64).to_be_bytes()].concat()))
        .collect();
    let dates: Date32Array = r
        .iter()
        .map(|&i| opt(17, i).then_some(i as i32 + 10_000))
        .collect();
    let floats: Float64Array = r.iter().map(|&i| Some(i as f64)).collect();
    let ids: Int64Array = r.iter().map(|&i| Some(i as i64)).collect();
    RecordBatch::try_from_iter([
        ("r", Arc::new(ids) as ArrayRef),
        ("i32", Arc::new(i32s)),
        ("i64", Arc::new(i64s)),
        ("u64", Arc::new(u64s)),
        ("s", Arc::new(strings)),
        ("d", Arc::new(dict)),
        ("b", Arc::new(binary)),
        ("dt", Arc::new(dates)),
        ("f", Arc::new(floats)),
    ])
    .unwrap()
}

/// The key columns and, for each, the canonical Rust key of row `i` (the
/// encoding table: integers as i64/u64, text as str, binary as bytes, a
/// date as its midnight's microseconds).
const KEY_COLUMNS: [&str; 7] = ["i32", "i64", "u64", "s", "d", "b", "dt"];

/// Whether `filter` holds row `i`'s key of `column`, asked through the
/// scalar API with the canonical key; `None` for a null key.
fn scalar_answer(filter: &BloomFilter, column: &str, i: usize) -> Option<bool> {
    let b = batch(i..i + 1);
    let a = b.column_by_name(column).unwrap();
    if a.is_null(0) {
        return None;
    }
    Some(match column {
        "i32" => filter.contains(&i64::from(a.as_primitive::<Int32Type>().value(0))),
        "i64" => filter.contains(&a.as_primitive::<Int64Type>().value(0)),
        "u64" => filter.contains(&a.as_any().downcast_ref::<UInt64Array>().unwrap().value(0)),
        "s" => filter.contains(a.as_string::<i32>().value(0)),
        "d" => {
            let d = a.as_dictionary::<Int32Type>();
            let v = d.values().as_string::<i32>();
            filter.contains(v.value(d.keys().value(0) as usize))
        }
        "b" => filter.contains(a.as_binary::<i32>().value(0)),
        // A date's key: its midnight's microseconds.
        "dt" => filter.contains(
            &(i64::from(a.as_any().downcast_ref::<Date32Array>().unwrap().value(0))
                * 86_400_000_000),
        ),
        other => panic!("no column {other}"),
    })
}

/// Each row's key of `column` (`None` for null).
fn row_keys(column: &str) -> Vec<Option<ScalarValue>> {
    let b = batch(0..ROWS);
    let a = b.column_by_name(column).unwrap();
    (0..ROWS)
        .map(|i| {
            a.is_valid(i)
                .then(|| ScalarValue::try_from_array(a, i).unwrap())
        })
        .collect()
}

/// Writes rows `0..ROWS` as `files` Parquet files (row groups of 700
/// rows) under `dir`.
fn write_table(dir: &Path, files: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let per_file = ROWS.div_ceil(files);
    for f in 0..files {
        let rows = f * per_file..((f + 1) * per_file).min(ROWS);
        write_parquet(&dir.join(format!("part-{f}.parquet")), &[batch(rows)]);
    }
}

fn write_parquet(path: &Path, batches: &[RecordBatch]) {
    let schema = batches
        .first()
        .map_or_else(|| batch(0..0).schema(), |b| b.schema());
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(700))
        .build();
    let mut w = ArrowWriter::try_new(File::create(path).unwrap(), schema, Some(props)).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.close().unwrap();
}

/// The users' rows (`r % 3 == 0`) as the single process sees them.
fn user_batches() -> Vec<RecordBatch> {
    (0..ROWS)
        .step_by(1000)
        .map(|start| {
            let b = batch(start..(start + 1000).min(ROWS));
            let keep: BooleanArray = (start..start + b.num_rows())
                .map(|i| Some(i % 3 == 0))
                .collect();
            filter_record_batch(&b, &keep).unwrap()
        })
        .collect()
}

/// A single-process filter of the users' `column`: `with_fpr(n, fpr)` and
/// `insert_array`, batch by batch.
fn single_process(column: &str, n: u64, fpr: f64) -> BloomFilter {
    let mut f = BloomFilter::with_fpr(n, fpr).unwrap();
    for b in user_batches() {
        f.insert_array(b.column_by_name(column).unwrap().as_ref())
            .unwrap();
    }
    f
}

/// The number of distinct non-null keys of the users' `column`.
fn distinct_users(column: &str) -> u64 {
    let mut seen = HashSet::new();
    for b in user_batches() {
        let a = b.column_by_name(column).unwrap();
        for i in (0..a.len()).filter(|&i| a.is_valid(i)) {
            seen.insert(ScalarValue::try_from_array(a, i).unwrap());
        }
    }
    seen.len() as u64
}

/// Asserts two serialized filters are the same bytes, saying how they
/// differ (not printing them).
fn assert_same_filter(got: &[u8], want: &[u8], what: &str) {
    if got != want {
        let (g, w) = (BloomFilter::from_bytes(got), BloomFilter::from_bytes(want));
        let describe = |f: &Result<BloomFilter, lesshash::Error>| match f {
            Ok(f) => format!(
                "{} bytes, {} inserts, {} kind, {} bits set",
                f.size_in_bytes(),
                f.insert_calls(),
                f.key_kind(),
                f.count_ones()
            ),
            Err(e) => e.to_string(),
        };
        panic!("{what}: got {}, want {}", describe(&g), describe(&w));
    }
}

async fn rows(ctx: &SessionContext, sql: &str) -> Vec<RecordBatch> {
    ctx.sql(sql)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The one binary value a query returns.
async fn bytes_of(ctx: &SessionContext, sql: &str) -> Vec<u8> {
    let batches = rows(ctx, sql).await;
    let values: Vec<Vec<u8>> = batches
        .iter()
        .flat_map(|b| {
            let a = b.column(0).as_binary::<i32>();
            (0..a.len())
                .map(|i| a.value(i).to_vec())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(values.len(), 1, "{sql}");
    values.into_iter().next().unwrap()
}

/// The one integer a query returns.
async fn count(ctx: &SessionContext, sql: &str) -> i64 {
    let batches = rows(ctx, sql).await;
    let b = batches.iter().find(|b| b.num_rows() > 0).expect("a row");
    b.column(0).as_primitive::<Int64Type>().value(0)
}

/// The error of a query that must fail before it runs: at SQL planning or
/// at physical planning.
async fn planning_error(ctx: &SessionContext, sql: &str) -> String {
    match ctx.sql(sql).await {
        Err(e) => e.to_string(),
        Ok(df) => match df.create_physical_plan().await {
            Err(e) => e.to_string(),
            Ok(_) => panic!("{sql}: planned without error"),
        },
    }
}

/// The error of a query that plans and fails when run.
async fn execution_error(ctx: &SessionContext, sql: &str) -> String {
    let df = ctx.sql(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    match df.collect().await {
        Err(e) => e.to_string(),
        Ok(_) => panic!("{sql}: ran without error"),
    }
}

/// A directory with the table `t` (5 Parquet files) registered.
async fn fixture() -> (tempfile::TempDir, SessionContext) {
    let dir = tempfile::tempdir().unwrap();
    write_table(&dir.path().join("t"), 5);
    let ctx = session();
    ctx.register_parquet(
        "t",
        dir.path().join("t").to_str().unwrap(),
        ParquetReadOptions::default(),
    )
    .await
    .unwrap();
    (dir, ctx)
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[tokio::test]
async fn bloom_agg_is_the_single_process_filter_bit_for_bit() {
    let (_dir, ctx) = fixture().await;

    // The merge path runs: 4 partial aggregates over 4 file groups.
    let plan = ctx
        .sql("SELECT bloom_agg(i64, 4000, 0.01) FROM t WHERE r % 3 = 0")
        .await
        .unwrap()
        .create_physical_plan()
        .await
        .unwrap();
    let shown = displayable(plan.as_ref()).indent(true).to_string();
    assert!(shown.contains("mode=Partial"), "{shown}");
    assert!(
        shown.contains("RoundRobinBatch(4)") || shown.contains("file_groups={4 groups"),
        "{shown}"
    );

    for column in KEY_COLUMNS {
        // Sized by the caller.
        let sql = format!("SELECT bloom_agg({column}, 4000, 0.01) FROM t WHERE r % 3 = 0");
        let got = bytes_of(&ctx, &sql).await;
        let want = single_process(column, 4000, 0.01);
        assert_same_filter(&got, &want.to_bytes(), &sql);
        let back = BloomFilter::from_bytes(&got).unwrap();
        assert_eq!(back.insert_calls(), want.insert_calls(), "{sql}");
        assert_ne!(back.key_kind(), KeyKind::Unrecorded, "{sql}");

        // Sized from the distinct keys (the default), at the default 1%,
        // and with a NULL expected_items and another rate.
        let distinct = distinct_users(column);
        let sql = format!("SELECT bloom_agg({column}) FROM t WHERE r % 3 = 0");
        let got = bytes_of(&ctx, &sql).await;
        assert_same_filter(
            &got,
            &single_process(column, distinct, 0.01).to_bytes(),
            &sql,
        );
        let sql = format!("SELECT bloom_agg({column}, NULL, 0.001) FROM t WHERE r % 3 = 0");
        let got = bytes_of(&ctx, &sql).await;
        assert_same_filter(
            &got,
            &single_process(column, distinct, 0.001).to_bytes(),
            &sql,
        );
    }
    // Repeated keys: the counter counts inserts, the size distinct keys.
    let d = BloomFilter::from_bytes(
        &bytes_of(&ctx, "SELECT bloom_agg(d) FROM t WHERE r % 3 = 0").await,
    )
    .unwrap();
    assert!(d.insert_calls() > distinct_users("d"));

    // Per group, through the DataFrame API too.
    let got = rows(
        &ctx,
        "SELECT r % 2 AS g, bloom_agg(s, 3000, 0.02) AS f FROM t WHERE r % 3 = 0 GROUP BY r % 2 ORDER BY g",
    )
    .await;
    let mut groups = Vec::new();
    for b in &got {
        let f = b.column(1).as_binary::<i32>();
        groups.extend((0..b.num_rows()).map(|i| f.value(i).to_vec()));
    }
    for (g, bytes) in groups.iter().enumerate() {
        let mut want = BloomFilter::with_fpr(3000, 0.02).unwrap();
        for b in user_batches() {
            let keep: BooleanArray = b
                .column(0)
                .as_primitive::<Int64Type>()
                .iter()
                .map(|r| Some(r.unwrap() % 2 == g as i64))
                .collect();
            let part = filter_record_batch(&b, &keep).unwrap();
            want.insert_array(part.column_by_name("s").unwrap().as_ref())
                .unwrap();
        }
        assert_same_filter(bytes, &want.to_bytes(), &format!("group {g}"));
    }
    let df = ctx
        .table("t")
        .await
        .unwrap()
        .aggregate(
            vec![],
            vec![lesshash_datafusion::bloom_agg().call(vec![col("i64"), lit(100i64)])],
        )
        .unwrap();
    let b = df.collect().await.unwrap();
    let got = b[0].column(0).as_binary::<i32>().value(0).to_vec();
    let mut want = BloomFilter::with_fpr(100, 0.01).unwrap();
    want.insert_array(batch(0..ROWS).column_by_name("i64").unwrap().as_ref())
        .unwrap();
    assert_same_filter(&got, &want.to_bytes(), "the DataFrame API's bloom_agg");
    let back = BloomFilter::from_bytes(&got).unwrap();
    assert_eq!(back.key_kind(), KeyKind::Int64);
    assert_eq!(
        back.insert_calls(),
        (0..ROWS).filter(|i| i % 7 != 0).count() as u64
    );
}

#[tokio::test]
async fn bloom_contains_answers_as_the_library_with_no_false_negatives() {
    let (dir, ctx) = fixture().await;
    for column in KEY_COLUMNS {
        let filter = single_process(column, 4000, 0.01);
        let path = dir.path().join(format!("{column}.lhbf"));
        filter.write_file(&path).unwrap();

        // A row is a member if its key is some user's key (columns repeat
        // values across rows).
        let keys = row_keys(column);
        let user_keys: HashSet<&ScalarValue> = (0..ROWS)
            .step_by(3)
            .filter_map(|i| keys[i].as_ref())
            .collect();
        let sql = format!(
            "SELECT r, bloom_contains({column}, '{}') FROM t",
            path_str(&path)
        );
        let batches = rows(&ctx, &sql).await;
        let (mut members, mut outsiders, mut false_positives, mut seen) = (0, 0, 0, 0);
        for b in &batches {
            let r = b.column(0).as_primitive::<Int64Type>();
            let hit = b.column(1).as_boolean();
            for j in 0..b.num_rows() {
                let i = r.value(j) as usize;
                let got = hit.is_valid(j).then(|| hit.value(j));
                assert_eq!(got, scalar_answer(&filter, column, i), "{column} row {i}");
                seen += 1;
                match got {
                    None => {}
                    Some(found) if user_keys.contains(keys[i].as_ref().unwrap()) => {
                        assert!(found, "false negative: {column} row {i}");
                        members += 1;
                    }
                    Some(found) => {
                        outsiders += 1;
                        false_positives += usize::from(found);
                    }
                }
            }
        }
        assert_eq!(seen, ROWS);
        // (Every group of `d` is some user's.)
        assert!(
            members > 1000 && (outsiders > 1000 || column == "d"),
            "{column}"
        );
        // Columns with repeated values hold fewer distinct keys than the
        // filter is sized for; the rate is at most about the target.
        let rate = false_positives as f64 / outsiders.max(1) as f64;
        assert!(rate < 0.02, "{column}: false-positive rate {rate}");
    }
}

#[tokio::test]
async fn false_positives_are_at_about_the_rate() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session();
    // 20,000 members, 200,000 others (integers, in 4 files).
    let members: Int64Array = (0..20_000i64).map(|i| Some(i * 7919)).collect();
    let mut filter = BloomFilter::with_fpr(20_000, 0.01).unwrap();
    filter.insert_array(&members).unwrap();
    let path = dir.path().join("members.lhbf");
    filter.write_file(&path).unwrap();
    std::fs::create_dir(dir.path().join("q")).unwrap();
    for f in 0..4i64 {
        let keys: Int64Array = (f * 50_000..(f + 1) * 50_000)
            .map(|i| Some(-1 - i))
            .collect();
        let b = RecordBatch::try_from_iter([("k", Arc::new(keys) as ArrayRef)]).unwrap();
        write_parquet(&dir.path().join(format!("q/{f}.parquet")), &[b]);
    }
    ctx.register_parquet(
        "q",
        path_str(&dir.path().join("q")),
        ParquetReadOptions::default(),
    )
    .await
    .unwrap();
    let sql = format!(
        "SELECT count(*) FROM q WHERE bloom_contains(k, '{}')",
        path_str(&path)
    );
    let fp = count(&ctx, &sql).await;
    let rate = fp as f64 / 200_000.0;
    assert!((0.005..0.015).contains(&rate), "false-positive rate {rate}");
    // Exactly the library's count.
    let want = (0..200_000i64)
        .filter(|i| filter.contains(&(-1 - i)))
        .count() as i64;
    assert_eq!(fp, want);
}

#[tokio::test]
async fn filters_as_bytes_from_bloom_agg_a_literal_or_a_column() {
    let (dir, ctx) = fixture().await;
    let distinct = distinct_users("s");
    let filter = single_process("s", distinct, 0.01);
    let want = (0..ROWS)
        .filter(|&i| scalar_answer(&filter, "s", i) == Some(true))
        .count() as i64;

    // One query: the filter built by a scalar subquery.
    let sql = "SELECT count(*) FROM t WHERE bloom_contains(s, (SELECT bloom_agg(s) FROM t WHERE r % 3 = 0))";
    assert_eq!(count(&ctx, sql).await, want);

    // Saved by SQL's result, queried by path.
    let bytes = bytes_of(&ctx, "SELECT bloom_agg(s) FROM t WHERE r % 3 = 0").await;
    let path = dir.path().join("s.lhbf");
    std::fs::write(&path, &bytes).unwrap();
    let sql = format!(
        "SELECT count(*) FROM t WHERE bloom_contains(s, '{}')",
        path_str(&path)
    );
    assert_eq!(count(&ctx, &sql).await, want);

    // A binary literal.
    let mut small = BloomFilter::with_fpr(10, 0.01).unwrap();
    small
        .insert_array(&StringArray::from(vec!["user-3", "user-6"]))
        .unwrap();
    let hex: String = small
        .to_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let sql = format!("SELECT r FROM t WHERE bloom_contains(s, X'{hex}') ORDER BY r");
    let got: Vec<i64> = rows(&ctx, &sql)
        .await
        .iter()
        .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
        .collect();
    let want: Vec<i64> = (0..ROWS)
        .filter(|&i| scalar_answer(&small, "s", i) == Some(true))
        .map(|i| i as i64)
        .collect();
    assert!(want.starts_with(&[3, 6]), "{want:?}");
    assert_eq!(got, want);

    // A column of filters: each row is answered by its own filter, paths
    // and bytes alike.
    let mut odd = BloomFilter::with_fpr(100, 0.01).unwrap();
    odd.insert_array(&Int64Array::from(vec![1, 3, 5])).unwrap();
    let mut even = BloomFilter::with_fpr(100, 0.01).unwrap();
    even.insert_array(&Int64Array::from(vec![2, 4, 6])).unwrap();
    let odd_path = dir.path().join("odd.lhbf");
    odd.write_file(&odd_path).unwrap();
    let even_path = dir.path().join("even.lhbf");
    even.write_file(&even_path).unwrap();
    let keys = Int64Array::from(vec![
        Some(1),
        Some(2),
        Some(3),
        Some(4),
        None,
        Some(5),
        Some(6),
        Some(2),
    ]);
    let which = [true, true, false, false, false, true, true, false];
    let blobs: BinaryArray = which
        .iter()
        .enumerate()
        .map(|(i, &o)| (i != 3).then(|| if o { odd.to_bytes() } else { even.to_bytes() }))
        .collect();
    let paths: StringArray = which
        .iter()
        .map(|&o| Some(path_str(if o { &odd_path } else { &even_path }).to_owned()))
        .collect();
    let pairs = RecordBatch::try_from_iter([
        (
            "n",
            Arc::new(Int64Array::from_iter_values(0..8)) as ArrayRef,
        ),
        ("k", Arc::new(keys)),
        ("f", Arc::new(blobs)),
        ("p", Arc::new(paths)),
    ])
    .unwrap();
    ctx.register_batch("pairs", pairs).unwrap();
    let got = rows(
        &ctx,
        "SELECT bloom_contains(k, f), bloom_contains(k, p) FROM pairs ORDER BY n",
    )
    .await;
    let by_bytes: Vec<Option<bool>> = got
        .iter()
        .flat_map(|b| b.column(0).as_boolean().iter().collect::<Vec<_>>())
        .collect();
    let by_path: Vec<Option<bool>> = got
        .iter()
        .flat_map(|b| b.column(1).as_boolean().iter().collect::<Vec<_>>())
        .collect();
    let expect = |o: bool, k: i64| {
        if o {
            odd.contains(&k)
        } else {
            even.contains(&k)
        }
    };
    let keys = [
        Some(1),
        Some(2),
        Some(3),
        Some(4),
        None,
        Some(5),
        Some(6),
        Some(2),
    ];
    for i in 0..8 {
        let want = keys[i].map(|k| expect(which[i], k));
        assert_eq!(by_path[i], want, "row {i} by path");
        let want = if i == 3 { None } else { want };
        assert_eq!(by_bytes[i], want, "row {i} by bytes");
    }
    assert_eq!(by_path[0], Some(true));
}

#[tokio::test]
async fn nulls_in_and_out() {
    let (dir, ctx) = fixture().await;
    let path = dir.path().join("i64.lhbf");
    single_process("i64", 4000, 0.01).write_file(&path).unwrap();
    let p = path_str(&path);

    // A null key answers null: as many nulls out as in.
    let nulls = (0..ROWS).filter(|i| i % 7 == 0).count() as i64;
    let sql = format!("SELECT count(*) FROM t WHERE bloom_contains(i64, '{p}') IS NULL");
    assert_eq!(count(&ctx, &sql).await, nulls);
    let sql = format!("SELECT count(*) FROM t WHERE NOT bloom_contains(i64, '{p}')");
    let absent = count(&ctx, &sql).await;
    let sql = format!("SELECT count(*) FROM t WHERE bloom_contains(i64, '{p}')");
    let present = count(&ctx, &sql).await;
    assert_eq!(absent + present + nulls, ROWS as i64);

    // A null filter, or an untyped NULL key, answers null.
    for sql in [
        "SELECT count(*) FROM t WHERE bloom_contains(i64, CAST(NULL AS VARCHAR)) IS NULL"
            .to_owned(),
        "SELECT count(*) FROM t WHERE bloom_contains(i64, CAST(NULL AS BYTEA)) IS NULL".to_owned(),
        "SELECT count(*) FROM t WHERE bloom_contains(i64, NULL) IS NULL".to_owned(),
        format!("SELECT count(*) FROM t WHERE bloom_contains(NULL, '{p}') IS NULL"),
    ] {
        assert_eq!(count(&ctx, &sql).await, ROWS as i64, "{sql}");
    }

    // bloom_agg skips nulls: a column of nulls only makes an empty filter.
    let got = bytes_of(
        &ctx,
        "SELECT bloom_agg(i64, 100, 0.01) FROM t WHERE r % 7 = 0",
    )
    .await;
    let back = BloomFilter::from_bytes(&got).unwrap();
    assert_eq!(back.insert_calls(), 0);
    assert_eq!(back.count_ones(), 0);
    assert_eq!(back.key_kind(), KeyKind::Int64);
}

#[tokio::test]
async fn empty_tables() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = session();
    std::fs::create_dir(dir.path().join("e")).unwrap();
    write_parquet(&dir.path().join("e/empty.parquet"), &[]);
    ctx.register_parquet(
        "e",
        path_str(&dir.path().join("e")),
        ParquetReadOptions::default(),
    )
    .await
    .unwrap();

    // An empty filter's bytes, not NULL: sized as asked (or for 0 keys),
    // recording the column's kind of keys.
    for (sql, n, kind) in [
        (
            "SELECT bloom_agg(i64, 1000, 0.01) FROM e",
            1000,
            KeyKind::Int64,
        ),
        ("SELECT bloom_agg(s) FROM e", 0, KeyKind::Text),
        ("SELECT bloom_agg(b, 5) FROM e", 5, KeyKind::Bytes),
    ] {
        let got = bytes_of(&ctx, sql).await;
        let mut want = BloomFilter::with_fpr(n, 0.01).unwrap();
        want.set_key_kind(kind);
        assert_same_filter(&got, &want.to_bytes(), sql);
    }

    // Querying an empty table, and querying with an empty filter.
    let empty = BloomFilter::with_fpr(0, 0.01).unwrap();
    let path = dir.path().join("empty.lhbf");
    empty.write_file(&path).unwrap();
    let sql = format!(
        "SELECT count(*) FROM e WHERE bloom_contains(i64, '{}')",
        path_str(&path)
    );
    assert_eq!(count(&ctx, &sql).await, 0);
    write_table(&dir.path().join("t"), 2);
    ctx.register_parquet(
        "t",
        path_str(&dir.path().join("t")),
        ParquetReadOptions::default(),
    )
    .await
    .unwrap();
    let sql = format!(
        "SELECT count(*) FROM t WHERE bloom_contains(s, '{}')",
        path_str(&path)
    );
    assert_eq!(count(&ctx, &sql).await, 0);
    let sql = "SELECT count(*) FROM t WHERE bloom_contains(s, (SELECT bloom_agg(s) FROM e))";
    assert_eq!(count(&ctx, sql).await, 0);
}

#[tokio::test]
async fn wrong_types_fail_at_planning_naming_the_function_and_the_type() {
    let (dir, ctx) = fixture().await;
    let path = dir.path().join("x.lhbf");
    BloomFilter::with_fpr(10, 0.01)
        .unwrap()
        .write_file(&path)
        .unwrap();
    let p = path_str(&path);
    for (sql, words) in [
        (
            format!("SELECT bloom_contains(f, '{p}') FROM t"),
            &["bloom_contains", "Float64"][..],
        ),
        (
            format!("SELECT bloom_contains(r > 3, '{p}') FROM t"),
            &["bloom_contains", "Boolean"],
        ),
        (
            format!("SELECT bloom_contains(CAST(r AS DECIMAL(10, 2)), '{p}') FROM t"),
            &["bloom_contains", "Decimal128"],
        ),
        (
            "SELECT bloom_contains(i64, 42) FROM t".to_owned(),
            &["bloom_contains", "Int64", "filter"],
        ),
        (
            "SELECT bloom_contains(i64) FROM t".to_owned(),
            &["bloom_contains", "two arguments"],
        ),
        (
            "SELECT bloom_agg(f) FROM t".to_owned(),
            &["bloom_agg", "Float64"],
        ),
        (
            "SELECT bloom_agg(i64, 'many') FROM t".to_owned(),
            &["bloom_agg", "expected_items", "Utf8"],
        ),
        (
            "SELECT bloom_agg(i64, 10, 'low') FROM t".to_owned(),
            &["bloom_agg", "fpr", "Utf8"],
        ),
        (
            "SELECT bloom_agg(i64, 10, 0.1, 3) FROM t".to_owned(),
            &["bloom_agg", "1 to 3 arguments"],
        ),
    ] {
        let e = planning_error(&ctx, &sql).await;
        for w in words {
            assert!(e.contains(w), "{sql}: {e:?} lacks {w:?}");
        }
    }
}

#[tokio::test]
async fn bad_values_fail_with_clear_errors() {
    let (dir, ctx) = fixture().await;
    for (sql, words) in [
        (
            "SELECT bloom_agg(i64, 10, 1.5) FROM t",
            &["bloom_agg", "fpr"][..],
        ),
        (
            "SELECT bloom_agg(i64, -3) FROM t",
            &["bloom_agg", "expected_items"],
        ),
        (
            "SELECT bloom_agg(i64, r) FROM t",
            &["bloom_agg", "expected_items", "constant"],
        ),
    ] {
        let e = execution_error(&ctx, sql).await;
        for w in words {
            assert!(e.contains(w), "{sql}: {e:?} lacks {w:?}");
        }
    }

    // A filter of integers queried with text: both kinds named.
    let ints = dir.path().join("ints.lhbf");
    single_process("i64", 4000, 0.01).write_file(&ints).unwrap();
    let sql = format!(
        "SELECT count(*) FROM t WHERE bloom_contains(s, '{}')",
        path_str(&ints)
    );
    let e = execution_error(&ctx, &sql).await;
    for w in ["bloom_contains", "int64", "text", "CAST"] {
        assert!(e.contains(w), "{e:?} lacks {w:?}");
    }
    // Text and bytes are one family: a binary column queries a text filter.
    let text = dir.path().join("text.lhbf");
    single_process("s", 4000, 0.01).write_file(&text).unwrap();
    let sql = format!(
        "SELECT count(*) FROM t WHERE bloom_contains(b, '{}')",
        path_str(&text)
    );
    rows(&ctx, &sql).await;
}

#[tokio::test]
async fn corrupt_or_missing_filter_files_are_errors_not_panics() {
    let (dir, ctx) = fixture().await;
    let good = single_process("i64", 4000, 0.01).to_bytes();
    let write = |name: &str, bytes: &[u8]| -> PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    };
    let mut flipped = good.clone();
    flipped[100] ^= 0x10;
    let cases = [
        (write("flipped.lhbf", &flipped), "checksum"),
        (
            write("truncated.lhbf", &good[..good.len() / 2]),
            "truncated",
        ),
        (write("text.lhbf", b"alice\nbob\n"), "magic"),
        (dir.path().join("t/part-0.parquet"), "magic"),
        (dir.path().join("missing.lhbf"), "opening the file"),
    ];
    for (path, word) in cases {
        let sql = format!(
            "SELECT count(*) FROM t WHERE bloom_contains(i64, '{}')",
            path_str(&path)
        );
        let e = execution_error(&ctx, &sql).await;
        assert!(
            e.contains("bloom_contains") && e.contains(word),
            "{path:?}: {e:?}"
        );
        assert!(e.contains(path_str(&path)), "{e:?} does not name the file");
    }
    // Corrupt bytes.
    let hex: String = flipped.iter().map(|b| format!("{b:02x}")).collect();
    let sql = format!("SELECT count(*) FROM t WHERE bloom_contains(i64, X'{hex}')");
    let e = execution_error(&ctx, &sql).await;
    assert!(
        e.contains("bloom_contains") && e.contains("checksum"),
        "{e:?}"
    );
}

#[tokio::test]
async fn a_replaced_file_is_mapped_afresh() {
    let (dir, ctx) = fixture().await;
    let path = dir.path().join("users.lhbf");
    let mut first = BloomFilter::with_fpr(100, 0.001).unwrap();
    first.insert_array(&Int64Array::from(vec![0, 7])).unwrap();
    first.write_file(&path).unwrap();
    let sql = format!(
        "SELECT r FROM t WHERE bloom_contains(r, '{}') ORDER BY r",
        path_str(&path)
    );
    let ids = |batches: Vec<RecordBatch>| -> Vec<i64> {
        batches
            .iter()
            .flat_map(|b| b.column(0).as_primitive::<Int64Type>().values().to_vec())
            .collect()
    };
    let want_first: Vec<i64> = (0..ROWS as i64).filter(|r| first.contains(r)).collect();
    assert!(want_first.starts_with(&[0, 7]));
    assert_eq!(ids(rows(&ctx, &sql).await), want_first);
    // The same session (and function instance) after the file was
    // replaced (written to a temporary file and renamed over it).
    let mut second = BloomFilter::with_fpr(100, 0.001).unwrap();
    second.insert_array(&Int64Array::from(vec![3, 11])).unwrap();
    second.write_file(&path).unwrap();
    let want_second: Vec<i64> = (0..ROWS as i64).filter(|r| second.contains(r)).collect();
    assert!(want_second.starts_with(&[3, 11]));
    assert_eq!(ids(rows(&ctx, &sql).await), want_second);
}

#[tokio::test]
async fn dataframe_api_and_schema() {
    let (dir, ctx) = fixture().await;
    let path = dir.path().join("s.lhbf");
    single_process("s", 4000, 0.01).write_file(&path).unwrap();
    let df = ctx
        .table("t")
        .await
        .unwrap()
        .filter(lesshash_datafusion::bloom_contains().call(vec![col("s"), lit(path_str(&path))]))
        .unwrap();
    let batches = df.collect().await.unwrap();
    let n: usize = batches.iter().map(RecordBatch::num_rows).sum();
    let want = (0..ROWS).filter(|&i| i % 3 == 0 && i % 5 != 0).count();
    assert!(
        n >= want && n < want + want / 20,
        "{n} rows, {want} members"
    );

    let df = ctx
        .sql(&format!(
            "SELECT bloom_contains(s, '{}') AS hit, bloom_agg(s) AS f FROM t GROUP BY s",
            path_str(&path)
        ))
        .await
        .unwrap();
    let schema: &Schema = df.schema().as_arrow();
    assert_eq!(schema.field(0).data_type(), &DataType::Boolean);
    assert_eq!(schema.field(1).data_type(), &DataType::Binary);
}

/// Every key type lesshash::arrow takes (those Parquet does not give back
/// as they were written too: Utf8, LargeUtf8, Binary, Int8, Timestamp,
/// ...), from a memory table of 3 partitions: `bloom_agg` (both sizings)
/// against the single process, `bloom_contains` against `contains_array`.
#[tokio::test]
async fn every_key_type_from_a_memory_table() {
    use datafusion::arrow::array::FixedSizeBinaryArray;
    use datafusion::arrow::compute::cast;
    use datafusion::arrow::datatypes::TimeUnit;
    use datafusion::datasource::MemTable;

    let part = |range: std::ops::Range<i64>| -> RecordBatch {
        let small: Int64Array = range
            .clone()
            .map(|i| (i % 5 != 0).then_some(i % 100 - 50))
            .collect();
        let unsigned: Int64Array = range
            .clone()
            .map(|i| (i % 5 != 0).then_some(i % 200))
            .collect();
        let wide: Int64Array = range
            .clone()
            .map(|i| (i % 5 != 0).then_some(i * 1_000_000_007))
            .collect();
        let text: StringArray = range
            .clone()
            .map(|i| (i % 4 != 0).then(|| format!("k{}", i % 300)))
            .collect();
        let fixed = FixedSizeBinaryArray::try_from_sparse_iter_with_size(
            range
                .clone()
                .map(|i| (i % 3 != 0).then(|| (i % 250).to_le_bytes())),
            8,
        )
        .unwrap();
        let c = |a: &dyn Array, t: DataType| cast(a, &t).unwrap();
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("r", Arc::new(Int64Array::from_iter_values(range.clone()))),
            ("i8", c(&small, DataType::Int8)),
            ("i16", c(&small, DataType::Int16)),
            ("u8", c(&unsigned, DataType::UInt8)),
            ("u16", c(&unsigned, DataType::UInt16)),
            ("u32", c(&unsigned, DataType::UInt32)),
            ("date64", c(&wide, DataType::Date64)),
            (
                "time32",
                c(
                    &c(&unsigned, DataType::Int32),
                    DataType::Time32(TimeUnit::Second),
                ),
            ),
            ("time64", c(&wide, DataType::Time64(TimeUnit::Microsecond))),
            (
                "ts",
                c(
                    &wide,
                    DataType::Timestamp(TimeUnit::Nanosecond, Some("+02:00".into())),
                ),
            ),
            ("dur", c(&wide, DataType::Duration(TimeUnit::Millisecond))),
            ("utf8", Arc::new(text.clone())),
            ("large_utf8", c(&text, DataType::LargeUtf8)),
            ("binary", c(&text, DataType::Binary)),
            ("large_binary", c(&text, DataType::LargeBinary)),
            ("fixed", Arc::new(fixed)),
            (
                "dict16",
                c(
                    &text,
                    DataType::Dictionary(Box::new(DataType::Int16), Box::new(DataType::LargeUtf8)),
                ),
            ),
            (
                "dict_bin",
                c(
                    &c(&text, DataType::Binary),
                    DataType::Dictionary(Box::new(DataType::UInt16), Box::new(DataType::Binary)),
                ),
            ),
        ];
        RecordBatch::try_from_iter(columns).unwrap()
    };
    let parts = [part(0..1500), part(1500..2200), part(2200..4000)];
    let ctx = session();
    let table = MemTable::try_new(
        parts[0].schema(),
        parts.iter().map(|b| vec![b.clone()]).collect(),
    )
    .unwrap();
    ctx.register_table("m", Arc::new(table)).unwrap();

    for field in parts[0].schema().fields().iter().skip(1) {
        let column = field.name();
        // The type reached the function as it was.
        let df = ctx.sql(&format!("SELECT {column} FROM m")).await.unwrap();
        assert_eq!(
            df.schema().field(0).data_type(),
            field.data_type(),
            "{column}"
        );

        let mut distinct = HashSet::new();
        for b in &parts {
            let a = b.column_by_name(column).unwrap();
            for i in (0..a.len()).filter(|&i| a.is_valid(i)) {
                distinct.insert(ScalarValue::try_from_array(a, i).unwrap());
            }
        }
        let build = |n: u64| {
            let mut f = BloomFilter::with_fpr(n, 0.01).unwrap();
            for b in &parts {
                f.insert_array(b.column_by_name(column).unwrap().as_ref())
                    .unwrap();
            }
            f
        };
        let sql = format!("SELECT bloom_agg({column}) FROM m");
        let spooled = bytes_of(&ctx, &sql).await;
        assert_same_filter(&spooled, &build(distinct.len() as u64).to_bytes(), &sql);
        let sql = format!("SELECT bloom_agg({column}, 500) FROM m");
        let sized = bytes_of(&ctx, &sql).await;
        let want = build(500);
        assert_same_filter(&sized, &want.to_bytes(), &sql);

        // Half the keys (the first partition) make a filter; every row asks.
        let mut half = BloomFilter::with_fpr(500, 0.01).unwrap();
        half.insert_array(parts[0].column_by_name(column).unwrap().as_ref())
            .unwrap();
        let hex: String = half.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
        let sql = format!("SELECT r, bloom_contains({column}, X'{hex}') FROM m");
        let mut got = vec![None; 4000];
        for b in rows(&ctx, &sql).await {
            let r = b.column(0).as_primitive::<Int64Type>();
            let hit = b.column(1).as_boolean();
            for j in 0..b.num_rows() {
                got[r.value(j) as usize] = Some(hit.is_valid(j).then(|| hit.value(j)));
            }
        }
        let mut want = Vec::new();
        for b in &parts {
            want.extend(
                half.contains_array(b.column_by_name(column).unwrap().as_ref())
                    .unwrap()
                    .iter()
                    .map(Some),
            );
        }
        assert_eq!(got, want, "{column}");
        assert!(
            want[..1500].iter().all(|a| a.unwrap() != Some(false)),
            "{column}: a false negative"
        );
    }
}

/// A date or an instant is one key whatever unit a reader gives it, on a
/// file pyarrow wrote (tests/data/temporal-pyarrow.parquet, written by
/// `write_temporal_file` in python/tests/test_temporal_keys.py, which
/// checks it still matches): DataFusion follows pyarrow's recorded Arrow
/// types (`timestamp[s]` over Parquet's milliseconds, `date64` over
/// DATE), pyarrow, Polars and DuckDB do not. A filter built from any
/// column of a group answers every row of every column of that group.
#[tokio::test]
async fn a_temporal_value_is_one_key_in_every_unit_of_a_pyarrow_file() {
    use datafusion::arrow::datatypes::TimeUnit;
    let ctx = session();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/temporal-pyarrow.parquet"
    );
    ctx.register_parquet("w", path, Default::default())
        .await
        .unwrap();
    // The types this reader sees: several per group, or the test is
    // vacuous; DataFusion follows pyarrow's recorded `date64`.
    let schema = ctx.table("w").await.unwrap().schema().as_arrow().clone();
    let type_of = |c: &str| schema.field_with_name(c).unwrap().data_type().clone();
    assert_eq!(type_of("d64"), DataType::Date64);
    assert_eq!(type_of("d32"), DataType::Date32);
    assert_eq!(
        type_of("ts_ns"),
        DataType::Timestamp(TimeUnit::Nanosecond, None)
    );
    assert_eq!(
        type_of("ts_ms"),
        DataType::Timestamp(TimeUnit::Millisecond, None)
    );
    assert_eq!(type_of("t_ns"), DataType::Time64(TimeUnit::Nanosecond));
    assert_eq!(type_of("t_us"), DataType::Time64(TimeUnit::Microsecond));
    let rows = count(&ctx, "SELECT count(*) FROM w").await;
    assert_eq!(rows, 7);
    let groups: [&[&str]; 3] = [
        &["ts_s", "ts_ms", "ts_us", "ts_ns", "ts_tz"],
        &["t_s", "t_ms", "t_us", "t_ns"],
        &["d32", "d64"],
    ];
    for group in groups {
        for built in group {
            for c in group {
                let sql = format!(
                    "SELECT count(*) FROM w WHERE bloom_contains({c}, (SELECT bloom_agg({built}) FROM w))"
                );
                assert_eq!(
                    count(&ctx, &sql).await,
                    rows,
                    "built from {built}, asked {c}"
                );
            }
        }
    }
}
