//! `lesshash`: build Bloom filters from key sets (lines, CSV, Parquet,
//! Arrow IPC) and stream records through them, from the shell.
//!
//! ```text
//! lesshash build  -i users.txt -o users.lhbf --fpr 0.01
//! lesshash filter users.lhbf -i events.tsv --field 2 > known.tsv
//! lesshash build  -i users.parquet --column user_id -o users.lhbf --fpr 0.01
//! lesshash filter users.lhbf -i events.parquet --column user_id -o known.parquet
//! lesshash query  users.lhbf alice bob
//! lesshash merge  a.lhbf b.lhbf -o ab.lhbf
//! lesshash info   users.lhbf
//! lesshash demo
//! lesshash experiment --quick
//! ```
//!
//! Exit status: 0 on success (for `query`: every key possibly present), 1
//! when `query` finds a key absent, 2 on any error (one line on stderr
//! naming the file or option at fault), 130 or 143 when SIGINT or SIGTERM
//! interrupts a write to a file (whose temporary file is then removed), 2
//! with one line naming the file when a mapped filter file shrinks under
//! the map (SIGBUS; docs/format.md). A
//! reader that goes away (`| head`) ends the program quietly, as Unix tools
//! do; a stdout that is closed (`>&-`) or fails (a full disk) is an error.

// `deny`, not `forbid`: three modules allow one `unsafe` each, calls no
// safe crate makes: `sigbus` (the SIGBUS handler of a mapped filter),
// `writeback` (sync_file_range) and `malloc` (mallopt).
#![deny(unsafe_code)]

mod build;
mod columnar;
mod csv;
mod demo;
mod experiment;
mod filter;
mod info;
mod input;
mod malloc;
mod merge;
mod output;
mod parallel;
mod query;
#[cfg(unix)]
mod sigbus;
mod sniff;
mod spark;
mod spool;
mod writeback;

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
    /// Build a filter from keys: one per line (or one field per line), a
    /// CSV field, or a Parquet or Arrow column.
    Build(build::Args),
    /// Print the input lines (CSV records, Parquet or Arrow rows) whose key
    /// is (probably) in the filter, in input order; with --invert, those
    /// whose key is not.
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
    /// The paper's experiment (Kirsch and Mitzenmacher, Sec. 8): measured
    /// false-positive rates of every scheme and layout against the
    /// predicted ones (see docs/paper-reproduction.md).
    Experiment(experiment::Args),
}

impl Command {
    /// Whether the command's results go to stdout (not only its messages).
    fn writes_stdout(&self) -> bool {
        match self {
            Command::Build(a) => a.writes_stdout(),
            Command::Filter(a) => a.writes_stdout(),
            Command::Merge(a) => a.writes_stdout(),
            _ => true,
        }
    }
}

fn main() -> ExitCode {
    malloc::keep_freed_memory();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return argument_error(e),
    };
    let quiet = cli.quiet;
    if cli.command.writes_stdout() && stdout_is_closed() {
        // Rust reopens a closed stdout on /dev/null before `main`, so every
        // write would succeed and the output vanish with exit status 0.
        eprintln!("lesshash: error: stdout is closed: the output would be lost");
        return ExitCode::from(2);
    }
    let result = match cli.command {
        Command::Build(a) => build::run(a, quiet),
        Command::Filter(a) => filter::run(a, quiet),
        Command::Query(a) => query::run(a),
        Command::Merge(a) => merge::run(a, quiet),
        Command::Info(a) => info::run(a),
        Command::Demo(a) => demo::run(a, quiet),
        Command::Experiment(a) => experiment::run(a, quiet),
    };
    match result {
        Ok(code) => code,
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lesshash: error: {}", one_line(&e));
            ExitCode::from(2)
        }
    }
}

/// The error's context chain on one line, outermost first (as `{:#}`), less
/// the causes a message already ends with: `lesshash::Error::Io` prints its
/// source and also returns it as `source()`, so `{:#}` said "No space left
/// on device (os error 28)" twice.
fn one_line(e: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in e.chain() {
        let msg = cause.to_string();
        if line.ends_with(&msg) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&msg);
    }
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An argument error from clap, on one line as the README promises (clap's
/// own has a blank line, tips and a usage line), exit status 2. Help and
/// `--version` are printed as clap prints them.
fn argument_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    // The plain text (no colours), up to the usage line; its remaining
    // lines (a list of missing arguments, a tip) joined with "; ".
    let text = e.render().to_string();
    let body = text.split("\nUsage:").next().unwrap_or(&text);
    let body = body.split("\nFor more information").next().unwrap_or(body);
    let parts: Vec<String> = body
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect();
    let mut line = String::new();
    for (i, part) in parts.iter().enumerate() {
        let part = part.strip_prefix("error: ").unwrap_or(part);
        if i > 0 {
            // A list under "...were not provided:" continues the sentence.
            line.push_str(if line.ends_with(':') { " " } else { "; " });
        }
        line.push_str(part);
    }
    eprintln!("lesshash: error: {line} (see --help)");
    ExitCode::from(2)
}

/// Whether stdout was closed when the program started. std reopens a closed
/// stdout on `/dev/null`, read-write, before `main`; a shell's `> /dev/null`
/// opens it write-only. Linux only (`/proc`); elsewhere `false`.
fn stdout_is_closed() -> bool {
    let Ok(target) = std::fs::read_link("/proc/self/fd/1") else {
        return false;
    };
    if target != std::path::Path::new("/dev/null") {
        return false;
    }
    let Ok(info) = std::fs::read_to_string("/proc/self/fdinfo/1") else {
        return false;
    };
    // `flags:` is octal; the access mode is its low two bits (O_RDWR = 2).
    info.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
        .is_some_and(|flags| flags & 3 == 2)
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
        .map(|name| name.parse().expect("a name from Layout::ALL"))
}

/// `--hash`: any name of [`lesshash::HashFamily::ALL`].
pub(crate) fn hash_family_parser()
-> impl clap::builder::TypedValueParser<Value = lesshash::HashFamily> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(lesshash::HashFamily::ALL.map(|f| f.name()))
        .map(|name| name.parse().expect("a name from HashFamily::ALL"))
}

/// `--scheme`: any name of [`Scheme::ALL`], with [`Scheme::ALIASES`].
pub(crate) fn scheme_parser() -> impl clap::builder::TypedValueParser<Value = Scheme> {
    use clap::builder::{PossibleValue, TypedValueParser};
    let values = Scheme::ALL.map(|s| {
        let aliases = Scheme::ALIASES.iter().filter(move |(_, v)| *v == s);
        PossibleValue::new(s.name()).aliases(aliases.map(|(a, _)| *a))
    });
    clap::builder::PossibleValuesParser::new(values).map(|name| {
        name.parse()
            .expect("a name from Scheme::ALL or Scheme::ALIASES")
    })
}

/// `--fpr`: a rate strictly between 0 and 1.
pub(crate) fn parse_fpr(s: &str) -> Result<f64, String> {
    let p: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if p > 0.0 && p < 1.0 {
        Ok(p)
    } else {
        Err(format!(
            "must be strictly between 0 and 1, got {}",
            fmt_rate(p)
        ))
    }
}

/// A rate for messages ([`lesshash::internals::limits::format_rate`]: scientific
/// notation below 1e-4, not 300 digits).
pub(crate) fn fmt_rate(p: f64) -> String {
    lesshash::internals::limits::format_rate(p)
}

/// `--seed`: decimal, `0x` hexadecimal, or `random` (a secret seed from
/// the operating system, `lesshash::random_seed`).
pub(crate) fn parse_seed(s: &str) -> Result<u64, String> {
    if s == "random" {
        return lesshash::random_seed().map_err(|e| e.to_string());
    }
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    }
    .map_err(|e| format!("{e}"))
}

/// `--delimiter`: one byte (a single ASCII character, `\t` or `tab`,
/// `comma`, `semicolon`, `pipe`, `space`).
pub(crate) fn parse_delimiter(s: &str) -> Result<u8, String> {
    match s {
        "\\t" | "tab" => Ok(b'\t'),
        "comma" => Ok(b','),
        "semicolon" => Ok(b';'),
        "pipe" => Ok(b'|'),
        "space" => Ok(b' '),
        _ if s.len() == 1 => Ok(s.as_bytes()[0]),
        _ => Err(format!(
            "must be one byte (a single ASCII character, or \\t, tab, comma, semicolon, pipe, \
             space), got {s:?}"
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

/// A progress bar counting `total` steps, hidden as [`progress`]'s.
pub(crate) fn progress_count(quiet: bool, total: u64, what: &str) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total).with_style(
        ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} eta {eta} {msg}")
            .expect("a valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(what.to_string());
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
