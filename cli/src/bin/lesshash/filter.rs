//! `lesshash filter`: stream lines through a filter.

use std::io::{BufWriter, Read, Write};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use lesshash::FilterView;
use rayon::prelude::*;

use crate::input::{
    CHUNK, Chunks, InputArgs, KeySpec, for_each_line, recycle, strip_eol, with_keys,
};
use crate::output::{FilterArg, check_not_stdout, input_id};
use crate::parallel::Blocks;

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

    /// Threads that cut the lines and look up their keys (0: one per CPU).
    /// With more than one, the input is read on a thread of its own; the
    /// output is the same, in input order, for any count.
    #[arg(long, short = 't', value_name = "T", default_value_t = 0)]
    threads: usize,
}

pub(crate) fn run(args: Args, quiet: bool) -> Result<ExitCode> {
    let start = Instant::now();
    // `filter F -i x >> x` would read its own output forever; `>> F` would
    // append lines to the filter file.
    check_not_stdout(input_id(args.input.path()), &args.input.name())?;
    if args.filter.is_stdin() && args.input.path().is_none() {
        anyhow::bail!("the filter and the input cannot both be stdin: give the input with -i FILE");
    }
    let opened = args.filter.open()?;
    // A stream of keys probes pages all over the filter: read it ahead.
    opened.will_need();
    let filter = opened.view();
    let name = args.input.name();
    let reader = args.input.open()?;
    let spec = args.input.key_spec();
    let threads = crate::parallel::thread_count(args.threads);
    let pool = crate::parallel::pool(threads, "filter")?;
    let bar = crate::progress(quiet, args.input.len(), "filter");
    let job = Job {
        filter: &filter,
        spec,
        invert: args.invert,
        name: &name,
        bar: &bar,
    };
    let (lines, printed, keyed) = match &pool {
        None => job.sequential(reader)?,
        Some(pool) => job.parallel(reader, pool, threads)?,
    };
    bar.finish_and_clear();
    // Not one line had the field: the field or the delimiter is wrong, so
    // say it, also under -q (the output alone looks like a valid result).
    if let Some(field) = args.input.field
        && lines > 0
        && keyed == 0
    {
        eprintln!(
            "lesshash: warning: none of the {lines} lines of {name} has field {field} \
             (delimiter {:?}): every line was taken as absent; check --field and -d",
            char::from(args.input.delimiter)
        );
    }
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

/// What every chunk (or piece of a block) is filtered with.
struct Job<'a> {
    filter: &'a FilterView<'a>,
    spec: KeySpec,
    invert: bool,
    /// The input's name, for read errors.
    name: &'a str,
    bar: &'a indicatif::ProgressBar,
}

impl Job<'_> {
    /// One thread: chunk after chunk on the calling thread; the lines read
    /// and printed.
    fn sequential(&self, reader: Box<dyn Read + Send>) -> Result<(u64, u64, u64)> {
        let mut chunks = Chunks::new(reader);
        let mut out = BufWriter::with_capacity(CHUNK, std::io::stdout().lock());
        let (mut lines, mut printed) = (0u64, 0u64);
        let mut scratch = Scratch::default();
        while let Some(chunk) = chunks
            .next_chunk()
            .with_context(|| format!("cannot read input {}", self.name))?
        {
            let (l, p) = self.select(chunk, &mut scratch, &mut out)?;
            lines += l;
            printed += p;
            self.bar.inc(chunk.len() as u64);
        }
        out.flush().context(STDOUT)?;
        Ok((lines, printed, scratch.keyed))
    }

    /// Several threads: the input is read in blocks on a thread of its
    /// own; each block is cut into pieces at line ends, and the pool
    /// filters the pieces, each into its own buffer, while the previous
    /// block's buffers are written out, in input order.
    fn parallel(
        &self,
        reader: Box<dyn Read + Send>,
        pool: &rayon::ThreadPool,
        threads: usize,
    ) -> Result<(u64, u64, u64)> {
        let blocks = Blocks::spawn(reader, threads)?;
        let mut out = BufWriter::with_capacity(CHUNK, std::io::stdout());
        let (mut lines, mut printed) = (0u64, 0u64);
        // The pieces of the block being filtered, and the first `ready` of
        // `done`: the previous block's, to write; their buffers are reused.
        let (mut work, mut done): (Vec<Piece>, Vec<Piece>) = (Vec::new(), Vec::new());
        let mut ready = 0;
        loop {
            let block = match blocks.next_block() {
                Ok(Some(block)) => block,
                Ok(None) => break,
                Err(e) => {
                    // As the one-thread path: what was filtered is written.
                    let _ = write_pieces(&done[..ready], &mut out).and_then(|()| out.flush());
                    return Err(e).with_context(|| format!("cannot read input {}", self.name));
                }
            };
            let pieces = blocks.pieces(&block);
            if work.len() < pieces.len() {
                work.resize_with(pieces.len(), Piece::default);
            }
            let work_now = &mut work[..pieces.len()];
            let (wrote, filtered) = pool.install(|| {
                rayon::join(
                    || write_pieces(&done[..ready], &mut out),
                    || {
                        pieces
                            .par_iter()
                            .zip(work_now.par_iter_mut())
                            .try_for_each(|(piece, w)| w.filter(self, piece))
                    },
                )
            });
            wrote.context(STDOUT)?;
            filtered?;
            for w in &work[..pieces.len()] {
                lines += w.lines;
                printed += w.printed;
            }
            ready = pieces.len();
            std::mem::swap(&mut work, &mut done);
            self.bar.inc(block.len() as u64);
            blocks.give_back(block);
        }
        write_pieces(&done[..ready], &mut out).context(STDOUT)?;
        out.flush().context(STDOUT)?;
        // Every piece's scratch counts the keyed lines it filtered, over
        // every block it served.
        let keyed = work.iter().chain(&done).map(|p| p.scratch.keyed).sum();
        Ok((lines, printed, keyed))
    }

    /// Filters the lines of `chunk` (whole lines) into `out`: one batch
    /// query for the chunk's keys; the lines read and printed.
    fn select(
        &self,
        chunk: &[u8],
        scratch: &mut Scratch,
        out: &mut impl Write,
    ) -> Result<(u64, u64)> {
        let base = chunk.as_ptr() as usize;
        let mut keys = recycle(std::mem::take(&mut scratch.keys));
        let mut sel = Selection::new(self.invert);
        let Scratch {
            starts,
            has_key,
            answers,
            ..
        } = scratch;
        let lines = if self.spec.is_whole_line() {
            // Fast path: the key is the line, so line i spans from key i's
            // start to key i+1's start; one vector per chunk.
            for_each_line(chunk, |line| keys.push(strip_eol(line)));
            answers.resize(keys.len(), false);
            with_keys!(self.spec.encode(&keys)?, |k| self
                .filter
                .contains_batch(k, answers))?;
            for (key, &present) in keys.iter().zip(answers.iter()) {
                sel.line(key.as_ptr() as usize - base, present, chunk, out)
                    .context(STDOUT)?;
            }
            keys.len() as u64
        } else {
            // One batch query per chunk over the lines that have a key.
            starts.clear();
            has_key.clear();
            for_each_line(chunk, |line| {
                starts.push(line.as_ptr() as usize - base);
                match self.spec.key(strip_eol(line)) {
                    Some(k) => {
                        keys.push(k);
                        has_key.push(true);
                    }
                    None => has_key.push(false),
                }
            });
            answers.resize(keys.len(), false);
            with_keys!(self.spec.encode(&keys)?, |k| self
                .filter
                .contains_batch(k, answers))?;
            let mut answer = answers.iter();
            for (&start, &keyed) in starts.iter().zip(has_key.iter()) {
                let present = keyed && *answer.next().expect("one answer per key");
                sel.line(start, present, chunk, out).context(STDOUT)?;
            }
            starts.len() as u64
        };
        let printed = sel.finish(chunk, out).context(STDOUT)?;
        scratch.keyed += keys.len() as u64;
        scratch.keys = recycle(keys);
        Ok((lines, printed))
    }
}

/// Reused across chunks: line starts (field mode), which lines have a key
/// (field mode), the answers, and the keys' allocation.
#[derive(Default)]
struct Scratch {
    starts: Vec<usize>,
    has_key: Vec<bool>,
    answers: Vec<bool>,
    keys: Vec<&'static [u8]>,
    /// The lines with a key so far (field mode: a count of 0 over many
    /// lines means the field or the delimiter is wrong).
    keyed: u64,
}

/// One piece of a block on the parallel path: its selected lines, and
/// what they were counted and found with.
#[derive(Default)]
struct Piece {
    scratch: Scratch,
    out: Vec<u8>,
    lines: u64,
    printed: u64,
}

impl Piece {
    fn filter(&mut self, job: &Job<'_>, piece: &[u8]) -> Result<()> {
        self.out.clear();
        (self.lines, self.printed) = job.select(piece, &mut self.scratch, &mut self.out)?;
        Ok(())
    }
}

/// Writes the pieces' selected lines, in order.
fn write_pieces(pieces: &[Piece], out: &mut impl Write) -> std::io::Result<()> {
    pieces.iter().try_for_each(|p| out.write_all(&p.out))
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
