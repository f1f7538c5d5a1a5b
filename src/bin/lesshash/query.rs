//! `lesshash query`: look keys up given on the command line.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::output::FilterArg;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    filter: FilterArg,

    /// Keys to look up (each argument's bytes, as a line's would be).
    #[arg(value_name = "KEY", required = true)]
    keys: Vec<std::ffi::OsString>,
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let opened = args.filter.open()?;
    // A few keys: read only the pages their probes need.
    opened.advise_random();
    let filter = opened.view();
    let mut out = std::io::stdout().lock();
    let mut all = true;
    for key in &args.keys {
        let bytes = key.as_encoded_bytes();
        let present = filter.contains(bytes);
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
