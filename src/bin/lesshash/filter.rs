//! `lesshash filter`: stream lines through a filter.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use lesshash::BloomFilter;

use crate::input::{CHUNK, Chunks, InputArgs, for_each_line, strip_eol};

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The filter file.
    #[arg(value_name = "FILTER")]
    filter: PathBuf,

    #[command(flatten)]
    input: InputArgs,

    /// Print the lines whose key is certainly not in the filter instead.
    #[arg(short = 'v', long)]
    invert: bool,
}

pub(crate) fn run(args: Args, quiet: bool) -> Result<ExitCode> {
    let start = Instant::now();
    let filter = BloomFilter::read_file(&args.filter)
        .with_context(|| format!("cannot load filter {}", args.filter.display()))?;
    let name = args.input.name();
    let mut chunks = Chunks::new(args.input.open()?);
    let spec = args.input.key_spec();
    let bar = crate::progress(quiet, args.input.len(), "filter");
    let mut out = std::io::BufWriter::with_capacity(CHUNK, std::io::stdout().lock());

    let (mut lines, mut printed) = (0u64, 0u64);
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut has_key: Vec<bool> = Vec::new();
    let mut answers: Vec<bool> = Vec::new();
    while let Some(chunk) = chunks
        .next_chunk()
        .with_context(|| format!("cannot read input {name}"))?
    {
        // One batch query per chunk: the keys of the lines that have one.
        spans.clear();
        has_key.clear();
        let mut keys: Vec<&[u8]> = Vec::with_capacity(chunk.len() / 8);
        let base = chunk.as_ptr() as usize;
        for_each_line(chunk, |line| {
            let off = line.as_ptr() as usize - base;
            spans.push((off, off + line.len()));
            match spec.key(strip_eol(line)) {
                Some(k) => {
                    keys.push(k);
                    has_key.push(true);
                }
                None => has_key.push(false),
            }
        });
        answers.resize(keys.len(), false);
        filter.contains_batch(&keys, &mut answers)?;

        // Write runs of consecutive selected lines with one call each.
        let mut answer = answers.iter();
        let mut run: Option<(usize, usize)> = None;
        for (&(s, e), &keyed) in spans.iter().zip(&has_key) {
            let present = keyed && *answer.next().expect("one answer per key");
            if present != args.invert {
                printed += 1;
                run = Some(match run {
                    Some((rs, re)) if re == s => (rs, e),
                    Some((rs, re)) => {
                        out.write_all(&chunk[rs..re])?;
                        (s, e)
                    }
                    None => (s, e),
                });
            }
        }
        if let Some((rs, re)) = run {
            out.write_all(&chunk[rs..re])?;
            // The input's last line may lack its newline; the output's never does.
            if !chunk[rs..re].ends_with(b"\n") {
                out.write_all(b"\n")?;
            }
        }
        lines += spans.len() as u64;
        bar.inc(chunk.len() as u64);
    }
    out.flush()?;
    bar.finish_and_clear();
    crate::summary(
        quiet,
        "filtered",
        lines,
        start.elapsed().as_secs_f64(),
        &format!(
            ", {printed} lines {}",
            if args.invert {
                "absent"
            } else {
                "possibly present"
            }
        ),
    );
    Ok(ExitCode::SUCCESS)
}
