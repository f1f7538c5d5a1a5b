//! `lesshash build`: keys from lines to a filter file.

use std::io::{Cursor, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use lesshash::{BloomFilter, Layout, Scheme};

use crate::input::{Chunks, InputArgs, KeySpec, count_lines, for_each_line, recycle, strip_eol};
use crate::output::{Output, input_id};
use crate::parallel::Blocks;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    input: InputArgs,

    /// The filter file to write (atomically: a temporary file in the same
    /// directory, synced, then renamed; a symlink's target is replaced).
    /// `-`, a pipe or a character device is written straight through.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,

    /// Target false-positive rate after --items keys.
    #[arg(long, value_name = "P", value_parser = crate::parse_fpr)]
    fpr: f64,

    /// Number of distinct keys the filter is sized for. Absent: the lines
    /// are counted first (two passes over a file; stdin is read into memory
    /// first). Duplicate lines count, so the filter may be larger than
    /// needed, never smaller.
    #[arg(long, value_name = "N")]
    items: Option<u64>,

    /// Filter layout (default: the library's, `blocked`: one cache line
    /// per key; see docs/benchmarks.md, "Defaults").
    #[arg(long, value_name = "LAYOUT", default_value = "blocked", value_parser = crate::layout_parser())]
    layout: Layout,

    /// Index scheme (`enhanced` is `enhanced-cube`; default: the layout's,
    /// `double` for the blocked layouts, `enhanced-cube` for classic and
    /// partitioned).
    #[arg(long, value_name = "SCHEME", value_parser = crate::scheme_parser())]
    scheme: Option<Scheme>,

    /// Hash seed: decimal, 0x hex, or `random` (a secret seed drawn from the
    /// OS, stored in the file; use it when others choose the keys). The
    /// default is the library's public one.
    #[arg(long, value_name = "SEED", value_parser = crate::parse_seed)]
    seed: Option<u64>,

    /// Insert threads (0: one per CPU): they cut the lines, hash the keys
    /// and insert them; with more than one, the input is read on a thread
    /// of its own. The filter is the same for any count.
    #[arg(long, short = 't', value_name = "T", default_value_t = 0)]
    threads: usize,
}

impl Args {
    /// Whether the filter goes to stdout (`-o -`).
    pub(crate) fn writes_stdout(&self) -> bool {
        self.output.as_os_str() == "-"
    }
}

pub(crate) fn run(args: Args, quiet: bool) -> Result<ExitCode> {
    let start = Instant::now();
    let name = args.input.name();
    // Before any work: refuses `-i x -o x` (the keys would be replaced by
    // the filter) and an unwritable output.
    let output = Output::create(
        &args.output,
        &[(input_id(args.input.path()), name.clone())],
        false,
    )?;
    // Pass one when --items is absent: count lines (a file is read twice,
    // stdin is buffered in memory).
    let (items, reader): (u64, Box<dyn Read + Send>) = match args.items {
        Some(n) => (n, args.input.open()?),
        None if args.input.path().is_some() => {
            let n = count_lines(args.input.open()?)
                .with_context(|| format!("cannot read input {name}"))?;
            (n, args.input.open()?)
        }
        None => {
            let mut all = Vec::new();
            args.input
                .open()?
                .read_to_end(&mut all)
                .with_context(|| format!("cannot read input {name}"))?;
            let n = count_lines(&all[..])?;
            (n, Box::new(Cursor::new(all)))
        }
    };

    let mut builder = BloomFilter::builder()
        .expected_items(items)
        .fpr(args.fpr)
        .layout(args.layout);
    if let Some(scheme) = args.scheme {
        builder = builder.scheme(scheme);
    }
    if let Some(seed) = args.seed {
        builder = builder.seed(seed);
    }
    let filter = builder.build().map_err(build_error)?;

    let threads = crate::parallel::thread_count(args.threads);
    let bar = crate::progress(quiet, args.input.len(), "build");
    let spec = args.input.key_spec();
    let pool = crate::parallel::pool(threads, "insert")?;
    let (filter, keys, skipped) = match &pool {
        None => insert_all(filter, reader, spec, &bar),
        Some(pool) => insert_parallel(filter, reader, spec, &bar, pool, threads)?,
    }
    .with_context(|| format!("cannot read input {name}"))?;
    bar.finish_and_clear();

    let out_name = output.name().to_string();
    output.write_filter(&filter)?;

    let mut tail = format!(
        " -> {} ({} bytes, {}, {}, k = {}, expected FPR now {:.4}%)",
        out_name,
        filter.serialized_len(),
        filter.layout().name(),
        filter.scheme().name(),
        filter.num_hashes(),
        100.0 * filter.expected_fpr()
    );
    if skipped > 0 {
        tail += &format!(
            "; {skipped} lines without field {} skipped",
            args.input.field.unwrap_or(1)
        );
    }
    crate::summary(quiet, "built", keys, start.elapsed().as_secs_f64(), &tail);
    if keys > items && !quiet {
        eprintln!(
            "lesshash: warning: inserted {keys} keys into a filter sized for --items {items}: \
             the false-positive rate is above the target"
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The builder's error with what it means for the user: an allocation
/// failure is not a bad parameter. (Rates in the library's messages are in
/// scientific notation when tiny: `lesshash::internals::limits::format_rate`.)
fn build_error(e: lesshash::Error) -> anyhow::Error {
    match e {
        lesshash::Error::Allocation { .. } => {
            anyhow::Error::new(e).context("not enough memory for the filter")
        }
        e => anyhow::Error::new(e).context("invalid filter parameters"),
    }
}

/// Cuts a chunk's keys into `keys`; returns the lines without a key.
fn keys_of<'a>(chunk: &'a [u8], spec: KeySpec, keys: &mut Vec<&'a [u8]>) -> u64 {
    let mut skipped = 0;
    for_each_line(chunk, |line| match spec.key(strip_eol(line)) {
        Some(k) => keys.push(k),
        None => skipped += 1,
    });
    skipped
}

type Built = (BloomFilter, u64, u64);

/// Inserts every key of the input, chunk by chunk, on the calling thread
/// (`--threads 1`).
fn insert_all(
    mut filter: BloomFilter,
    reader: Box<dyn Read + Send>,
    spec: KeySpec,
    bar: &indicatif::ProgressBar,
) -> std::io::Result<Built> {
    let mut chunks = Chunks::new(reader);
    let (mut n, mut skipped) = (0u64, 0u64);
    while let Some(chunk) = chunks.next_chunk()? {
        let mut keys = Vec::with_capacity(chunk.len() / 8);
        skipped += keys_of(chunk, spec, &mut keys);
        filter.insert_batch(&keys);
        n += keys.len() as u64;
        bar.inc(chunk.len() as u64);
    }
    Ok((filter, n, skipped))
}

/// Inserts every key of the input on the pool, bit-identical to
/// [`insert_all`] (and the same insert count in the header). The input is
/// read in blocks on a thread of its own; each block is cut into pieces at
/// line ends, whose keys are cut and then hashed in parallel straight into
/// one array of hashes, which the library's parallel insert takes (no
/// serial pass over the keys: on one thread the cut alone is about a
/// third of the build). The `Independent` scheme, which needs the keys'
/// bytes, inserts the keys instead. The outer error: the pool's or the
/// reader thread's start; the inner one: the input's.
fn insert_parallel(
    mut filter: BloomFilter,
    reader: Box<dyn Read + Send>,
    spec: KeySpec,
    bar: &indicatif::ProgressBar,
    pool: &rayon::ThreadPool,
    threads: usize,
) -> Result<std::io::Result<Built>> {
    use rayon::prelude::*;
    let blocks = Blocks::spawn(reader, threads)?;
    let (mut n, mut skipped) = (0u64, 0u64);
    let seed = filter.seed();
    let by_hash = filter.prehashed().is_ok();
    // Reused across blocks: the pieces' key vectors, the block's hashes.
    let mut spare: Vec<Vec<&'static [u8]>> = Vec::new();
    let mut hashes: Vec<u128> = Vec::new();
    loop {
        let block = match blocks.next_block() {
            Ok(Some(block)) => block,
            Ok(None) => break,
            Err(e) => return Ok(Err(e)),
        };
        let pieces = blocks.pieces(&block);
        let mut cuts: Vec<Cut<'_>> = pieces
            .iter()
            .map(|_| Cut {
                keys: recycle(spare.pop().unwrap_or_default()),
                skipped: 0,
            })
            .collect();
        pool.install(|| {
            pieces
                .par_iter()
                .zip(&mut cuts)
                .for_each(|(&piece, cut)| cut.skipped = keys_of(piece, spec, &mut cut.keys));
            if by_hash {
                // Each piece's hashes go to its own part of the array.
                hashes.resize(cuts.iter().map(|c| c.keys.len()).sum(), 0);
                let mut parts = Vec::with_capacity(cuts.len());
                let mut rest = &mut hashes[..];
                for cut in &cuts {
                    let (part, tail) = rest.split_at_mut(cut.keys.len());
                    parts.push(part);
                    rest = tail;
                }
                cuts.par_iter().zip(parts).for_each(|(cut, part)| {
                    lesshash::hash_batch(&cut.keys, seed, part).expect("a part per piece's keys");
                });
                filter
                    .prehashed_mut()
                    .expect("a two-hash scheme")
                    .par_insert_batch(&hashes);
            } else {
                let keys: Vec<&[u8]> = cuts.iter().flat_map(|c| &c.keys).copied().collect();
                filter.par_insert_batch(&keys);
            }
        });
        for cut in cuts {
            n += cut.keys.len() as u64;
            skipped += cut.skipped;
            spare.push(recycle(cut.keys));
        }
        bar.inc(block.len() as u64);
        blocks.give_back(block);
    }
    Ok(Ok((filter, n, skipped)))
}

/// A piece's keys, in order, and its lines without one.
struct Cut<'a> {
    keys: Vec<&'a [u8]>,
    skipped: u64,
}
