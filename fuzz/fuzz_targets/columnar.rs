//! Arbitrary bytes as a Parquet file, an Arrow IPC file or an Arrow IPC
//! stream (told by their magic, as the command line tells them) through
//! the command line's reader (`lesshash_cli::columnar`): the footer and
//! framing checks, the decoders behind their panic guard, the key column
//! of every type, the footer's row claims against the rows read.
//!
//! Never a panic that escapes the guard, never an abort (an allocation the
//! file cannot back), never a hang; every error names the input, as the
//! command line's one line does; a filter built from a column holds every
//! key read from it.
//!
//! The seed corpus (fuzz/seeds/columnar) holds small files pyarrow wrote:
//! Parquet v1 (Snappy, dictionaries) and v2 (Zstandard, delta encodings),
//! with nulls, strings, dates, timestamps; Arrow IPC files and streams,
//! plain and LZ4.

#![no_main]

use std::io::Write;

use lesshash::BloomFilter;
use lesshash_cli::columnar::{Columnar, Format};
use libfuzzer_sys::fuzz_target;

const NAME: &str = "fuzz-input";

fn names_the_input(e: &anyhow::Error) {
    let message = format!("{e:#}");
    assert!(
        message.contains(NAME),
        "an error that names no input: {message}"
    );
}

fuzz_target!(|data: &[u8]| {
    let format = if data.starts_with(b"PAR1") {
        Format::Parquet
    } else if data.starts_with(b"ARROW1") {
        Format::ArrowFile
    } else {
        Format::ArrowStream
    };
    let mut file = tempfile::tempfile().expect("a temporary file");
    file.write_all(data).expect("written");
    let src = match Columnar::from_file(NAME.into(), file, format) {
        Ok(src) => src,
        Err(e) => return names_the_input(&e),
    };
    for field in 1..=src.schema().fields().len().min(16) {
        let Ok(key) = src.key_column(None, Some(field as u32)) else {
            continue; // a type with no key encoding
        };
        if let Err(e) = src.counted_keys(&key) {
            return names_the_input(&e);
        }
        let batches = match src.batches(Some(key.index)) {
            Ok(b) => b,
            Err(e) => return names_the_input(&e),
        };
        let mut filter = BloomFilter::with_fpr(1000, 0.01).expect("valid parameters");
        for batch in batches {
            match batch {
                Ok((_, batch)) => {
                    let keys = batch.column(0);
                    filter
                        .insert_array(keys.as_ref())
                        .expect("a key column's array");
                    let found = filter.contains_array(keys.as_ref()).expect("queried");
                    assert_eq!(
                        found.true_count(),
                        keys.len() - keys.logical_null_count(),
                        "a key read is not in the filter built from it"
                    );
                }
                Err(e) => return names_the_input(&e),
            }
        }
    }
});
