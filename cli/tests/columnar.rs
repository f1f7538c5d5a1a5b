//! The `lesshash` binary on Parquet, Arrow IPC and CSV input, run as a user
//! would: round trips (schema, row order, row groups, nulls), every key
//! type family against the line formats' `--keys`, magic detection, the
//! key-kind checks, and every error's message, status and absence of
//! partial output.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use arrow_array::types::Int32Type;
use arrow_array::{
    Array, ArrayRef, BinaryArray, DictionaryArray, Float64Array, Int32Array, Int64Array,
    LargeStringArray, RecordBatch, StringArray,
};
use arrow_schema::{DataType, Field, Schema};
use lesshash::{BloomFilter, KeyKind};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;

mod common;

use common::*;

/// Writes `batch` as Parquet, `rows` rows per row group, with a `pandas`
/// key-value metadata entry.
fn write_parquet(path: &Path, batch: &RecordBatch, rows: usize, compression: Compression) {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rows))
        .set_compression(compression)
        .set_key_value_metadata(Some(vec![parquet::file::metadata::KeyValue::new(
            "pandas".to_string(),
            "{\"index_columns\": []}".to_string(),
        )]))
        .build();
    let mut w =
        ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

/// A Parquet file read back: its Arrow schema, its rows as one batch, the
/// rows of each row group, the first column's codec.
struct Read {
    batch: RecordBatch,
    groups: Vec<i64>,
    compression: Option<Compression>,
    /// The `pandas` key-value metadata entry.
    pandas: Option<String>,
}

fn read_parquet(path: &Path) -> Read {
    let builder = ParquetRecordBatchReaderBuilder::try_new(File::open(path).unwrap()).unwrap();
    let meta = builder.metadata().clone();
    let schema = builder.schema().clone();
    let batches: Vec<RecordBatch> = builder.build().unwrap().map(Result::unwrap).collect();
    Read {
        batch: arrow_select::concat::concat_batches(&schema, &batches).unwrap(),
        groups: meta.row_groups().iter().map(|g| g.num_rows()).collect(),
        compression: meta.row_groups().first().map(|g| g.column(0).compression()),
        pandas: meta
            .file_metadata()
            .key_value_metadata()
            .and_then(|kv| kv.iter().find(|kv| kv.key == "pandas"))
            .and_then(|kv| kv.value.clone()),
    }
}

fn write_ipc_file(path: &Path, batches: &[RecordBatch]) {
    let mut w =
        arrow_ipc::writer::FileWriter::try_new(File::create(path).unwrap(), &batches[0].schema())
            .unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
}

fn write_ipc_stream(path: &Path, batches: &[RecordBatch]) {
    let mut w =
        arrow_ipc::writer::StreamWriter::try_new(File::create(path).unwrap(), &batches[0].schema())
            .unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.finish().unwrap();
}

fn read_ipc_file(path: &Path) -> Vec<RecordBatch> {
    arrow_ipc::reader::FileReader::try_new(File::open(path).unwrap(), None)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn load(path: &Path) -> BloomFilter {
    BloomFilter::from_bytes(&std::fs::read(path).unwrap()).unwrap()
}

/// The events table: `id` (Int64, 0..n), `user_id` (Int64, null every 7th
/// row; users `i % 2000`, so 0..1000 members and 1000..2000 not), `name`
/// (Utf8), `score` (Float64).
fn events(n: i64) -> RecordBatch {
    let id = Int64Array::from_iter_values(0..n);
    let user: Int64Array = (0..n).map(|i| (i % 7 != 3).then_some(i % 2000)).collect();
    let name: StringArray = (0..n).map(|i| Some(format!("name-{i}"))).collect();
    let score = Float64Array::from_iter_values((0..n).map(|i| i as f64 / 2.0));
    RecordBatch::try_from_iter([
        ("id", Arc::new(id) as ArrayRef),
        ("user_id", Arc::new(user) as ArrayRef),
        ("name", Arc::new(name) as ArrayRef),
        ("score", Arc::new(score) as ArrayRef),
    ])
    .unwrap()
}

/// `users.parquet` (the users table in row groups of `rows`) and `u.lhbf`,
/// the filter `build` makes of it at 1%; the filter's path.
fn users_filter(dir: &Dir, rows: usize) -> String {
    write_parquet(
        &dir.path("users.parquet"),
        &users(),
        rows,
        Compression::SNAPPY,
    );
    let f = dir.s("u.lhbf");
    assert_ok(&lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("users.parquet"),
        "-o",
        &f,
        "--fpr",
        "0.01",
    ]));
    f
}

/// The users table: `user_id` 0..1000 (Int64) and a null.
fn users() -> RecordBatch {
    let ids: Int64Array = (0..1000).map(Some).chain([None]).collect();
    RecordBatch::try_from_iter([("user_id", Arc::new(ids) as ArrayRef)]).unwrap()
}

/// The rows of `events` a filter keeps (`invert`: drops), by the library's
/// own answers: the key non-null and possibly present.
fn expected_rows(filter: &BloomFilter, events: &RecordBatch, invert: bool) -> Vec<i64> {
    let users = events
        .column(1)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    let ids = events
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    (0..events.num_rows())
        .filter(|&i| (users.is_valid(i) && filter.contains(&users.value(i))) != invert)
        .map(|i| ids.value(i))
        .collect()
}

fn ids(batch: &RecordBatch) -> Vec<i64> {
    batch
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .values()
        .to_vec()
}

/// Build from a Parquet column, filter another Parquet file: the output has
/// the input's schema, its rows whole and in order (exactly those the
/// library's answers keep; a null key never), a row group per input row
/// group (each smaller by the rows dropped), the input's codec; the same
/// bytes on one and two threads; `--invert` keeps the complement, nulls
/// included.
#[test]
fn parquet_round_trip_keeps_schema_order_row_groups_and_drops_nulls() {
    let dir = Dir::new();
    write_parquet(
        &dir.path("users.parquet"),
        &users(),
        300,
        Compression::SNAPPY,
    );
    let ev = events(5_500);
    let zstd = Compression::ZSTD(ZstdLevel::default());
    write_parquet(&dir.path("events.parquet"), &ev, 1000, zstd);
    let f = dir.s("users.lhbf");
    let o = lesshash(&[
        "build",
        "-i",
        &dir.s("users.parquet"),
        "--column",
        "user_id",
        "-o",
        &f,
        "--fpr",
        "0.01",
    ]);
    assert_ok(&o);
    assert!(
        stderr(&o).contains("built 1000 keys") && stderr(&o).contains("1 null keys skipped"),
        "{}",
        stderr(&o)
    );
    let filter = load(Path::new(&f));
    assert_eq!(filter.key_kind(), KeyKind::Int64);
    assert_eq!(filter.insert_calls(), 1000);
    // Sized from the footer: 1001 rows less the 1 null the statistics count.
    let o = lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("users.parquet"),
        "-o",
        &dir.s("items.lhbf"),
        "--fpr",
        "0.01",
        "--items",
        "1000",
    ]);
    assert_ok(&o);
    assert_eq!(
        std::fs::read(&f).unwrap(),
        std::fs::read(dir.path("items.lhbf")).unwrap(),
        "the footer's count sizes the filter as --items 1000 does"
    );

    let events_path = dir.s("events.parquet");
    for invert in [false, true] {
        let mut outputs = Vec::new();
        for threads in ["1", "2"] {
            let out = dir.s(&format!("known-{invert}-{threads}.parquet"));
            let mut args = vec![
                "filter",
                "-q",
                &f,
                "-i",
                &events_path,
                "--column",
                "user_id",
                "-o",
                &out,
                "--threads",
                threads,
            ];
            if invert {
                args.push("--invert");
            }
            let o = lesshash(&args);
            assert_ok(&o);
            assert!(o.stdout.is_empty());
            outputs.push(std::fs::read(&out).unwrap());
            let read = read_parquet(Path::new(&out));
            assert_eq!(
                read.batch.schema().fields(),
                ev.schema().fields(),
                "the input's schema"
            );
            let want = expected_rows(&filter, &ev, invert);
            assert_eq!(ids(&read.batch), want, "invert={invert} threads={threads}");
            if !invert {
                // Every member row is kept (no false negatives), no null key.
                assert!(read.batch.column(1).null_count() == 0);
                assert!(want.len() >= 5_500 * 6 / 7 / 2);
            }
            // Whole rows: every column of a kept row is the input's.
            for (row, &id) in want.iter().enumerate() {
                let names = read
                    .batch
                    .column(2)
                    .as_any()
                    .downcast_ref::<StringArray>()
                    .unwrap();
                assert_eq!(names.value(row), format!("name-{id}"));
            }
            // A row group per input row group, each with its kept rows.
            let per_group: Vec<i64> = (0..6)
                .map(|g| want.iter().filter(|&&id| id / 1000 == g).count() as i64)
                .collect();
            assert_eq!(read.groups, per_group);
            assert_eq!(read.compression, Some(zstd));
            assert_eq!(read.pandas.as_deref(), Some("{\"index_columns\": []}"));
        }
        assert!(outputs[0] == outputs[1], "the same file on 1 and 2 threads");
    }
}

/// Every key type family builds a filter recording its kind, which answers
/// the line formats' `--keys` as the encoding table says: integer columns
/// (Int32 and Int64 alike) as `--keys int`, Utf8, LargeUtf8, Binary and a
/// dictionary of Utf8 as text.
#[test]
fn every_key_type_family_answers_as_its_line_keys() {
    let dir = Dir::new();
    let n = 500;
    let columns: Vec<(&str, ArrayRef, KeyKind, bool)> = vec![
        (
            "int32",
            Arc::new(Int32Array::from_iter_values(0..n)),
            KeyKind::Int64,
            true,
        ),
        (
            "int64",
            Arc::new(Int64Array::from_iter_values((0..n).map(i64::from))),
            KeyKind::Int64,
            true,
        ),
        (
            "utf8",
            Arc::new(StringArray::from_iter_values((0..n).map(|i| i.to_string()))),
            KeyKind::Text,
            false,
        ),
        (
            "large_utf8",
            Arc::new(LargeStringArray::from_iter_values(
                (0..n).map(|i| i.to_string()),
            )),
            KeyKind::Text,
            false,
        ),
        (
            "binary",
            Arc::new(BinaryArray::from_iter_values(
                (0..n).map(|i| i.to_string().into_bytes()),
            )),
            KeyKind::Bytes,
            false,
        ),
        (
            "dictionary",
            Arc::new(
                (0..n)
                    .map(|i| i.to_string())
                    .collect::<Vec<_>>()
                    .iter()
                    .map(String::as_str)
                    .collect::<DictionaryArray<Int32Type>>(),
            ),
            KeyKind::Text,
            false,
        ),
    ];
    let fields: Vec<(&str, ArrayRef)> = columns.iter().map(|(n, a, ..)| (*n, a.clone())).collect();
    let batch = RecordBatch::try_from_iter(fields).unwrap();
    write_parquet(&dir.path("t.parquet"), &batch, 200, Compression::SNAPPY);
    write_ipc_file(&dir.path("t.arrow"), std::slice::from_ref(&batch));
    // Filtered by each column: every row is a member, so every row is kept,
    // whole, dictionary included; Parquet to an Arrow stream as well.
    let all = dir.s("all.lhbf");
    assert_ok(&lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("t.parquet"),
        "--column",
        "utf8",
        "-o",
        &all,
        "--fpr",
        "0.01",
    ]));
    for (input, out) in [
        ("t.parquet", "o.parquet"),
        ("t.arrow", "o.arrow"),
        ("t.parquet", "o.arrows"),
    ] {
        for column in ["utf8", "dictionary", "large_utf8"] {
            let o = lesshash(&[
                "filter",
                "-q",
                &all,
                "-i",
                &dir.s(input),
                "--column",
                column,
                "-o",
                &dir.s(out),
            ]);
            assert_ok(&o);
            let got = if out.ends_with(".parquet") {
                vec![read_parquet(&dir.path(out)).batch]
            } else if out.ends_with(".arrow") {
                read_ipc_file(&dir.path(out))
            } else {
                arrow_ipc::reader::StreamReader::try_new(File::open(dir.path(out)).unwrap(), None)
                    .unwrap()
                    .map(Result::unwrap)
                    .collect()
            };
            let got = arrow_select::concat::concat_batches(&batch.schema(), &got).unwrap();
            assert_eq!(got, batch, "{input} -> {out} by {column}");
        }
    }
    // Parquet row groups each have their own dictionary, which an Arrow IPC
    // file cannot hold: one clear error, naming what to write instead.
    let o = lesshash(&[
        "filter",
        &all,
        "-i",
        &dir.s("t.parquet"),
        "--column",
        "utf8",
        "-o",
        &dir.s("d.arrow"),
    ]);
    assert_error(&o, &["one dictionary per column", ".arrows"]);
    assert!(!dir.path("d.arrow").exists());
    for (name, _, kind, int) in &columns {
        for input in ["t.parquet", "t.arrow"] {
            let f = dir.s(&format!("{name}-{input}.lhbf"));
            let o = lesshash(&[
                "build",
                "-q",
                "-i",
                &dir.s(input),
                "--column",
                name,
                "-o",
                &f,
                "--fpr",
                "0.001",
            ]);
            assert_ok(&o);
            assert_eq!(load(Path::new(&f)).key_kind(), *kind, "{name} {input}");
            let keys = if *int { "int" } else { "text" };
            let o = lesshash(&["query", &f, "--keys", keys, "0", "7", "499"]);
            assert_eq!(o.status.code(), Some(0), "{name} {input}: {}", stderr(&o));
            // A key of the other family is refused, not answered "no".
            let other = if *int { "text" } else { "int" };
            let o = lesshash(&["query", &f, "--keys", other, "7"]);
            assert_error(&o, &["--any-keys", &format!("--keys {keys}")]);
        }
    }
}

/// Cross-check: a filter built from `--keys int` lines answers an Int64
/// Parquet column as those lines (`filter` keeps the same keys), and a
/// filter of text lines answers a Utf8 column as text lines; a filter built
/// from the column answers the lines the same.
#[test]
fn line_filters_and_column_filters_agree() {
    let dir = Dir::new();
    let members: String = (0..3000).map(|i| format!("{}\n", i * 3)).collect();
    std::fs::write(dir.path("members.txt"), &members).unwrap();
    let probes: Vec<i64> = (0..6000).collect();
    let probe_lines: String = probes.iter().map(|i| format!("{i}\n")).collect();
    std::fs::write(dir.path("probes.txt"), &probe_lines).unwrap();
    let ints = Int64Array::from(probes.clone());
    let texts = StringArray::from_iter_values(probes.iter().map(|i| i.to_string()));
    let batch = RecordBatch::try_from_iter([
        ("n", Arc::new(ints) as ArrayRef),
        ("s", Arc::new(texts) as ArrayRef),
    ])
    .unwrap();
    write_parquet(
        &dir.path("probes.parquet"),
        &batch,
        1000,
        Compression::SNAPPY,
    );
    let m = dir.s("members.txt");
    for (keys, column) in [("int", "n"), ("text", "s")] {
        let f = dir.s(&format!("{keys}.lhbf"));
        let o = lesshash(&[
            "build", "-q", "-i", &m, "-o", &f, "--fpr", "0.05", "--keys", keys,
        ]);
        assert_ok(&o);
        let lines = lesshash(&[
            "filter",
            "-q",
            &f,
            "-i",
            &dir.s("probes.txt"),
            "--keys",
            keys,
        ]);
        assert_ok(&lines);
        let out = dir.s(&format!("{keys}.parquet"));
        let o = lesshash(&[
            "filter",
            "-q",
            &f,
            "-i",
            &dir.s("probes.parquet"),
            "--column",
            column,
            "-o",
            &out,
        ]);
        assert_ok(&o);
        let kept: String = ids(&read_parquet(Path::new(&out)).batch)
            .iter()
            .map(|i| format!("{i}\n"))
            .collect();
        assert_eq!(
            kept,
            stdout(&lines),
            "--keys {keys} against column {column}"
        );
        // Every member (the 2000 multiples of 3 below 6000) is kept; most
        // non-members are dropped.
        let kept: Vec<i64> = kept.lines().map(|l| l.parse().unwrap()).collect();
        assert!((0..6000).step_by(3).all(|m| kept.binary_search(&m).is_ok()));
        assert!(kept.len() < 2000 + 4000 / 5, "{}", kept.len());
    }
    // The other way: built from the Int64 column, queried with int lines.
    write_parquet(
        &dir.path("m.parquet"),
        &RecordBatch::try_from_iter([(
            "n",
            Arc::new(Int64Array::from_iter_values((0..3000).map(|i| i * 3))) as ArrayRef,
        )])
        .unwrap(),
        1000,
        Compression::SNAPPY,
    );
    let from_column = dir.s("col.lhbf");
    assert_ok(&lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("m.parquet"),
        "-o",
        &from_column,
        "--fpr",
        "0.05",
        "--items",
        "3000",
    ]));
    let from_lines = dir.s("lines.lhbf");
    assert_ok(&lesshash(&[
        "build",
        "-q",
        "-i",
        &m,
        "-o",
        &from_lines,
        "--fpr",
        "0.05",
        "--items",
        "3000",
        "--keys",
        "int",
    ]));
    assert_eq!(
        std::fs::read(&from_column).unwrap(),
        std::fs::read(&from_lines).unwrap(),
        "an Int64 column and --keys int lines build the same file"
    );
}

/// Arrow IPC files and streams in, the same format out (or the format the
/// output's name gives); a Parquet input written as Arrow.
#[test]
fn arrow_ipc_files_and_streams() {
    let dir = Dir::new();
    let f = users_filter(&dir, 1000);
    let filter = load(Path::new(&f));
    let ev = events(3000);
    let parts = [ev.slice(0, 1000), ev.slice(1000, 2000)];
    write_ipc_file(&dir.path("events.arrow"), &parts);
    write_ipc_stream(&dir.path("events.arrows"), &parts);
    let want = expected_rows(&filter, &ev, false);
    // A file, a stream, and a stream with no telling name: the magic decides.
    std::fs::copy(dir.path("events.arrows"), dir.path("events.bin")).unwrap();
    for (input, out) in [
        ("events.arrow", "k1.arrow"),
        ("events.arrows", "k2.feather"),
        ("events.bin", "k3.arrow"),
        ("events.parquet-less", "k4.arrow"),
    ] {
        let input = if input == "events.parquet-less" {
            // From Parquet to Arrow by the output's name.
            write_parquet(&dir.path("events.parquet"), &ev, 1000, Compression::SNAPPY);
            "events.parquet"
        } else {
            input
        };
        let o = lesshash(&[
            "filter",
            "-q",
            &f,
            "-i",
            &dir.s(input),
            "--column",
            "user_id",
            "-o",
            &dir.s(out),
        ]);
        assert_ok(&o);
        let batches = read_ipc_file(&dir.path(out));
        let got: Vec<i64> = batches.iter().flat_map(ids).collect();
        assert_eq!(got, want, "{input} -> {out}");
        assert_eq!(batches[0].schema().fields(), ev.schema().fields());
    }
    // A stream in, to stdout: a stream out.
    let o = lesshash(&[
        "filter",
        "-q",
        &f,
        "-i",
        &dir.s("events.arrows"),
        "--column",
        "user_id",
    ]);
    assert_ok(&o);
    let got: Vec<i64> = arrow_ipc::reader::StreamReader::try_new(&o.stdout[..], None)
        .unwrap()
        .flat_map(|b| ids(&b.unwrap()))
        .collect();
    assert_eq!(got, want);
    // Arrow to Parquet by the output's name.
    let o = lesshash(&[
        "filter",
        "-q",
        &f,
        "-i",
        &dir.s("events.arrow"),
        "--column",
        "user_id",
        "-o",
        &dir.s("k.parquet"),
    ]);
    assert_ok(&o);
    assert_eq!(ids(&read_parquet(&dir.path("k.parquet")).batch), want);
    // Built from Arrow: counted by reading the column (no footer count).
    let g = dir.s("e.lhbf");
    let o = lesshash(&[
        "build",
        "-i",
        &dir.s("events.arrow"),
        "--column",
        "user_id",
        "-o",
        &g,
        "--fpr",
        "0.01",
    ]);
    assert_ok(&o);
    assert!(stderr(&o).contains("built 2571 keys"), "{}", stderr(&o));
}

/// A Parquet file on stdin (`-i -` or a pipe) is read as Parquet: its
/// first bytes say what it is. Lines on stdin stay lines.
#[test]
fn parquet_on_stdin_is_read_as_parquet() {
    let dir = Dir::new();
    write_parquet(
        &dir.path("users.parquet"),
        &users(),
        1000,
        Compression::SNAPPY,
    );
    let bytes = std::fs::read(dir.path("users.parquet")).unwrap();
    let f = dir.s("u.lhbf");
    let o = lesshash_stdin(&["build", "-q", "-o", &f, "--fpr", "0.01"], &bytes);
    assert_ok(&o);
    assert_eq!(load(Path::new(&f)).insert_calls(), 1000);
    let o = lesshash(&["query", &f, "--keys", "int", "5", "999"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Filtered from stdin to stdout: Parquet out.
    let ev = events(2000);
    write_parquet(&dir.path("ev.parquet"), &ev, 500, Compression::SNAPPY);
    let bytes = std::fs::read(dir.path("ev.parquet")).unwrap();
    let o = lesshash_stdin(&["filter", "-q", &f, "--column", "user_id"], &bytes);
    assert_ok(&o);
    std::fs::write(dir.path("out.parquet"), &o.stdout).unwrap();
    let read = read_parquet(&dir.path("out.parquet"));
    assert_eq!(
        ids(&read.batch),
        expected_rows(&load(Path::new(&f)), &ev, false)
    );
    assert_eq!(read.groups.len(), 4);
    let o = lesshash_stdin(&["build", "-q", "-o", &f, "--fpr", "0.01"], b"a\nb\n");
    assert_ok(&o);
    assert_eq!(load(Path::new(&f)).key_kind(), KeyKind::Text);
    // CSV on stdin, counted without --items (read twice through a
    // temporary file).
    let o = lesshash_stdin(
        &[
            "build", "--format", "csv", "--column", "k", "-o", &f, "--fpr", "0.01",
        ],
        b"k,v\n\"x,y\",1\nz,2\n",
    );
    assert_ok(&o);
    assert!(stderr(&o).contains("built 2 keys"), "{}", stderr(&o));
    let o = lesshash(&["query", &f, "x,y", "z"]);
    assert_eq!(o.status.code(), Some(0));
}

/// CSV: a header row (kept by `filter`, named by `--column`), quoted fields
/// with the delimiter, quotes and line ends in them, `\r\n` line ends,
/// `-d comma`/`;`, `--no-header` with `--field`; the records kept are the
/// input's bytes.
#[test]
fn csv_quoting_and_header() {
    let dir = Dir::new();
    let users =
        "id,name\r\n1,\"Smith, John\"\r\n2,\"O\"\"Brien\"\r\n3,plain\r\n4,\"two\nlines\"\r\n";
    std::fs::write(dir.path("users.csv"), users).unwrap();
    let f = dir.s("names.lhbf");
    let o = lesshash(&[
        "build",
        "-i",
        &dir.s("users.csv"),
        "--column",
        "name",
        "-o",
        &f,
        "--fpr",
        "0.0001",
    ]);
    assert_ok(&o);
    assert!(stderr(&o).contains("built 4 keys"), "{}", stderr(&o));
    assert_eq!(load(Path::new(&f)).key_kind(), KeyKind::Text);
    let o = lesshash(&[
        "query",
        &f,
        "Smith, John",
        "O\"Brien",
        "plain",
        "two\nlines",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = lesshash(&["query", &f, "\"Smith", "Smith"]);
    assert_eq!(stdout(&o), "\"Smith\tno\nSmith\tno\n");

    // Filter a CSV: the header, then the kept records byte for byte.
    let events =
        "when;who;what\n1;\"Smith, John\";a\n2;nobody;b\n3;plain;\"c;d\"\n4;\"two\nlines\";e";
    std::fs::write(dir.path("events.csv"), events).unwrap();
    for d in [";", "semicolon"] {
        let o = lesshash(&[
            "filter",
            "-q",
            &f,
            "-i",
            &dir.s("events.csv"),
            "-d",
            d,
            "--column",
            "who",
        ]);
        assert_ok(&o);
        assert_eq!(
            stdout(&o),
            "when;who;what\n1;\"Smith, John\";a\n3;plain;\"c;d\"\n4;\"two\nlines\";e\n"
        );
    }
    let o = lesshash(&[
        "filter",
        "-q",
        &f,
        "-i",
        &dir.s("events.csv"),
        "-d",
        ";",
        "--field",
        "2",
        "--invert",
        "-o",
        &dir.s("out.csv"),
    ]);
    assert_ok(&o);
    assert_eq!(
        std::fs::read_to_string(dir.path("out.csv")).unwrap(),
        "when;who;what\n2;nobody;b\n"
    );

    // `--format csv` on any name; `-d comma`; `--no-header` with --field.
    std::fs::write(dir.path("plain.txt"), "\"a,b\",1\nc,2\n").unwrap();
    let g = dir.s("g.lhbf");
    let o = lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("plain.txt"),
        "--format",
        "csv",
        "--no-header",
        "--field",
        "1",
        "-d",
        "comma",
        "-o",
        &g,
        "--fpr",
        "0.001",
    ]);
    assert_ok(&o);
    let o = lesshash(&["query", &g, "a,b", "c"]);
    assert_eq!(stdout(&o), "a,b\tyes\nc\tyes\n");
    // --keys int over a CSV field: the filter records int64.
    let o = lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("users.csv"),
        "--column",
        "id",
        "--keys",
        "int",
        "-o",
        &g,
        "--fpr",
        "0.001",
    ]);
    assert_ok(&o);
    assert_eq!(load(Path::new(&g)).key_kind(), KeyKind::Int64);
    let o = lesshash(&["query", &g, "--keys", "int", "1", "4"]);
    assert_eq!(o.status.code(), Some(0));

    // Errors: a missing column lists the header; several columns need one.
    let o = lesshash(&[
        "build",
        "-i",
        &dir.s("users.csv"),
        "--column",
        "email",
        "-o",
        &g,
        "--fpr",
        "0.01",
    ]);
    assert_error(&o, &["no column \"email\"", "id, name"]);
    let o = lesshash(&[
        "build",
        "-i",
        &dir.s("users.csv"),
        "-o",
        &g,
        "--fpr",
        "0.01",
    ]);
    assert_error(&o, &["2 columns", "--column"]);
}

/// A file whose content is binary is never cut into lines: a filter file,
/// gzip, NUL bytes are refused naming what they look like; a `.parquet`
/// name on text, or a truncated Parquet file, is one clear error; no output
/// file is left behind; `--format lines` cuts anything into lines.
#[test]
fn binary_truncated_and_misnamed_inputs_are_refused() {
    let dir = Dir::new();
    let f = users_filter(&dir, 300);
    std::fs::write(dir.path("data.gz"), b"\x1f\x8b\x08\x00\x00\x00\x00\x00").unwrap();
    std::fs::write(dir.path("nul.txt"), b"abc\ndef\0ghi\n").unwrap();
    std::fs::write(dir.path("text.parquet"), b"user_id\n1\n2\n").unwrap();
    let whole = std::fs::read(dir.path("users.parquet")).unwrap();
    std::fs::write(dir.path("cut.parquet"), &whole[..whole.len() / 2]).unwrap();
    std::fs::write(dir.path("cut.arrow"), b"ARROW1\0\0garbage").unwrap();
    let before = dir.names();
    for (input, needles) in [
        (
            "u.lhbf",
            &["looks like a lesshash filter file", "--format lines"][..],
        ),
        ("data.gz", &["gzip"]),
        ("nul.txt", &["NUL"]),
        (
            "text.parquet",
            &["is not a Parquet file", "looks like text"],
        ),
        ("cut.parquet", &["cut.parquet", "as Parquet"]),
        ("cut.arrow", &["cut.arrow", "as Arrow IPC file"]),
    ] {
        let o = lesshash(&[
            "build",
            "-i",
            &dir.s(input),
            "-o",
            &dir.s("out.lhbf"),
            "--fpr",
            "0.01",
        ]);
        assert_error(&o, needles);
        for threads in ["1", "2"] {
            let o = lesshash(&[
                "filter",
                &f,
                "-i",
                &dir.s(input),
                "-o",
                &dir.s("out.parquet"),
                "--threads",
                threads,
            ]);
            assert_error(&o, needles);
        }
        assert_eq!(dir.names(), before, "{input}: nothing left behind");
    }
    // --format lines: the user says it is lines.
    let o = lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("nul.txt"),
        "--format",
        "lines",
        "-o",
        &dir.s("n.lhbf"),
        "--fpr",
        "0.01",
    ]);
    assert_ok(&o);
    // --format parquet on text.
    let o = lesshash(&[
        "build",
        "-i",
        &dir.s("nul.txt"),
        "--format",
        "parquet",
        "-o",
        &dir.s("x.lhbf"),
        "--fpr",
        "0.01",
    ]);
    assert_error(&o, &["is not a Parquet file"]);
    // A failed filter leaves an existing output as it was.
    std::fs::write(dir.path("keep.parquet"), b"old").unwrap();
    let o = lesshash(&[
        "filter",
        &f,
        "-i",
        &dir.s("cut.parquet"),
        "-o",
        &dir.s("keep.parquet"),
    ]);
    assert_error(&o, &["as Parquet"]);
    assert_eq!(std::fs::read(dir.path("keep.parquet")).unwrap(), b"old");
}

/// A missing column lists the columns with their types; a column of a type
/// with no key encoding names the type; several columns need --column;
/// options for text formats are refused on Parquet.
#[test]
fn column_errors_name_the_columns_and_types() {
    let dir = Dir::new();
    write_parquet(
        &dir.path("events.parquet"),
        &events(100),
        1000,
        Compression::SNAPPY,
    );
    let e = dir.s("events.parquet");
    let out = dir.s("o.lhbf");
    for (extra, needles) in [
        (
            &["--column", "email"][..],
            &[
                "no column \"email\"",
                "id (Int64)",
                "user_id (Int64)",
                "name (Utf8)",
            ][..],
        ),
        (&["--column", "score"], &["score", "Float64"]),
        (&[], &["4 columns", "--column NAME"]),
        (&["--field", "9"], &["no --field 9"]),
        (&["--column", "name", "-d", ","], &["-d"]),
        (
            &["--column", "name", "--keys", "int"],
            &["--keys int", "text"],
        ),
    ] {
        let mut args = vec![
            "build",
            "-i",
            e.as_str(),
            "-o",
            out.as_str(),
            "--fpr",
            "0.01",
        ];
        args.extend_from_slice(extra);
        assert_error(&lesshash(&args), needles);
    }
    assert!(!dir.path("o.lhbf").exists());
    // --field N is the Nth column.
    let o = lesshash(&[
        "build", "-q", "-i", &e, "--field", "3", "-o", &out, "--fpr", "0.01",
    ]);
    assert_ok(&o);
    assert_eq!(load(Path::new(&out)).key_kind(), KeyKind::Text);
    // Rows are not written as text, nor text as Parquet.
    let f = dir.s("f.lhbf");
    assert_ok(&lesshash(&[
        "build", "-q", "-i", &e, "--column", "id", "-o", &f, "--fpr", "0.01",
    ]));
    let o = lesshash(&[
        "filter",
        &f,
        "-i",
        &e,
        "--column",
        "id",
        "-o",
        &dir.s("x.csv"),
    ]);
    assert_error(&o, &["not as .csv", ".parquet"]);
    std::fs::write(dir.path("ids.txt"), "1\n2\n").unwrap();
    let o = lesshash(&[
        "filter",
        &f,
        "-i",
        &dir.s("ids.txt"),
        "--keys",
        "int",
        "-o",
        &dir.s("x.parquet"),
    ]);
    assert_error(&o, &["read as lines", "x.parquet"]);
    assert!(!dir.path("x.csv").exists() && !dir.path("x.parquet").exists());
    // The `independent` scheme and the classic layout take columns too.
    let o = lesshash(&[
        "build",
        "-q",
        "-i",
        &e,
        "--column",
        "id",
        "-o",
        &f,
        "--fpr",
        "0.01",
        "--layout",
        "classic",
        "--scheme",
        "independent",
    ]);
    assert_ok(&o);
    let o = lesshash(&["query", &f, "--keys", "int", "0", "50", "99"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Binary output to a terminal is refused; not testable without one.
}

/// The key-kind checks: a filter of integers queried with text keys fails
/// naming both kinds, `--keys int` and `--any-keys` (query, filter of lines,
/// filter of a Utf8 column); `--any-keys` queries anyway.
#[test]
fn key_kind_mismatch_names_both_kinds_and_the_override() {
    let dir = Dir::new();
    std::fs::write(dir.path("ids.txt"), "42\n7\n").unwrap();
    let f = dir.s("ints.lhbf");
    assert_ok(&lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("ids.txt"),
        "--keys",
        "int",
        "-o",
        &f,
        "--fpr",
        "0.01",
    ]));
    assert_eq!(load(Path::new(&f)).key_kind(), KeyKind::Int64);
    let o = lesshash(&["query", &f, "42", "999999"]);
    assert_error(&o, &["int64", "text", "--keys int", "--any-keys"]);
    assert!(o.stdout.is_empty());
    let o = lesshash(&["query", &f, "--keys", "int", "42"]);
    assert_eq!(stdout(&o), "42\tyes\n");
    let o = lesshash(&["query", &f, "--any-keys", "42"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "42\tno\n");
    let o = lesshash(&["filter", &f, "-i", &dir.s("ids.txt")]);
    assert_error(&o, &["int64", "text", "--keys int", "--any-keys"]);
    let o = lesshash(&["filter", "-q", &f, "-i", &dir.s("ids.txt"), "--keys", "int"]);
    assert_eq!(stdout(&o), "42\n7\n");
    // A text filter refuses --keys int.
    let t = dir.s("text.lhbf");
    assert_ok(&lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("ids.txt"),
        "-o",
        &t,
        "--fpr",
        "0.01",
    ]));
    assert_error(
        &lesshash(&["query", &t, "--keys", "int", "42"]),
        &["--keys text"],
    );
    // A Utf8 column against the integer filter, and --any-keys.
    write_parquet(
        &dir.path("ev.parquet"),
        &events(50),
        1000,
        Compression::SNAPPY,
    );
    let o = lesshash(&[
        "filter",
        &f,
        "-i",
        &dir.s("ev.parquet"),
        "--column",
        "name",
        "-o",
        &dir.s("o.parquet"),
    ]);
    assert_error(&o, &["int64", "column name (Utf8)", "text", "--any-keys"]);
    assert!(!dir.path("o.parquet").exists());
    let o = lesshash(&[
        "filter",
        "-q",
        &f,
        "-i",
        &dir.s("ev.parquet"),
        "--column",
        "name",
        "--any-keys",
        "-o",
        &dir.s("o.parquet"),
    ]);
    assert_ok(&o);
    assert_eq!(read_parquet(&dir.path("o.parquet")).batch.num_rows(), 0);
}

/// `info` shows the recorded kind.
#[test]
fn info_shows_the_key_kind() {
    let dir = Dir::new();
    std::fs::write(dir.path("k.txt"), "a\n").unwrap();
    let f = dir.s("k.lhbf");
    assert_ok(&lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("k.txt"),
        "-o",
        &f,
        "--fpr",
        "0.01",
    ]));
    let o = lesshash(&["info", &f]);
    assert!(
        stdout(&o).contains("keys             text"),
        "{}",
        stdout(&o)
    );
}

/// An empty Parquet file (a schema, no rows) builds an empty filter and
/// filters to an empty file with the schema.
/// `filter` of a Parquet file with a Spark Bloom filter file: the rows it
/// keeps are those whose key Spark's class may hold (`SparkBloomFilter`),
/// an int64 column asked as longs and a string column as bytes, nulls
/// dropped, the schema kept.
/// `build --output-format spark-v2` from Parquet columns: integers as
/// longs, strings as their bytes, nulls skipped (the summary counts them),
/// sized by the footer's count less the nulls; the library's filter of
/// Spark's sizing for the same keys, bit for bit, on one and two threads.
#[test]
fn parquet_built_into_a_spark_filter() {
    use lesshash::spark::{SparkBloomFilter, SparkVersion};
    let dir = Dir::new();
    let ev = events(5000);
    write_parquet(&dir.path("events.parquet"), &ev, 700, Compression::SNAPPY);
    let users = ev.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
    let names = ev.column(2).as_any().downcast_ref::<StringArray>().unwrap();
    let ids: Vec<i64> = users.iter().flatten().collect();
    let nulls = users.null_count();
    assert!(nulls > 0);
    for (column, keys) in [("user_id", ids.len()), ("name", names.len())] {
        let mut want = SparkBloomFilter::with_fpp(SparkVersion::V2, keys as u64, 0.01).unwrap();
        match column {
            "user_id" => ids.iter().for_each(|&k| want.insert_long(k)),
            _ => names.iter().flatten().for_each(|k| want.insert_str(k)),
        }
        for threads in ["1", "2"] {
            let o = lesshash(&[
                "build",
                "-i",
                &dir.s("events.parquet"),
                "--column",
                column,
                "--fpr",
                "0.01",
                "--output-format",
                "spark-v2",
                "-t",
                threads,
                "-o",
                &dir.s("f.bin"),
            ]);
            assert_ok(&o);
            if column == "user_id" {
                assert!(
                    stderr(&o).contains(&format!("{nulls} null keys skipped")),
                    "{}",
                    stderr(&o)
                );
            }
            assert_eq!(
                std::fs::read(dir.path("f.bin")).unwrap(),
                want.to_spark_bytes(),
                "{column} -t {threads}"
            );
        }
    }
}

#[test]
fn parquet_filtered_by_a_spark_filter() {
    use lesshash::spark::SparkBloomFilter;
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/spark");
    let dir = Dir::new();
    let keys: Vec<Option<i64>> = [Some(5_168_841_506_422_920_424), None]
        .into_iter()
        .chain((0..2000i64).map(|i| Some(i * 7_919_993 - 11_000_000_000)))
        .collect();
    let names: Vec<Option<String>> = keys
        .iter()
        .enumerate()
        .map(|(i, id)| match (i, id) {
            (0, _) => Some("c".to_string()),
            (_, None) => None,
            (_, Some(id)) => Some(format!("user-{id}")),
        })
        .collect();
    let batch = RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(keys.clone())) as ArrayRef),
        (
            "name",
            Arc::new(StringArray::from(names.clone())) as ArrayRef,
        ),
    ])
    .unwrap();
    let input = dir.path("rows.parquet");
    write_parquet(&input, &batch, 500, Compression::SNAPPY);
    for (file, column) in [
        ("v2_seed12345_long.bin", "id"),
        ("v2_seed12345_string.bin", "name"),
    ] {
        let path = data.join(file);
        let spark = SparkBloomFilter::from_spark_bytes(&std::fs::read(&path).unwrap()).unwrap();
        let expect: Vec<i64> = keys
            .iter()
            .zip(&names)
            .filter_map(|(id, name)| match column {
                "id" => id.filter(|&id| spark.contains_long(id)),
                _ => name
                    .as_ref()
                    .filter(|n| spark.contains_bytes(n.as_bytes()))
                    .and(*id),
            })
            .collect();
        let out = dir.path("kept.parquet");
        let o = lesshash(&[
            "filter",
            path.to_str().unwrap(),
            "-i",
            input.to_str().unwrap(),
            "--column",
            column,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_ok(&o);
        let read = read_parquet(&out);
        assert_eq!(
            read.batch.schema().fields(),
            batch.schema().fields(),
            "{file}"
        );
        assert!(!expect.is_empty(), "{file}: the case needs a kept row");
        assert_eq!(ids(&read.batch), expect, "{file}");
    }
}

#[test]
fn empty_parquet() {
    let dir = Dir::new();
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Int64, true)]));
    let w = ArrowWriter::try_new(
        File::create(dir.path("e.parquet")).unwrap(),
        schema.clone(),
        None,
    )
    .unwrap();
    w.close().unwrap();
    let f = dir.s("e.lhbf");
    let o = lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("e.parquet"),
        "-o",
        &f,
        "--fpr",
        "0.01",
    ]);
    assert_ok(&o);
    assert_eq!(load(Path::new(&f)).key_kind(), KeyKind::Int64);
    let o = lesshash(&[
        "filter",
        "-q",
        &f,
        "-i",
        &dir.s("e.parquet"),
        "-o",
        &dir.s("out.parquet"),
    ]);
    assert_ok(&o);
    let read = read_parquet(&dir.path("out.parquet"));
    assert_eq!(read.batch.num_rows(), 0);
    assert_eq!(read.batch.schema(), schema);
}

/// Each output column tries a dictionary where the input's writer kept
/// one for every page (few distinct values) and not where it fell back
/// to plain pages (mostly distinct values, as ids): the rows are the same
/// either way, and the output no larger than the input's choices make it.
#[test]
fn parquet_output_keeps_the_inputs_dictionary_choices() {
    let dir = Dir::new();
    let f = users_filter(&dir, 1000);
    let n = 20_000;
    let batch = events(n);
    // A small dictionary page limit makes the writer give up on `id`,
    // `name` and `score` (every value distinct), not on `user_id`.
    let props = WriterProperties::builder()
        .set_dictionary_page_size_limit(16 << 10)
        .set_compression(Compression::SNAPPY)
        .build();
    let input = dir.path("events.parquet");
    let mut w =
        ArrowWriter::try_new(File::create(&input).unwrap(), batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let dictionaries = |path: &Path| -> Vec<bool> {
        let reader =
            parquet::file::reader::SerializedFileReader::new(File::open(path).unwrap()).unwrap();
        use parquet::file::reader::FileReader;
        let meta = reader.metadata().row_group(0).clone();
        meta.columns()
            .iter()
            .map(|c| c.dictionary_page_offset().is_some())
            .collect()
    };
    // The input: every column started a dictionary (the writer's default).
    assert_eq!(dictionaries(&input), [true; 4]);

    let out = dir.path("out.parquet");
    assert_ok(&lesshash(&[
        "filter",
        &f,
        "-q",
        "-i",
        &dir.s("events.parquet"),
        "--column",
        "user_id",
        "-o",
        out.to_str().unwrap(),
    ]));
    assert_eq!(dictionaries(&out), [false, true, false, false]);
    assert_eq!(
        ids(&read_parquet(&out).batch),
        expected_rows(&load(Path::new(&f)), &batch, false)
    );
}

/// Parquet output of Arrow types Parquet has no logical type for
/// (`timestamp[s]`, `time32[s]`, `date64`) is stored as pyarrow stores them
/// (milliseconds, milliseconds, days, with those logical types: before,
/// plain integers) with the input's Arrow schema recorded: read back, a
/// `date64` is the input's column, the seconds the same instants and times
/// in milliseconds (as pyarrow reads its own such files), and each cell the
/// same key. A value the stored unit cannot hold is refused by column,
/// never truncated.
#[test]
fn parquet_output_keeps_temporal_types_parquet_has_no_unit_for() {
    use arrow_array::{
        Array, Date64Array, Time32MillisecondArray, Time32SecondArray, TimestampMillisecondArray,
        TimestampSecondArray,
    };
    use parquet::basic::{LogicalType, TimeUnit as ParquetUnit};
    let dir = Dir::new();
    let n = 50i64;
    let batch = RecordBatch::try_from_iter([
        (
            "id",
            Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef,
        ),
        (
            "ts",
            Arc::new(
                TimestampSecondArray::from_iter(
                    (0..n).map(|i| (i % 9 != 4).then_some(i * 86_401 - 1_000)),
                )
                .with_timezone("UTC"),
            ),
        ),
        (
            "t",
            Arc::new(Time32SecondArray::from_iter_values(
                (0..n).map(|i| i as i32 * 1_000),
            )),
        ),
        (
            "d",
            Arc::new(Date64Array::from_iter_values(
                (0..n).map(|i| (i - 20) * 86_400_000),
            )),
        ),
        (
            "dts",
            Arc::new(
                arrow_array::DictionaryArray::<Int32Type>::try_new(
                    (0..n)
                        .map(|i| (i % 5 != 2).then_some((i % 3) as i32))
                        .collect(),
                    Arc::new(TimestampSecondArray::from(vec![-1, 0, 1_700_000_000])),
                )
                .unwrap(),
            ),
        ),
    ])
    .unwrap();
    write_ipc_file(&dir.path("in.arrow"), std::slice::from_ref(&batch));
    let f = dir.s("all.lhbf");
    assert_ok(&lesshash(&[
        "build",
        "-q",
        "-i",
        &dir.s("in.arrow"),
        "--column",
        "id",
        "--fpr",
        "0.01",
        "-o",
        &f,
    ]));
    let out = dir.path("out.parquet");
    assert_ok(&lesshash(&[
        "filter",
        &f,
        "-q",
        "-i",
        &dir.s("in.arrow"),
        "--column",
        "id",
        "-o",
        out.to_str().unwrap(),
    ]));
    let back = read_parquet(&out).batch;
    let ms = TimestampMillisecondArray::from_iter(
        (0..n).map(|i| (i % 9 != 4).then_some((i * 86_401 - 1_000) * 1_000)),
    )
    .with_timezone("UTC");
    let t_ms = Time32MillisecondArray::from_iter_values((0..n).map(|i| i as i32 * 1_000_000));
    assert_eq!(back.column(0), batch.column(0));
    assert_eq!(back.column(1).as_ref(), &ms as &dyn Array);
    assert_eq!(back.column(2).as_ref(), &t_ms as &dyn Array);
    assert_eq!(back.column(3), batch.column(3));
    // Each cell is the same key as the input's.
    for c in ["ts", "t", "d", "dts"] {
        let kept = dir.path(&format!("{c}.lhbf"));
        assert_ok(&lesshash(&[
            "build",
            "-q",
            "-i",
            &dir.s("in.arrow"),
            "--column",
            c,
            "--fpr",
            "0.001",
            "-o",
            kept.to_str().unwrap(),
        ]));
        let filter = load(&kept);
        let i = back.schema().index_of(c).unwrap();
        let found = filter.contains_array(back.column(i).as_ref()).unwrap();
        assert_eq!(
            found.true_count(),
            back.column(i).len() - back.column(i).null_count(),
            "{c}"
        );
    }
    let reader =
        parquet::file::reader::SerializedFileReader::new(File::open(&out).unwrap()).unwrap();
    use parquet::file::reader::FileReader;
    let descr = reader.metadata().file_metadata().schema_descr_ptr();
    let logical = |i: usize| descr.column(i).logical_type_ref().cloned();
    assert_eq!(
        logical(1),
        Some(LogicalType::timestamp(true, ParquetUnit::MILLIS))
    );
    assert_eq!(
        logical(2),
        Some(LogicalType::time(false, ParquetUnit::MILLIS))
    );
    assert_eq!(logical(3), Some(LogicalType::Date));
    // A dictionary of seconds: its values stored as milliseconds too.
    assert_eq!(
        logical(4),
        Some(LogicalType::timestamp(false, ParquetUnit::MILLIS))
    );

    // A date64 that is not a whole day: refused by column, nothing written.
    let part = RecordBatch::try_from_iter([
        ("id", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        (
            "d",
            Arc::new(Date64Array::from(vec![86_400_001])) as ArrayRef,
        ),
    ])
    .unwrap();
    write_ipc_file(&dir.path("part.arrow"), &[part]);
    let before = dir.names();
    assert_error(
        &lesshash(&[
            "filter",
            &f,
            "-q",
            "-i",
            &dir.s("part.arrow"),
            "--column",
            "id",
            "-o",
            &dir.s("part.parquet"),
        ]),
        &["\"d\"", "not a whole day", "Arrow IPC"],
    );
    assert_eq!(dir.names(), before);
}
