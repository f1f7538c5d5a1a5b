//! The `lesshash` binary on damaged and lying inputs, as a hostile user
//! would give them: Parquet and Arrow IPC files cut short or with words of
//! them set to extremes, footers whose row counts and schema lie, page
//! headers that claim more than their page holds, and CSV whose records
//! have no end. Every one gets exit status 2 and one line naming the file
//! (or, where the damage changes only values, an ordinary result), never a
//! panic or an abort, and leaves nothing beside the user's files.

use std::fs::File;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use arrow_array::{ArrayRef, Date32Array, Date64Array, Int64Array, RecordBatch, StringArray};
use arrow_ipc::writer::{FileWriter, IpcWriteOptions, StreamWriter};
use lesshash::BloomFilter;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader, ParquetMetaDataWriter};
use parquet::file::properties::{WriterProperties, WriterVersion};

mod common;

use common::*;

/// `n` rows: `id` (Int64, 0..n), `user` (Utf8, 40 distinct values, so
/// dictionary pages), `day` (Date64).
fn table(n: i64) -> RecordBatch {
    let id = Int64Array::from_iter_values(0..n);
    let user: StringArray = (0..n).map(|i| Some(format!("user{}", i % 40))).collect();
    let day = Date64Array::from_iter_values((0..n).map(|i| i * 86_400_000));
    RecordBatch::try_from_iter([
        ("id", Arc::new(id) as ArrayRef),
        ("user", Arc::new(user) as ArrayRef),
        ("day", Arc::new(day) as ArrayRef),
    ])
    .unwrap()
}

fn write_parquet(path: &Path, batch: &RecordBatch, props: WriterProperties) {
    let mut w =
        ArrowWriter::try_new(File::create(path).unwrap(), batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

/// The base files the corruptions start from: Parquet of both page
/// versions, with and without dictionaries, three codecs; Arrow IPC files
/// and streams, plain and LZ4.
fn base_files(dir: &Dir) -> Vec<(String, Vec<u8>)> {
    let batch = table(300);
    let parquet = [
        (
            "v1-snappy-dict.parquet",
            WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .set_data_page_row_count_limit(100)
                .set_write_batch_size(50)
                .build(),
        ),
        (
            "v2-zstd-plain.parquet",
            WriterProperties::builder()
                .set_writer_version(WriterVersion::PARQUET_2_0)
                .set_compression(Compression::ZSTD(ZstdLevel::default()))
                .set_dictionary_enabled(false)
                .set_max_row_group_row_count(Some(128))
                .build(),
        ),
        (
            "v1-plain.parquet",
            WriterProperties::builder()
                .set_compression(Compression::UNCOMPRESSED)
                .set_coerce_types(true)
                .build(),
        ),
    ];
    let mut out = Vec::new();
    for (name, props) in parquet {
        write_parquet(&dir.path(name), &batch, props);
        out.push((name.to_string(), std::fs::read(dir.path(name)).unwrap()));
    }
    let lz4 = IpcWriteOptions::default()
        .try_with_compression(Some(arrow_ipc::CompressionType::LZ4_FRAME))
        .unwrap();
    for (name, options) in [
        ("plain.arrows", IpcWriteOptions::default()),
        ("lz4.arrows", lz4.clone()),
        ("plain.arrow", IpcWriteOptions::default()),
        ("lz4.arrow", lz4),
    ] {
        let f = File::create(dir.path(name)).unwrap();
        let batches = [batch.slice(0, 150), batch.slice(150, 150)];
        if name.ends_with(".arrows") {
            let mut w = StreamWriter::try_new_with_options(f, &batch.schema(), options).unwrap();
            batches.iter().for_each(|b| w.write(b).unwrap());
            w.finish().unwrap();
        } else {
            let mut w = FileWriter::try_new_with_options(f, &batch.schema(), options).unwrap();
            batches.iter().for_each(|b| w.write(b).unwrap());
            w.finish().unwrap();
        }
        out.push((name.to_string(), std::fs::read(dir.path(name)).unwrap()));
    }
    out
}

/// The damaged copies of `data`: cut at 24 places, and every `stride`th
/// aligned 32-bit word set to each of four extremes.
fn corruptions(data: &[u8], stride: usize) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for i in 0..24 {
        let cut = data.len() * i / 24;
        out.push((format!("cut at {cut}"), data[..cut].to_vec()));
    }
    for word in (0..data.len() / 4).step_by(stride) {
        for v in [u32::MAX, i32::MAX as u32, 1 << 31, 0x1000_0000] {
            let mut d = data.to_vec();
            d[4 * word..4 * word + 4].copy_from_slice(&v.to_le_bytes());
            out.push((format!("word {word} = {v:#x}"), d));
        }
    }
    out
}

/// Runs `build` and `filter` over `input`, each with an `-o` that exists
/// already, on `threads` threads: either succeeds or fails with one line
/// naming `input`, no panic, its output unchanged, nothing else left.
/// Returns what went wrong, if anything.
fn check_run(dir: &Dir, input: &str, column: &str, threads: &str) -> Option<String> {
    let out_name = format!("out.{}", input.rsplit('.').next().unwrap());
    for (command, out) in [("build", "f.lhbf"), ("filter", out_name.as_str())] {
        std::fs::write(dir.path(out), b"precious").unwrap();
        let before = dir.names();
        let (i, o) = (dir.s(input), dir.s(out));
        let mut args = vec![command];
        if command == "filter" {
            args.push("members.lhbf");
        }
        args.extend([
            "-i",
            &i,
            "--column",
            column,
            "-o",
            &o,
            "--threads",
            threads,
            "-q",
        ]);
        if command == "build" {
            args.extend(["--fpr", "0.01"]);
        }
        let r = Command::new(BIN)
            .current_dir(dir.0.path())
            .env("RUST_BACKTRACE", "0")
            .args(&args)
            .output()
            .unwrap();
        let err = stderr(&r);
        let wrong = match r.status.code() {
            Some(0) => None,
            Some(2) if err.contains("panicked") => Some("a panic"),
            Some(2) if err.trim_end().lines().count() != 1 => Some("not one line"),
            Some(2) if !err.contains(input) => Some("no file named"),
            Some(2) if std::fs::read(dir.path(out)).unwrap() != b"precious" => {
                Some("the output changed")
            }
            Some(2) => None,
            _ => Some("not exit status 0 or 2"),
        };
        let wrong = wrong.or((dir.names() != before).then_some("files left behind"));
        if let Some(wrong) = wrong {
            let status = r.status;
            return Some(format!(
                "{command} (column {column}, {threads} threads): {wrong}: {status}: {err}"
            ));
        }
    }
    None
}

#[test]
fn damaged_columnar_files_fail_with_one_line_on_every_thread_count() {
    let dir = Dir::new();
    let bases = base_files(&dir);
    // The filter `filter` runs with: the ids as members.
    let (m, f) = (dir.s("plain.arrows"), dir.s("members.lhbf"));
    let o = lesshash(&[
        "build", "-i", &m, "--column", "id", "-o", &f, "--fpr", "0.01", "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (mut cases, mut failures) = (0, Vec::new());
    for (name, data) in &bases {
        let ext = name.rsplit('.').next().unwrap();
        let input = format!("case.{ext}");
        // About a hundred word positions per file.
        let stride = (data.len() / 4 / 100).max(1);
        for (i, (what, damaged)) in corruptions(data, stride).into_iter().enumerate() {
            std::fs::write(dir.path(&input), &damaged).unwrap();
            let threads = if i % 2 == 0 { "1" } else { "2" };
            let column = ["id", "user", "day"][i % 3];
            if let Some(wrong) = check_run(&dir, &input, column, threads) {
                failures.push(format!("{name}, {what}: {wrong}"));
            }
            cases += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {cases} cases:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(cases > 1000, "{cases} cases");
}

/// `path`'s Parquet footer replaced by `edit` of it (the pages kept).
fn rewrite_footer(path: &Path, edit: impl FnOnce(ParquetMetaData) -> ParquetMetaData) {
    let data = std::fs::read(path).unwrap();
    let footer_len = u32::from_le_bytes(data[data.len() - 8..data.len() - 4].try_into().unwrap());
    let meta = ParquetMetaDataReader::new()
        .parse_and_finish(&File::open(path).unwrap())
        .unwrap();
    let mut out = data[..data.len() - 8 - footer_len as usize].to_vec();
    ParquetMetaDataWriter::new(&mut out, &edit(meta))
        .finish()
        .unwrap();
    std::fs::write(path, out).unwrap();
}

/// Every row group of `meta` claiming `rows` rows.
fn claiming(meta: ParquetMetaData, rows: i64) -> ParquetMetaData {
    let mut builder = meta.into_builder();
    let groups = builder
        .take_row_groups()
        .into_iter()
        .map(|g| g.into_builder().set_num_rows(rows).build().unwrap())
        .collect();
    builder.set_row_groups(groups).build()
}

#[test]
fn row_counts_the_pages_do_not_hold_are_refused() {
    let dir = Dir::new();
    let (p, f) = (dir.s("t.parquet"), dir.s("f.lhbf"));
    write_parquet(
        &dir.path("t.parquet"),
        &table(3),
        WriterProperties::default(),
    );
    // A row group claiming 2^31 rows over 3: refused before a filter is
    // sized for them (it was 2.66 GB, written with exit status 0).
    for (rows, shown) in [(1i64 << 31, "2147483648"), (0, "0"), (2, "2"), (4, "4")] {
        write_parquet(
            &dir.path("t.parquet"),
            &table(3),
            WriterProperties::default(),
        );
        rewrite_footer(&dir.path("t.parquet"), |m| claiming(m, rows));
        for threads in ["1", "2"] {
            let o = lesshash(&[
                "build",
                "-i",
                &p,
                "--column",
                "id",
                "-o",
                &f,
                "--fpr",
                "0.01",
                "--threads",
                threads,
            ]);
            assert_error(
                &o,
                &[
                    "t.parquet",
                    &format!("the row group claims {shown} rows, but the column's pages hold 3"),
                ],
            );
            assert!(!dir.path("f.lhbf").exists());
        }
        // `filter` reads every column: the same check.
        let m = dir.s("m.lhbf");
        std::fs::write(
            &m,
            BloomFilter::builder()
                .expected_items(10)
                .fpr(0.01)
                .key_kind(lesshash::KeyKind::Int64)
                .build()
                .unwrap()
                .to_bytes(),
        )
        .unwrap();
        let out = dir.s("out.parquet");
        let o = lesshash(&["filter", &m, "-i", &p, "--column", "id", "-o", &out]);
        assert_error(&o, &["t.parquet", "claims", "pages hold 3"]);
        assert_eq!(dir.names(), ["m.lhbf", "t.parquet"]);
    }
}

/// The footer of the Parquet file at `path` with `find` replaced by
/// `replace` (once), its length updated.
fn patch_footer(path: &Path, find: &[u8], replace: &[u8]) {
    let mut data = std::fs::read(path).unwrap();
    let n = data.len();
    let footer_len = u32::from_le_bytes(data[n - 8..n - 4].try_into().unwrap()) as usize;
    let start = n - 8 - footer_len;
    let at = start
        + data[start..]
            .windows(find.len())
            .position(|w| w == find)
            .expect("the bytes to patch");
    data.splice(at..at + find.len(), replace.iter().copied());
    let new_len = (footer_len + replace.len() - find.len()) as u32;
    let n = data.len();
    data[n - 8..n - 4].copy_from_slice(&new_len.to_le_bytes());
    std::fs::write(path, data).unwrap();
}

#[test]
fn a_schema_claiming_more_children_than_it_has_is_refused() {
    let dir = Dir::new();
    let p = dir.s("t.parquet");
    let batch =
        RecordBatch::try_from_iter([("id", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef)])
            .unwrap();
    write_parquet(&dir.path("t.parquet"), &batch, WriterProperties::default());
    // The root element: name "schema", then num_children (field 5, i32)
    // = 1, zigzag 2; made 2^31 - 1 (it asked for gigabytes, then aborted).
    patch_footer(
        &dir.path("t.parquet"),
        b"schema\x15\x02",
        b"schema\x15\xfe\xff\xff\xff\x0f",
    );
    let f = dir.s("f.lhbf");
    let o = lesshash(&["build", "-i", &p, "-o", &f, "--fpr", "0.01"]);
    assert_error(
        &o,
        &[
            "t.parquet",
            "schema element 0 claims 2147483647 children; 1 elements follow it",
        ],
    );
    assert_eq!(dir.names(), ["t.parquet"]);
}

#[test]
fn a_dictionary_larger_than_its_page_is_refused() {
    let dir = Dir::new();
    let p = dir.s("t.parquet");
    // 100 distinct values: a dictionary page of 100 int64 values (800
    // bytes), its count zigzag 200 = varint c8 01.
    let batch = RecordBatch::try_from_iter([(
        "id",
        Arc::new(Int64Array::from_iter_values((0..1000).map(|i| i % 100))) as ArrayRef,
    )])
    .unwrap();
    let props = WriterProperties::builder()
        .set_compression(Compression::UNCOMPRESSED)
        .build();
    write_parquet(&dir.path("t.parquet"), &batch, props);
    let mut data = std::fs::read(&p).unwrap();
    // The dictionary page header's num_values (field 1 of field 7) made
    // 8191 (varint fe 7f), the same length.
    let at = data
        .windows(3)
        .position(|w| w == [0x15, 0xc8, 0x01])
        .expect("the dictionary's count");
    data[at + 1..at + 3].copy_from_slice(&[0xfe, 0x7f]);
    std::fs::write(&p, data).unwrap();
    let f = dir.s("f.lhbf");
    let o = lesshash(&["build", "-i", &p, "-o", &f, "--fpr", "0.01"]);
    assert_error(
        &o,
        &[
            "t.parquet",
            "row group 0, column id",
            "claims 8191 dictionary values in 800 bytes",
        ],
    );
}

#[test]
fn delta_encoded_lengths_beyond_their_page_are_refused() {
    let dir = Dir::new();
    let p = dir.s("t.parquet");
    // 300 strings, DELTA_LENGTH_BYTE_ARRAY in an uncompressed v2 page: the
    // lengths' header is block 128 (80 01), 4 mini blocks (04), 300
    // values (ac 02); the count made 1000 (e8 07), the same length. The
    // decoder allocates a length per counted value before it decodes one.
    let names: StringArray = (0..300).map(|i| Some(format!("user{i}"))).collect();
    let batch = RecordBatch::try_from_iter([("user", Arc::new(names) as ArrayRef)]).unwrap();
    let props = WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_2_0)
        .set_compression(Compression::UNCOMPRESSED)
        .set_dictionary_enabled(false)
        .set_encoding(parquet::basic::Encoding::DELTA_LENGTH_BYTE_ARRAY)
        .build();
    write_parquet(&dir.path("t.parquet"), &batch, props);
    let mut data = std::fs::read(&p).unwrap();
    let header = [0x80, 0x01, 0x04, 0xac, 0x02];
    let at = data
        .windows(header.len())
        .position(|w| w == header)
        .expect("the lengths' header");
    data[at + 3..at + 5].copy_from_slice(&[0xe8, 0x07]);
    std::fs::write(&p, data).unwrap();
    let f = dir.s("f.lhbf");
    for threads in ["1", "2"] {
        let o = lesshash(&[
            "build",
            "-i",
            &p,
            "-o",
            &f,
            "--fpr",
            "0.01",
            "--threads",
            threads,
        ]);
        assert_error(
            &o,
            &[
                "t.parquet",
                "row group 0, column user",
                "data page 0 holds 300 values, but its delta-encoded lengths count 1000",
            ],
        );
    }
}

#[test]
fn a_footer_longer_than_the_file_is_refused() {
    let dir = Dir::new();
    let p = dir.s("t.parquet");
    write_parquet(
        &dir.path("t.parquet"),
        &table(3),
        WriterProperties::default(),
    );
    let mut data = std::fs::read(&p).unwrap();
    let n = data.len();
    data[n - 8..n - 4].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&p, data).unwrap();
    let f = dir.s("f.lhbf");
    let o = lesshash(&[
        "build", "-i", &p, "--column", "id", "-o", &f, "--fpr", "0.01",
    ]);
    assert_error(&o, &["t.parquet", "its footer claims 4294967295 bytes"]);
}

/// An Arrow IPC stream of one int64 column [1, 2, 3] (pyarrow's example
/// in the report: 304 bytes) with the 32-bit word at `at` set to `v`.
fn stream_with(dir: &Dir, at: usize, v: u32) -> String {
    let batch =
        RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef)])
            .unwrap();
    let mut data = Vec::new();
    let mut w = StreamWriter::try_new(&mut data, &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    data[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let p = dir.s("x.arrows");
    std::fs::write(&p, data).unwrap();
    p
}

#[test]
fn ipc_lengths_are_checked_against_the_file() {
    let dir = Dir::new();
    let f = dir.s("f.lhbf");
    // The schema message's metadata length (after the continuation
    // marker) made 2^31 - 1: it held 2.1 GB before failing.
    let p = stream_with(&dir, 4, i32::MAX as u32);
    let o = lesshash(&["build", "-i", &p, "-o", &f, "--fpr", "0.01"]);
    assert_error(
        &o,
        &[
            "x.arrows",
            "message 0 at byte 0: it claims 2147483647 bytes of metadata",
        ],
    );
    // Every word of the stream set to each extreme: none panics.
    let len = std::fs::metadata(&p).unwrap().len() as usize;
    for at in (0..len - 3).step_by(4) {
        for v in [u32::MAX, i32::MAX as u32, 1 << 31] {
            let p = stream_with(&dir, at, v);
            for threads in ["1", "2"] {
                let o = lesshash(&[
                    "build",
                    "-i",
                    &p,
                    "-o",
                    &f,
                    "--fpr",
                    "0.01",
                    "--threads",
                    threads,
                ]);
                let err = stderr(&o);
                assert!(
                    matches!(o.status.code(), Some(0 | 2)),
                    "word {at} = {v:#x}: {err}"
                );
                assert!(!err.contains("panicked"), "word {at} = {v:#x}: {err}");
                let _ = std::fs::remove_file(&f);
            }
        }
    }
}

#[test]
fn a_file_row_count_its_row_groups_do_not_sum_to_is_refused() {
    let dir = Dir::new();
    let p = dir.s("t.parquet");
    write_parquet(
        &dir.path("t.parquet"),
        &table(3),
        WriterProperties::default(),
    );
    // FileMetaData's num_rows (field 3, i64, after the schema list) = 3,
    // zigzag 6; made 4 (zigzag 8).
    patch_footer(&dir.path("t.parquet"), &[0x16, 0x06], &[0x16, 0x08]);
    let f = dir.s("f.lhbf");
    let o = lesshash(&[
        "build", "-i", &p, "--column", "id", "-o", &f, "--fpr", "0.01",
    ]);
    assert_error(
        &o,
        &[
            "t.parquet",
            "its footer claims 4 rows, but its row groups claim 3",
        ],
    );
}

#[test]
fn an_ipc_file_footer_beyond_the_file_is_refused() {
    let dir = Dir::new();
    let p = dir.s("t.arrow");
    let batch = table(3);
    let mut w = FileWriter::try_new(File::create(&p).unwrap(), &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    let mut data = std::fs::read(&p).unwrap();
    let n = data.len();
    data[n - 10..n - 6].copy_from_slice(&i32::MAX.to_le_bytes());
    std::fs::write(&p, data).unwrap();
    let f = dir.s("f.lhbf");
    let o = lesshash(&[
        "build", "-i", &p, "--column", "id", "-o", &f, "--fpr", "0.01",
    ]);
    assert_error(&o, &["t.arrow", "its footer claims 2147483647 bytes"]);
}

#[test]
fn a_compressed_ipc_buffer_declaring_terabytes_is_refused() {
    let dir = Dir::new();
    let p = dir.s("t.arrows");
    let batch = table(100);
    let options = IpcWriteOptions::default()
        .try_with_compression(Some(arrow_ipc::CompressionType::LZ4_FRAME))
        .unwrap();
    let mut data = Vec::new();
    let mut w = StreamWriter::try_new_with_options(&mut data, &batch.schema(), options).unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    drop(w);
    // The second message, the batch: its first non-empty buffer's
    // eight-byte decompressed length made 2^40.
    let message_at = |pos: usize| {
        let len = i32::from_le_bytes(data[pos + 4..pos + 8].try_into().unwrap()) as usize;
        (pos + 8, len)
    };
    let (meta, len) = message_at(0);
    let schema_end = meta + len;
    let (meta, len) = message_at(schema_end);
    let message = arrow_ipc::root_as_message(&data[meta..meta + len]).unwrap();
    let body = meta + len;
    let buffer = message
        .header_as_record_batch()
        .unwrap()
        .buffers()
        .unwrap()
        .iter()
        .find(|b| b.length() >= 8)
        .unwrap();
    let at = body + buffer.offset() as usize;
    data[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    std::fs::write(&p, data).unwrap();
    let f = dir.s("f.lhbf");
    let o = lesshash(&[
        "build", "-i", &p, "--column", "id", "-o", &f, "--fpr", "0.01",
    ]);
    assert_error(
        &o,
        &[
            "t.arrows",
            "message 1",
            "claims 1099511627776 bytes decompressed",
        ],
    );
}

#[test]
fn honest_edge_files_are_read() {
    let dir = Dir::new();
    // pyarrow's empty table without dictionaries: one row group of 0
    // rows whose column chunks have offset 0 and size 0.
    let empty = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/empty-pyarrow.parquet"
    );
    let (f, out) = (dir.s("f.lhbf"), dir.s("out.parquet"));
    let o = lesshash(&[
        "build", "-i", empty, "--column", "id", "-o", &f, "--fpr", "0.01", "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = lesshash(&[
        "filter", &f, "-i", empty, "--column", "id", "-o", &out, "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // An IPC stream with a few stray bytes after its last message (and no
    // end marker): the stream reader takes them as the end.
    let batch = table(5);
    let mut data = Vec::new();
    let mut w = StreamWriter::try_new(&mut data, &batch.schema()).unwrap();
    w.write(&batch).unwrap();
    drop(w);
    data.extend_from_slice(&[1, 2, 3]);
    let p = dir.s("t.arrows");
    std::fs::write(&p, data).unwrap();
    let o = lesshash(&[
        "build", "-i", &p, "--column", "id", "-o", &f, "--fpr", "0.01", "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn an_ipc_file_block_must_agree_with_its_message() {
    let dir = Dir::new();
    let p = dir.s("t.arrow");
    let batch = table(100);
    let options = IpcWriteOptions::default()
        .try_with_compression(Some(arrow_ipc::CompressionType::LZ4_FRAME))
        .unwrap();
    let mut w =
        FileWriter::try_new_with_options(File::create(&p).unwrap(), &batch.schema(), options)
            .unwrap();
    w.write(&batch).unwrap();
    w.finish().unwrap();
    let mut data = std::fs::read(&p).unwrap();
    // The record batch's block in the footer (offset, metadata length,
    // padding, body length): eight bytes moved from the body to the
    // metadata, so the reader would take the body eight bytes late, past
    // the buffer prefixes the check read.
    let n = data.len();
    let footer_len = i32::from_le_bytes(data[n - 10..n - 6].try_into().unwrap()) as usize;
    let footer_at = n - 10 - footer_len;
    let footer = arrow_ipc::root_as_footer(&data[footer_at..n - 10]).unwrap();
    let block = footer.recordBatches().unwrap().get(0);
    let mut bytes = Vec::new();
    bytes.extend_from_slice(&block.offset().to_le_bytes());
    bytes.extend_from_slice(&block.metaDataLength().to_le_bytes());
    bytes.extend_from_slice(&[0; 4]);
    bytes.extend_from_slice(&block.bodyLength().to_le_bytes());
    let (meta, body) = (block.metaDataLength(), block.bodyLength());
    let at = footer_at
        + data[footer_at..]
            .windows(bytes.len())
            .position(|w| w == bytes)
            .expect("the block");
    data[at + 8..at + 12].copy_from_slice(&(meta + 8).to_le_bytes());
    data[at + 16..at + 24].copy_from_slice(&(body - 8).to_le_bytes());
    std::fs::write(&p, data).unwrap();
    let f = dir.s("f.lhbf");
    let o = lesshash(&[
        "build", "-i", &p, "--column", "id", "-o", &f, "--fpr", "0.01",
    ]);
    assert_error(
        &o,
        &[
            "t.arrow",
            &format!(
                "the block claims {} bytes of metadata, its message {meta}",
                meta + 8
            ),
        ],
    );
}

#[test]
fn a_parquet_date_is_one_key_whatever_arrow_type_the_writer_recorded() {
    let dir = Dir::new();
    // pyarrow writes a date64 column as Parquet DATE (days) and records
    // date64 in the embedded Arrow schema; the parquet crate does the same
    // with coerced types. Read as the recorded Date64 (as DataFusion reads
    // it) or as days (as pyarrow, pandas and DuckDB do), its keys are its
    // dates' (their midnights' microseconds): a Date32 column of the same
    // dates gives the same filter.
    let days: Vec<i64> = vec![0, 1, 19_000, 20_431];
    let d64 = Date64Array::from_iter_values(days.iter().map(|d| d * 86_400_000));
    let d32 = Date32Array::from_iter_values(days.iter().map(|&d| d as i32));
    let props = || WriterProperties::builder().set_coerce_types(true).build();
    for (name, array) in [
        ("d64.parquet", Arc::new(d64) as ArrayRef),
        ("d32.parquet", Arc::new(d32)),
    ] {
        let batch = RecordBatch::try_from_iter([("day", array)]).unwrap();
        write_parquet(&dir.path(name), &batch, props());
        let (p, f) = (dir.s(name), dir.s(&format!("{name}.lhbf")));
        let o = lesshash(&["build", "-i", &p, "-o", &f, "--fpr", "0.001", "-q"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let filter = BloomFilter::from_bytes(&std::fs::read(&f).unwrap()).unwrap();
        for d in &days {
            let midnight = d * 86_400 * 1_000_000;
            assert!(filter.contains(&midnight.to_le_bytes()), "{name}: day {d}");
        }
    }
    assert_eq!(
        std::fs::read(dir.path("d64.parquet.lhbf")).unwrap(),
        std::fs::read(dir.path("d32.parquet.lhbf")).unwrap()
    );
}

#[test]
fn csv_records_are_bounded_and_keep_quoted_carriage_returns() {
    let dir = Dir::new();
    let (c, f) = (dir.s("t.csv"), dir.s("f.lhbf"));
    // A quoted field ending in \r keeps it; a \r\n line end does not.
    std::fs::write(&c, b"id,name\n1,\"abc\r\"\n2,def\r\n").unwrap();
    let o = lesshash(&[
        "build", "-i", &c, "--column", "name", "-o", &f, "--fpr", "0.001", "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let filter = BloomFilter::from_bytes(&std::fs::read(&f).unwrap()).unwrap();
    assert!(filter.contains(b"abc\r") && filter.contains(b"def"));
    assert!(!filter.contains(b"abc") && !filter.contains(b"def\r"));
    // --keys int names the line of a bad key, a quoted record spanning
    // lines before it counted.
    std::fs::write(&c, b"id,note\n1,\"two\nlines\"\n2,x\nzz,y\n").unwrap();
    let o = lesshash(&[
        "build", "-i", &c, "--column", "id", "--keys", "int", "-o", &f, "--fpr", "0.01",
    ]);
    assert_error(&o, &["t.csv, line 5: key \"zz\" is not an integer"]);
    // An unmatched quote on line 3 makes the rest one record: refused at
    // the record limit (64 MiB), naming the line and the quote.
    let mut data = b"id\n1\n\"2\n".to_vec();
    let row = [b'x'; 1023];
    while data.len() <= 65 << 20 {
        data.extend_from_slice(&row);
        data.push(b'\n');
    }
    std::fs::write(&c, &data).unwrap();
    let o = lesshash(&["build", "-i", &c, "-o", &f, "--fpr", "0.01"]);
    assert_error(
        &o,
        &[
            "t.csv",
            "the record on line 3 is longer than 64 MiB",
            "never closed",
        ],
    );
    assert_eq!(dir.names(), ["f.lhbf", "t.csv"]);
    // Blank lines are no record: 65 MiB of them before a record are not
    // refused, and the lines after them are counted.
    let mut data = b"id\n".to_vec();
    data.resize(3 + (65 << 20), b'\n');
    data.extend_from_slice(b"1\nzz\n");
    std::fs::write(&c, &data).unwrap();
    let o = lesshash(&[
        "build", "-i", &c, "--keys", "int", "-o", &f, "--fpr", "0.01",
    ]);
    let line = 1 + (65 << 20) + 2;
    assert_error(&o, &[&format!("t.csv, line {line}: key \"zz\"")]);
}
