//! `lesshash merge`: the union of filters.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use lesshash::BloomFilter;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The filters to merge: built with the same layout, scheme, seed,
    /// size and number of hashes.
    #[arg(value_name = "FILTER", required = true, num_args = 2..)]
    inputs: Vec<PathBuf>,

    /// The merged filter file (written atomically).
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
}

pub(crate) fn run(args: Args, quiet: bool) -> Result<ExitCode> {
    let start = Instant::now();
    let load = |p: &PathBuf| {
        BloomFilter::read_file(p).with_context(|| format!("cannot load filter {}", p.display()))
    };
    let first = &args.inputs[0];
    let mut merged = load(first)?;
    for path in &args.inputs[1..] {
        let other = load(path)?;
        merged.union(&other).with_context(|| {
            format!(
                "cannot merge {} into {}: it was built with other parameters",
                path.display(),
                first.display()
            )
        })?;
    }
    merged
        .write_file(&args.output)
        .with_context(|| format!("cannot write {}", args.output.display()))?;
    if !quiet {
        eprintln!(
            "lesshash: merged {} filters in {:.2} s -> {} (estimated {:.0} keys, expected FPR now {:.4}%)",
            args.inputs.len(),
            start.elapsed().as_secs_f64(),
            args.output.display(),
            merged.estimated_len(),
            100.0 * merged.expected_fpr()
        );
    }
    Ok(ExitCode::SUCCESS)
}
