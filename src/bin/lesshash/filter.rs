//! `lesshash filter`: stream lines through a filter.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::input::{CHUNK, Chunks, InputArgs, for_each_line, strip_eol};
use crate::output::{FilterArg, check_not_stdout, input_id};

/// The context of a failed write of the selected lines.
const STDOUT: &str = "cannot write to stdout";

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    filter: FilterArg,

    #[command(flatten)]
    input: InputArgs,

    /// Print the lines whose key is certainly not in the filter instead.
    #[arg(short = 'v', long)]
    invert: bool,
}

pub(crate) fn run(args: Args, quiet: bool) -> Result<ExitCode> {
    let start = Instant::now();
    // `filter F -i x >> x` would read its own output forever; `>> F` would
    // append lines to the filter file.
    check_not_stdout(input_id(args.input.path()), &args.input.name())?;
    let opened = args.filter.open()?;
    // A stream of keys probes pages all over the filter: read it ahead.
    opened.will_need();
    let filter = opened.view();
    let name = args.input.name();
    let mut chunks = Chunks::new(args.input.open()?);
    let spec = args.input.key_spec();
    let bar = crate::progress(quiet, args.input.len(), "filter");
    let mut out = std::io::BufWriter::with_capacity(CHUNK, std::io::stdout().lock());

    let (mut lines, mut printed) = (0u64, 0u64);
    // Reused across chunks: line starts (field mode), which lines have a
    // key (field mode), the answers, and the keys' allocation.
    let mut starts: Vec<usize> = Vec::new();
    let mut has_key: Vec<bool> = Vec::new();
    let mut answers: Vec<bool> = Vec::new();
    let mut key_buf: Vec<&[u8]> = Vec::new();
    while let Some(chunk) = chunks
        .next_chunk()
        .with_context(|| format!("cannot read input {name}"))?
    {
        let base = chunk.as_ptr() as usize;
        let mut keys = recycle(std::mem::take(&mut key_buf));
        let mut sel = Selection::new(args.invert);
        if spec.is_whole_line() {
            // Fast path: the key is the line, so line i spans from key i's
            // start to key i+1's start; one vector per chunk.
            for_each_line(chunk, |line| keys.push(strip_eol(line)));
            answers.resize(keys.len(), false);
            filter.contains_batch(&keys, &mut answers)?;
            for (key, &present) in keys.iter().zip(&answers) {
                sel.line(key.as_ptr() as usize - base, present, chunk, &mut out)
                    .context(STDOUT)?;
            }
            lines += keys.len() as u64;
        } else {
            // One batch query per chunk over the lines that have a key.
            starts.clear();
            has_key.clear();
            for_each_line(chunk, |line| {
                starts.push(line.as_ptr() as usize - base);
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
            let mut answer = answers.iter();
            for (&start, &keyed) in starts.iter().zip(&has_key) {
                let present = keyed && *answer.next().expect("one answer per key");
                sel.line(start, present, chunk, &mut out).context(STDOUT)?;
            }
            lines += starts.len() as u64;
        }
        printed += sel.finish(chunk, &mut out).context(STDOUT)?;
        key_buf = recycle(keys);
        bar.inc(chunk.len() as u64);
    }
    out.flush().context(STDOUT)?;
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

/// Which lines of a chunk are printed: runs of consecutive selected lines
/// are written with one `write_all` each.
struct Selection {
    invert: bool,
    /// The start of the current run of selected lines.
    run: Option<usize>,
    printed: u64,
}

impl Selection {
    fn new(invert: bool) -> Self {
        Self {
            invert,
            run: None,
            printed: 0,
        }
    }

    /// The line starting at `start` (the lines of a chunk in order, each
    /// ending where the next starts): printed if `present != invert`.
    #[inline]
    fn line(
        &mut self,
        start: usize,
        present: bool,
        chunk: &[u8],
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        if present != self.invert {
            self.printed += 1;
            self.run.get_or_insert(start);
        } else if let Some(run) = self.run.take() {
            out.write_all(&chunk[run..start])?;
        }
        Ok(())
    }

    /// Writes the last run (up to the chunk's end); the number of lines
    /// printed.
    fn finish(self, chunk: &[u8], out: &mut impl Write) -> std::io::Result<u64> {
        if let Some(run) = self.run {
            out.write_all(&chunk[run..])?;
            // The input's last line may lack its newline; the output's never does.
            if !chunk.ends_with(b"\n") {
                out.write_all(b"\n")?;
            }
        }
        Ok(self.printed)
    }
}

/// An empty vector reusing `v`'s allocation for borrows of another chunk
/// (`collect` of a consumed `Vec` into one of the same layout reuses it in
/// place).
fn recycle<'a>(mut v: Vec<&[u8]>) -> Vec<&'a [u8]> {
    v.clear();
    v.into_iter()
        .map(|_| -> &'a [u8] { unreachable!() })
        .collect()
}
