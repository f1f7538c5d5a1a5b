//! `lesshash`: build Bloom filters from line-oriented key sets and stream
//! records through them, from the shell.
//!
//! ```text
//! lesshash build  -i users.txt -o users.lhbf --fpr 0.01
//! lesshash filter users.lhbf -i events.tsv --field 2 > known.tsv
//! lesshash query  users.lhbf alice bob
//! lesshash merge  a.lhbf b.lhbf -o ab.lhbf
//! lesshash info   users.lhbf
//! lesshash demo
//! ```
//!
//! Exit status: 0 on success (for `query`: every key possibly present), 1
//! when `query` finds a key absent, 2 on any error (one line on stderr
//! naming the file or option at fault). A closed stdout (`| head`) ends the
//! program quietly, as Unix tools do.

#![forbid(unsafe_code)]

mod build;
mod demo;
mod filter;
mod info;
mod input;
mod merge;
mod query;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use lesshash::{Layout, Scheme};

/// Bloom filters that hash once: build, query and stream records through
/// lesshash filters.
#[derive(Parser, Debug)]
#[command(name = "lesshash", version, about, max_term_width = 100)]
struct Cli {
    /// No progress bars and no summary line on stderr.
    #[arg(short, long, global = true)]
    quiet: bool,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Build a filter from keys, one per line (or one field per line).
    Build(build::Args),
    /// Print the input lines whose key is (probably) in the filter, in
    /// input order; with --invert, the lines whose key is not.
    Filter(filter::Args),
    /// Print each key with yes/no; exit status 0 if all are possibly
    /// present, 1 otherwise.
    Query(query::Args),
    /// Union of filters built with the same parameters.
    Merge(merge::Args),
    /// Parameters and state of a filter file.
    Info(info::Args),
    /// A self-contained showcase: builds filters of every layout and scheme
    /// on generated keys and prints throughput and measured against
    /// predicted false-positive rates.
    Demo(demo::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let quiet = cli.quiet;
    let result = match cli.command {
        Command::Build(a) => build::run(a, quiet),
        Command::Filter(a) => filter::run(a, quiet),
        Command::Query(a) => query::run(a),
        Command::Merge(a) => merge::run(a, quiet),
        Command::Info(a) => info::run(a),
        Command::Demo(a) => demo::run(a, quiet),
    };
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            // `{:#}`: the context chain on one line, outermost first.
            eprintln!("lesshash: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Whether the error is a write to a closed pipe (the reader went away).
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || c.downcast_ref::<lesshash::Error>().is_some_and(|l| {
                matches!(l, lesshash::Error::Io { source, .. }
                    if source.kind() == std::io::ErrorKind::BrokenPipe)
            })
    })
}

/// `--layout`: any name of [`Layout::ALL`], so layouts added to the library
/// appear here (in `--help` and in the error for an unknown name) without
/// edits.
pub(crate) fn layout_parser() -> impl clap::builder::TypedValueParser<Value = Layout> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Layout::ALL.map(|l| l.name()))
        .map(|name| Layout::from_name(&name).expect("a name from Layout::ALL"))
}

/// `--scheme`: any name of [`Scheme::ALL`] (plus the aliases
/// [`Scheme::from_name`] accepts).
pub(crate) fn scheme_parser() -> impl clap::builder::TypedValueParser<Value = Scheme> {
    use clap::builder::{PossibleValue, TypedValueParser};
    let values = Scheme::ALL.map(|s| {
        let v = PossibleValue::new(s.name());
        match s {
            Scheme::Independent => v.alias("standard"),
            Scheme::EnhancedDoubleHashing(lesshash::Enhancement::Cube) => v.alias("enhanced"),
            _ => v,
        }
    });
    clap::builder::PossibleValuesParser::new(values)
        .map(|name| Scheme::from_name(&name).expect("a name from Scheme::ALL"))
}

/// `--fpr`: a rate strictly between 0 and 1.
pub(crate) fn parse_fpr(s: &str) -> Result<f64, String> {
    let p: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if p > 0.0 && p < 1.0 {
        Ok(p)
    } else {
        Err(format!("must be strictly between 0 and 1, got {p}"))
    }
}

/// `--seed`: decimal or `0x` hexadecimal.
pub(crate) fn parse_seed(s: &str) -> Result<u64, String> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    }
    .map_err(|e| format!("{e}"))
}

/// `--delimiter`: one byte (a single ASCII character, or `\t`).
pub(crate) fn parse_delimiter(s: &str) -> Result<u8, String> {
    match s {
        "\\t" | "tab" => Ok(b'\t'),
        _ if s.len() == 1 => Ok(s.as_bytes()[0]),
        _ => Err(format!(
            "must be one byte (a single ASCII character, or \\t), got {s:?}"
        )),
    }
}

/// A progress bar on stderr, or a hidden one when stderr is not a
/// terminal or `--quiet` is given. `total`: bytes, when known.
pub(crate) fn progress(quiet: bool, total: Option<u64>, what: &str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = match total {
        Some(t) => ProgressBar::new(t).with_style(
            ProgressStyle::with_template(
                "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{msg} {spinner} {bytes} {bytes_per_sec}")
                .expect("a valid template"),
        ),
    };
    bar.set_message(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// The summary line on stderr at the end of long work.
pub(crate) fn summary(quiet: bool, what: &str, keys: u64, secs: f64, tail: &str) {
    if !quiet {
        eprintln!(
            "lesshash: {what} {keys} keys in {secs:.2} s ({:.2} M keys/s){tail}",
            keys as f64 / secs.max(1e-9) / 1e6
        );
    }
}
