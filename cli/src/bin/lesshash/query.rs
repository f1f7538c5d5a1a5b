//! `lesshash query`: look keys up given on the command line.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::input::{Keys, check_kinds, int_key};
use crate::output::FilterArg;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    filter: FilterArg,

    /// Keys to look up (each argument's bytes, as a line's would be; a
    /// negative number is a key, not an option).
    #[arg(value_name = "KEY", required = true, allow_negative_numbers = true)]
    keys: Vec<std::ffi::OsString>,

    /// How each key's text becomes the bytes that are hashed: `text` or
    /// `int` (a decimal 64-bit integer, as the crate's and Python's integer
    /// keys), as for `build` and `filter`. A filter that records integer
    /// keys refuses text keys and the other way round (see --any-keys).
    #[arg(long = "keys", value_enum, value_name = "KIND", default_value_t = Keys::Text)]
    kind: Keys,

    /// Query even when the filter records keys of another kind (integers
    /// against text or bytes), which answer "no" unless the bytes really
    /// are the same.
    #[arg(long)]
    any_keys: bool,
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    if let Some(spark) = crate::spark::open_if_spark(&args.filter.filter)? {
        // Spark's filters record no key kind: --keys says what the keys are.
        return answer(&args, |key| {
            crate::spark::contains(&spark, key, args.kind).ok_or_else(|| not_int(key))
        });
    }
    let opened = args.filter.open()?;
    // A few keys: read only the pages their probes need.
    opened.advise_random();
    let filter = opened.view();
    if !args.any_keys {
        check_kinds(
            &args.filter.filter.display().to_string(),
            filter.key_kind(),
            args.kind.kind(),
            &format!("these keys (--keys {}) are", args.kind.kind_arg()),
            match args.kind {
                Keys::Text => "give --keys int",
                Keys::Int => "give --keys text",
            },
        )?;
    }
    answer(&args, |bytes| {
        Ok(match args.kind {
            Keys::Text => filter.contains(bytes),
            Keys::Int => filter.contains(&int_key(bytes).ok_or_else(|| not_int(bytes))?),
        })
    })
}

fn not_int(key: &[u8]) -> anyhow::Error {
    anyhow::anyhow!(
        "key {:?} is not an integer from -2^63 to 2^64 - 1 (--keys int)",
        String::from_utf8_lossy(key)
    )
}

/// Prints each key with `yes` or `no`; exit 0 if every key may be present,
/// 1 otherwise.
fn answer(args: &Args, mut present: impl FnMut(&[u8]) -> Result<bool>) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    let mut all = true;
    for key in &args.keys {
        let bytes = key.as_encoded_bytes();
        let present = present(bytes)?;
        all &= present;
        out.write_all(bytes).context("cannot write to stdout")?;
        out.write_all(if present { b"\tyes\n" } else { b"\tno\n" })
            .context("cannot write to stdout")?;
    }
    out.flush().context("cannot write to stdout")?;
    Ok(if all {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
