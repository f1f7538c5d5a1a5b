//! `lesshash merge`: the union of filters.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use lesshash::BloomFilter;

use crate::output::{FileId, Output};

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The filters to merge: built with the same layout, scheme, seed,
    /// size and number of hashes.
    #[arg(value_name = "FILTER", required = true, num_args = 2..)]
    inputs: Vec<PathBuf>,

    /// The merged filter file (written atomically; it may be one of the
    /// inputs, which are loaded first). `-`, a pipe or a character device is
    /// written straight through.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
}

impl Args {
    /// Whether the filter goes to stdout (`-o -`).
    pub(crate) fn writes_stdout(&self) -> bool {
        self.output.as_os_str() == "-"
    }
}

pub(crate) fn run(args: Args, quiet: bool) -> Result<ExitCode> {
    let start = Instant::now();
    // `-o a` with input `a` is a union in place: every input is loaded
    // before the rename. Only stdout (`-o - >> a`) is refused.
    let inputs: Vec<_> = args
        .inputs
        .iter()
        .map(|p| (FileId::of_path(p), p.display().to_string()))
        .collect();
    let output = Output::create(&args.output, &inputs, true)?;
    if let Some(first) = crate::spark::open_if_spark(&args.inputs[0])? {
        return merge_spark(&args, first, output, start, quiet);
    }
    let load = |p: &PathBuf| {
        BloomFilter::read_file(p).with_context(|| format!("cannot load filter {}", p.display()))
    };
    let first = &args.inputs[0];
    let mut merged = load(first)?;
    for path in &args.inputs[1..] {
        let other = load(path)?;
        if let Err(e) = merged.union(&other) {
            let options = match &e {
                lesshash::Error::Incompatible { parameter, .. } => options_setting(parameter),
                _ => "parameters",
            };
            return Err(anyhow::Error::new(e).context(format!(
                "cannot merge {} into {}: they were built with different {options} \
                 (`lesshash info` shows each file's)",
                path.display(),
                first.display()
            )));
        }
    }
    let out_name = output.name().to_string();
    output.write_filter(&merged)?;
    if !quiet {
        eprintln!(
            "lesshash: merged {} filters in {:.2} s -> {} (estimated {:.0} keys, expected FPR now {:.4}%)",
            args.inputs.len(),
            start.elapsed().as_secs_f64(),
            out_name,
            merged.estimated_len(),
            100.0 * merged.expected_fpr()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The union of Spark Bloom filter files (the first input is one: so must
/// the others be), written in Spark's format.
fn merge_spark(
    args: &Args,
    mut merged: lesshash::spark::SparkBloomFilter,
    output: Output,
    start: Instant,
    quiet: bool,
) -> Result<ExitCode> {
    let first = &args.inputs[0];
    for path in &args.inputs[1..] {
        let other = crate::spark::open_if_spark(path)?.with_context(|| {
            format!(
                "cannot merge {} into {}: the first is a Spark Bloom filter and this is not",
                path.display(),
                first.display()
            )
        })?;
        merged.union(&other).with_context(|| {
            format!(
                "cannot merge {} into {}: Spark filters merge only with equal version, bits, \
                 hashes and seed (`lesshash info` shows each file's)",
                path.display(),
                first.display()
            )
        })?;
    }
    let out_name = output.name().to_string();
    let what = format!("cannot write {out_name}");
    output.write_with(|w| w.write_all(&merged.to_spark_bytes()).context(what))?;
    if !quiet {
        eprintln!(
            "lesshash: merged {} Spark filters in {:.2} s -> {} (expected FPR now {:.4}%, Spark's expectedFpp)",
            args.inputs.len(),
            start.elapsed().as_secs_f64(),
            out_name,
            100.0 * merged.fill_fpr()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The `build` options that set a filter parameter `lesshash merge` found
/// to differ, named in the user's terms.
fn options_setting(parameter: &str) -> &'static str {
    match parameter {
        "layout" => "--layout",
        "scheme" => "--scheme (or --layout, whose default scheme differs)",
        "seed" => "--seed",
        // m comes from --items and --fpr (and the layout's sizing).
        "bits" => "--items or --fpr",
        // k comes from --fpr (and --items through the sizing).
        "hashes" => "--fpr or --items",
        _ => "parameters",
    }
}
