//! `lesshash info`: a filter file's parameters and state.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::output::load_filter;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The filter file.
    #[arg(value_name = "FILTER")]
    filter: PathBuf,
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let f = load_filter(&args.filter)?;
    let n = f.insert_calls();
    let bits_per_key = if n == 0 {
        "-".to_string()
    } else {
        format!("{:.2}", f.num_bits() as f64 / n as f64)
    };
    let rows = [
        ("file", args.filter.display().to_string()),
        ("layout", f.layout().name().to_string()),
        ("scheme", f.scheme().name().to_string()),
        ("hashes (k)", f.num_hashes().to_string()),
        ("bits (m)", f.num_bits().to_string()),
        (
            "bytes",
            format!("{} ({} in the file)", f.size_in_bytes(), f.serialized_len()),
        ),
        ("seed", format!("{:#x}", f.seed())),
        ("inserted", format!("{n} (insert calls, repeats included)")),
        (
            "bits/key",
            format!("{bits_per_key} (at the inserted count)"),
        ),
        ("fill ratio", format!("{:.4}", f.fill_ratio())),
        ("estimated items", format!("{:.0}", f.estimated_len())),
        (
            "expected FPR",
            format!("{:.4}% (now, from the fill)", 100.0 * f.expected_fpr()),
        ),
    ];
    let mut out = std::io::stdout().lock();
    for (k, v) in rows {
        writeln!(out, "{k:<16} {v}").context("cannot write to stdout")?;
    }
    out.flush().context("cannot write to stdout")?;
    Ok(ExitCode::SUCCESS)
}
