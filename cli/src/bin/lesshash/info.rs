//! `lesshash info`: a filter file's parameters and state.

use std::io::Write;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::output::FilterArg;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    filter: FilterArg,
}

pub(crate) fn run(args: Args) -> Result<ExitCode> {
    if let Some(spark) = crate::spark::open_if_spark(&args.filter.filter)? {
        crate::spark::info(&args.filter.filter, &spark)?;
        return Ok(ExitCode::SUCCESS);
    }
    let opened = args.filter.open()?;
    // The fill statistics read every page: read ahead.
    opened.will_need();
    let f = opened.view();
    let n = f.insert_calls();
    let bits_per_key = if n == 0 {
        "-".to_string()
    } else {
        format!("{:.2}", f.num_bits() as f64 / n as f64)
    };
    let rows = [
        ("file", args.filter.filter.display().to_string()),
        (
            "checksum",
            if args.filter.skip_checksum {
                "not checked (--skip-checksum)"
            } else {
                "verified"
            }
            .to_string(),
        ),
        ("layout", f.layout().name().to_string()),
        ("scheme", f.scheme().name().to_string()),
        ("hash", f.hash_family().name().to_string()),
        ("hashes (k)", f.num_hashes().to_string()),
        ("bits (m)", f.num_bits().to_string()),
        (
            "bytes",
            format!(
                "{} ({} in the file)",
                f.header().payload_len(),
                f.header().total_len()
            ),
        ),
        ("seed", format!("{:#x}", f.seed())),
        ("keys", key_kind(f.key_kind()).to_string()),
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

/// The recorded key kind, with what it means on the command line.
fn key_kind(kind: lesshash::KeyKind) -> &'static str {
    use lesshash::KeyKind;
    match kind {
        KeyKind::Unrecorded => "unrecorded (any --keys)",
        KeyKind::Int64 => "int64 (64-bit integers: --keys int, integer columns)",
        KeyKind::Text => "text (--keys text, text columns)",
        KeyKind::Bytes => "bytes (binary columns; text queries accepted)",
        KeyKind::Mixed => "mixed (integers and text: any --keys)",
    }
}
