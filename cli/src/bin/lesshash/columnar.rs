//! Parquet and Arrow IPC input from the command line's arguments: the
//! reader itself (untrusted input checked, batches, output sinks) is
//! `lesshash_cli::columnar`, in the library so that a fuzz target drives
//! it; here the input is opened (stdin copied to a file first) and the key
//! column chosen by `--column` / `--field`, checked against `--keys`.

use std::fs::File;
use std::io;

use anyhow::{Context, Result, bail};

pub(crate) use lesshash_cli::columnar::{
    Columnar, Feed, KeyColumn, OutFormat, Sink, rewound, select_rows, selection,
};

use crate::input::{Format, InputArgs};

/// Opens `input`, whose format [`InputArgs::detect`] found to be `format`
/// (a columnar one), and reads its schema.
pub(crate) fn open(input: &InputArgs, format: Format) -> Result<Columnar> {
    let name = input.name();
    let file = match input.path() {
        Some(p) if input.len().is_some() => {
            File::open(p).with_context(|| format!("cannot open input {name}"))?
        }
        _ => {
            // Parquet's footer is at the end and Arrow files are read
            // twice without --items: a stream (stdin, a pipe) goes to a
            // file with no name, which the OS removes however the process
            // ends.
            let mut tmp = tempfile::tempfile()
                .context("cannot create a temporary file for stdin (set TMPDIR)")?;
            io::copy(&mut input.open()?, &mut tmp)
                .with_context(|| format!("cannot copy {name} to a temporary file"))?;
            tmp
        }
    };
    Columnar::from_file(name, file, format)
}

/// The key column of `src` (`--column NAME`, `--field N`, or the only
/// column); `--keys`, if given, must agree with its type.
pub(crate) fn key_column(src: &Columnar, input: &InputArgs) -> Result<KeyColumn> {
    let key = src.key_column(input.column.as_deref(), input.field)?;
    if let Some(keys) = input.keys
        && !keys.kind().accepts(key.kind)
    {
        bail!(
            "--keys {} does not match {}, which holds {} keys: Parquet and Arrow keys are \
             hashed by their column's type (drop --keys)",
            keys.kind_arg(),
            key.describe(&src.name),
            key.kind
        );
    }
    Ok(key)
}
