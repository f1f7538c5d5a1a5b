//! `lesshash build`: keys from lines to a filter file.

use std::io::{Cursor, Read};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use lesshash::{BloomFilter, Layout, Scheme};

use crate::input::{Chunks, InputArgs, KeySpec, count_lines, for_each_line, strip_eol};
use crate::output::{Output, input_id};

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

    /// Hash seed (decimal or 0x hex); the default is the library's.
    #[arg(long, value_name = "SEED", value_parser = crate::parse_seed)]
    seed: Option<u64>,

    /// Insert threads (0: one per CPU).
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
    let (items, reader): (u64, Box<dyn Read>) = match args.items {
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

    let threads = if args.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        args.threads
    };
    let bar = crate::progress(quiet, args.input.len(), "build");
    let spec = args.input.key_spec();
    let pool = if threads <= 1 {
        None
    } else {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .context("cannot start the insert threads")?;
        Some(pool)
    };
    let (filter, keys, skipped) = insert_all(filter, reader, spec, &bar, pool.as_ref())
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

/// Inserts every key of the input, chunk by chunk: with the batch path, or
/// the parallel one when a pool is given (bit-identical results). With a
/// pool the chunk's lines are also cut into keys in parallel, one piece
/// per thread: on one thread that cut is about a third of the build.
fn insert_all(
    mut filter: BloomFilter,
    reader: Box<dyn Read>,
    spec: KeySpec,
    bar: &indicatif::ProgressBar,
    pool: Option<&rayon::ThreadPool>,
) -> std::io::Result<Built> {
    let mut chunks = Chunks::new(reader);
    let (mut n, mut skipped) = (0u64, 0u64);
    while let Some(chunk) = chunks.next_chunk()? {
        let keys = match pool {
            Some(pool) => {
                let (keys, s) = pool.install(|| keys_in_parallel(chunk, spec));
                skipped += s;
                pool.install(|| filter.par_insert_batch(&keys));
                keys
            }
            None => {
                let mut keys = Vec::with_capacity(chunk.len() / 8);
                skipped += keys_of(chunk, spec, &mut keys);
                filter.insert_batch(&keys);
                keys
            }
        };
        n += keys.len() as u64;
        bar.inc(chunk.len() as u64);
    }
    Ok((filter, n, skipped))
}

/// The keys of a chunk (in order) and its lines without a key, cut on
/// rayon's threads: the chunk is split into one piece per thread at line
/// ends.
fn keys_in_parallel(chunk: &[u8], spec: KeySpec) -> (Vec<&[u8]>, u64) {
    use rayon::prelude::*;
    let threads = rayon::current_num_threads().max(1);
    let mut pieces = Vec::with_capacity(threads);
    let mut rest = chunk;
    for t in (1..threads).rev() {
        // Split after the first line end at or past an even share.
        let at = rest.len() - rest.len() * t / (t + 1);
        match memchr::memchr(b'\n', &rest[at.min(rest.len())..]) {
            Some(i) => {
                let (head, tail) = rest.split_at(at + i + 1);
                pieces.push(head);
                rest = tail;
            }
            None => break,
        }
    }
    pieces.push(rest);
    let cut: Vec<(Vec<&[u8]>, u64)> = pieces
        .into_par_iter()
        .map(|piece| {
            let mut keys = Vec::with_capacity(piece.len() / 8);
            let skipped = keys_of(piece, spec, &mut keys);
            (keys, skipped)
        })
        .collect();
    let skipped = cut.iter().map(|(_, s)| s).sum();
    let mut keys = Vec::with_capacity(cut.iter().map(|(k, _)| k.len()).sum());
    for (k, _) in &cut {
        keys.extend_from_slice(k);
    }
    (keys, skipped)
}
