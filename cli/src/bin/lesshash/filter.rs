//! `lesshash filter`: stream lines, CSV records or Parquet and Arrow rows
//! through a filter (a lesshash filter, or a Spark Bloom filter file).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use anyhow::{Context, Result};
use arrow_array::{Array, BooleanArray};
use lesshash::spark::SparkBloomFilter;
use lesshash::{FilterView, KeyKind};
use rayon::prelude::*;

use crate::columnar::{self, Feed, OutFormat, Sink, select_rows, selection};
use crate::input::{
    Chunks, Encoded, Format, InputArgs, KeySpec, at_line, check_kinds, encode_keys, for_each_line,
    recycle, strip_eol, with_encoded,
};
use crate::output::{FileId, FilterArg, Output, input_id};
use crate::parallel::Blocks;

#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(flatten)]
    filter: FilterArg,

    #[command(flatten)]
    input: InputArgs,

    /// Print the lines (CSV records, rows) whose key is certainly not in
    /// the filter instead: a line without the field, a row whose key is
    /// null, are printed.
    #[arg(short = 'v', long)]
    invert: bool,

    /// Write the selected records to OUT (atomically, as `build -o`)
    /// instead of stdout. Parquet and Arrow input is written as the input's
    /// format, or as the format OUT's name gives: `.parquet`, `.arrow` or
    /// `.feather` (an Arrow IPC file), `.arrows` (an Arrow IPC stream).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,

    /// Query even when the filter records keys of another kind than the
    /// input's (integers against text or bytes), which answer "absent"
    /// unless the bytes really are the same.
    #[arg(long)]
    any_keys: bool,

    /// Threads that cut the lines and look up their keys (0: one per CPU).
    /// With more than one, the input is read on a thread of its own; the
    /// output is the same, in input order, for any count.
    #[arg(long, short = 't', value_name = "T", default_value_t = 0)]
    threads: usize,
}

impl Args {
    /// Whether the selected lines go to stdout (no `-o`, or `-o -`).
    pub(crate) fn writes_stdout(&self) -> bool {
        self.output.as_ref().is_none_or(|o| o.as_os_str() == "-")
    }
}

pub(crate) fn run(mut args: Args, quiet: bool) -> Result<ExitCode> {
    let start = Instant::now();
    if args.filter.is_stdin() && args.input.path().is_none() {
        anyhow::bail!("the filter and the input cannot both be stdin: give the input with -i FILE");
    }
    // `filter F -i x >> x` would read its own output forever; `>> F` would
    // append lines to the filter file; `-o F` would replace the filter.
    let name = args.input.name();
    let filter_name = args.filter.filter.display().to_string();
    let output = Output::create(
        args.output.as_deref().unwrap_or(Path::new("-")),
        &[
            (input_id(args.input.path()), name.clone()),
            (
                (!args.filter.is_stdin())
                    .then(|| FileId::of_path(&args.filter.filter))
                    .flatten(),
                filter_name.clone(),
            ),
        ],
        false,
    )?;
    // A Spark filter file is read whole; a lesshash one mapped.
    let spark = crate::spark::open_if_spark(&args.filter.filter)?;
    let opened = match spark {
        Some(_) => None,
        None => Some(args.filter.open()?),
    };
    // A stream of keys probes pages all over the filter: read it ahead.
    if let Some(opened) = &opened {
        opened.will_need();
    }
    // After the filter is open: on stdin, this waits for the first read.
    let format = args.input.detect()?;
    let filter = match (&spark, &opened) {
        (Some(spark), _) => AnyFilter::Spark(spark),
        (None, Some(opened)) if args.any_keys => {
            AnyFilter::Lesshash(Box::new(opened.view().with_key_kind(KeyKind::Mixed)))
        }
        (None, Some(opened)) => AnyFilter::Lesshash(Box::new(opened.view())),
        (None, None) => unreachable!("a lesshash filter is opened when the file is not Spark's"),
    };
    let threads = crate::parallel::thread_count(args.threads);
    let pool = crate::parallel::pool(threads, "filter")?;
    if format.is_columnar() {
        return columnar(
            &args,
            format,
            &filter,
            filter_name,
            output,
            pool.as_ref(),
            quiet,
            start,
        );
    }
    if let Some(out) = args.output.as_deref().and_then(OutFormat::of_name) {
        anyhow::bail!(
            "{name} is read as {}, which filter writes as it reads it: -o {} would hold {} \
             in a file named as {}",
            format.name(),
            output.name(),
            format.name(),
            out.name()
        );
    }
    let keys = args.input.keys();
    check_kinds(
        &filter_name,
        filter.key_kind(),
        keys.kind(),
        &format!("the keys of {name} (--keys {}) are", keys.kind_arg()),
        keys_hint(filter.key_kind()),
    )?;
    if format == Format::Csv {
        return csv(&args, &filter, output, pool.as_ref(), quiet, start);
    }
    let out_context = match output.is_stdout() {
        true => "cannot write to stdout".to_string(),
        false => format!("cannot write {}", output.name()),
    };
    let reader = args.input.open()?;
    let spec = args.input.key_spec();
    let bar = crate::progress(quiet, args.input.len(), "filter");
    let job = Job {
        filter: &filter,
        spec,
        invert: args.invert,
        name: &name,
        bar: &bar,
        out_context: &out_context,
    };
    let (lines, printed, keyed) = output.write_with(|out| match &pool {
        None => job.sequential(reader, out),
        Some(pool) => job.parallel(reader, pool, threads, out),
    })?;
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
            char::from(args.input.line_delimiter())
        );
    }
    summary(quiet, keyed, lines, printed, "lines", args.invert, start);
    Ok(ExitCode::SUCCESS)
}

/// The summary line: the keys looked up, the records read when some had
/// no key (a field beyond their end), and the records written.
fn summary(
    quiet: bool,
    keys: u64,
    read: u64,
    written: u64,
    what: &str,
    invert: bool,
    start: Instant,
) {
    let without = match read - keys.min(read) {
        0 => String::new(),
        n => format!(" of {read} {what} ({n} without a key)"),
    };
    crate::summary(
        quiet,
        "filtered",
        keys,
        start.elapsed().as_secs_f64(),
        &format!(
            "{without}, {written} {what} {}",
            if invert { "absent" } else { "possibly present" }
        ),
    );
}

/// What to say when a filter of kind `filter` refuses `--keys`.
fn keys_hint(filter: KeyKind) -> &'static str {
    match filter {
        KeyKind::Int64 => "give --keys int",
        _ => "give --keys text (the default)",
    }
}

/// What the records are filtered with: a lesshash filter's view, or a
/// Spark Bloom filter (`--keys int` asks it for longs, text for the
/// bytes, as `query` does; it records no key kind, so any keys may ask
/// it).
pub(crate) enum AnyFilter<'a> {
    /// Boxed: a view carries the filter's parameters and their derived
    /// constants (a few hundred bytes); made once per run.
    Lesshash(Box<FilterView<'a>>),
    Spark(&'a SparkBloomFilter),
}

impl AnyFilter<'_> {
    /// The kind of keys the filter records (a Spark filter: any).
    fn key_kind(&self) -> KeyKind {
        match self {
            AnyFilter::Lesshash(f) => f.key_kind(),
            AnyFilter::Spark(_) => KeyKind::Mixed,
        }
    }

    /// The answers for a batch of keys cut from the input, into `out`;
    /// on `pool` when there is one.
    fn contains_keys(
        &self,
        keys: Encoded<'_>,
        out: &mut [bool],
        pool: Option<&rayon::ThreadPool>,
    ) -> Result<(), lesshash::Error> {
        match self {
            AnyFilter::Lesshash(f) => with_encoded!(keys, |k| match pool {
                Some(pool) => pool.install(|| f.par_contains_batch(k, out)),
                None => f.contains_batch(k, out),
            }),
            AnyFilter::Spark(f) => crate::spark::contains_keys(f, keys, out, pool),
        }
    }

    /// The answers for an Arrow column of keys (null for a null key).
    fn contains_array(
        &self,
        column: &dyn Array,
        pool: Option<&rayon::ThreadPool>,
    ) -> Result<BooleanArray, lesshash::Error> {
        match (self, pool) {
            (AnyFilter::Lesshash(f), Some(pool)) => pool.install(|| f.par_contains_array(column)),
            (AnyFilter::Lesshash(f), None) => f.contains_array(column),
            (AnyFilter::Spark(f), Some(pool)) => pool.install(|| f.par_contains_array(column)),
            (AnyFilter::Spark(f), None) => f.contains_array(column),
        }
    }
}

/// Filters CSV records: the header (if any) first, then the records whose
/// key field is possibly in the filter (`--invert`: certainly not), each
/// exactly as it was in the input; a record without the field is absent.
/// One batch query per [`BATCH_RECORDS`](crate::csv::BATCH_RECORDS)
/// records, on the pool when there is one.
fn csv(
    args: &Args,
    filter: &AnyFilter<'_>,
    output: Output,
    pool: Option<&rayon::ThreadPool>,
    quiet: bool,
    start: Instant,
) -> Result<ExitCode> {
    let input = &args.input;
    let name = input.name();
    let keys_as = input.keys();
    let read = || format!("cannot read input {name}");
    let write = match output.is_stdout() {
        true => "cannot write to stdout".to_string(),
        false => format!("cannot write {}", output.name()),
    };
    let bar = crate::progress(quiet, input.len(), "filter");
    let mut csv = crate::csv::open(input.open()?, input)?;
    let (records, written, keyed) = output.write_with(|out| {
        if let Some(header) = &csv.header {
            out.write_all(header).with_context(|| write.clone())?;
            if !header.ends_with(b"\n") {
                out.write_all(b"\n").with_context(|| write.clone())?;
            }
        }
        let mut batch = crate::csv::Batch::new(true);
        let (mut found, mut ints) = (Vec::new(), Vec::new());
        let (mut records, mut written, mut keyed) = (0u64, 0u64, 0u64);
        let mut flush =
            |batch: &mut crate::csv::Batch, out: &mut (dyn Write + Send)| -> Result<()> {
                let keys = batch.keys();
                found.clear();
                found.resize(keys.len(), false);
                filter.contains_keys(
                    encode_keys(keys_as, &keys, &mut ints).map_err(|e| batch.at_line(e, &name))?,
                    &mut found,
                    pool,
                )?;
                written += batch
                    .write_selected(&found, args.invert, out)
                    .with_context(|| write.clone())?;
                records += batch.len() as u64;
                keyed += keys.len() as u64;
                batch.clear();
                Ok(())
            };
        while let Some(record) = csv.records.next_record().with_context(read)? {
            batch.push(&record, csv.key);
            if batch.len() == crate::csv::BATCH_RECORDS {
                flush(&mut batch, out)?;
                bar.set_position(csv.records.bytes_read());
            }
        }
        flush(&mut batch, out)?;
        Ok((records, written, keyed))
    })?;
    bar.finish_and_clear();
    if records > 0 && keyed == 0 {
        eprintln!(
            "lesshash: warning: none of the {records} records of {name} has {} (delimiter \
             {:?}): every record was taken as absent; check --column, --field and -d",
            csv.key_name,
            char::from(crate::csv::delimiter(input))
        );
    }
    summary(
        quiet,
        keyed,
        records,
        written,
        "records",
        args.invert,
        start,
    );
    Ok(ExitCode::SUCCESS)
}

/// Filters a Parquet or Arrow IPC input: the rows whose key is possibly in
/// the filter (`--invert`: certainly not; a null key is not in it), whole,
/// in order, with the input's schema. The batches are read on a thread of
/// their own while the pool answers the previous one's keys
/// (`par_contains_array`), selects its rows column by column and encodes
/// its Parquet columns; a Parquet input's row groups end where the input's
/// do (each smaller by the rows dropped).
#[allow(clippy::too_many_arguments)]
fn columnar(
    args: &Args,
    format: Format,
    filter: &AnyFilter<'_>,
    filter_name: String,
    output: Output,
    pool: Option<&rayon::ThreadPool>,
    quiet: bool,
    start: Instant,
) -> Result<ExitCode> {
    let src = columnar::open(&args.input, format)?;
    let key = columnar::key_column(&src, &args.input)?;
    check_kinds(
        &filter_name,
        filter.key_kind(),
        key.kind,
        &format!("{} holds", key.describe(&src.name)),
        "filter a column of the filter's kind",
    )?;
    let named = args.output.as_deref().and_then(|p| p.extension());
    let named = named.map(|e| e.to_string_lossy().to_ascii_lowercase());
    if let Some(ext @ ("csv" | "tsv" | "txt")) = named.as_deref() {
        anyhow::bail!(
            "{} rows are written as Parquet or Arrow IPC, not as .{ext}: name the output \
             .parquet, .arrow, .feather or .arrows",
            format.name()
        );
    }
    let out_format = args
        .output
        .as_deref()
        .and_then(OutFormat::of_name)
        .unwrap_or(OutFormat::of_input(format));
    if output.is_terminal() {
        anyhow::bail!(
            "the output would be {} bytes on a terminal: give -o FILE, or redirect stdout",
            out_format.name()
        );
    }
    let write = match output.is_stdout() {
        true => "cannot write to stdout".to_string(),
        false => format!("cannot write {}", output.name()),
    };
    let bar = crate::progress_count(quiet, src.rows().unwrap_or(0), "filter");
    let schema = src.schema().clone();
    let props = src.writer_properties();
    let (rows, kept) = output.write_with(|out| {
        let mut sink = Sink::new(
            out_format,
            out,
            &src.name,
            &schema,
            props,
            format == Format::Parquet,
        )
        .with_context(|| write.clone())?;
        let (mut rows, mut kept) = (0u64, 0u64);
        let mut group = None;
        for item in Feed::new(src.batches(None)?, pool.is_some())? {
            let (g, batch) = item?;
            if group.is_some_and(|p| p != g) {
                sink.end_group(pool).with_context(|| write.clone())?;
            }
            group = Some(g);
            let column = batch.column(key.index);
            let answers = filter
                .contains_array(column.as_ref(), pool)
                .with_context(|| format!("cannot query {}", key.describe(&src.name)))?;
            let mask = selection(&answers, args.invert);
            let selected = select_rows(&batch, &mask, pool)?;
            if selected.num_rows() > 0 {
                sink.write(&selected, pool).with_context(|| write.clone())?;
            }
            rows += batch.num_rows() as u64;
            kept += selected.num_rows() as u64;
            bar.inc(batch.num_rows() as u64);
        }
        sink.finish(pool).with_context(|| write.clone())?;
        Ok((rows, kept))
    })?;
    bar.finish_and_clear();
    summary(quiet, rows, rows, kept, "rows", args.invert, start);
    Ok(ExitCode::SUCCESS)
}

/// What every chunk (or piece of a block) is filtered with.
struct Job<'a> {
    filter: &'a AnyFilter<'a>,
    spec: KeySpec,
    invert: bool,
    /// The input's name, for read errors.
    name: &'a str,
    bar: &'a indicatif::ProgressBar,
    /// The context of a failed write of the selected lines.
    out_context: &'a str,
}

impl Job<'_> {
    /// One thread: chunk after chunk on the calling thread; the lines read
    /// and printed.
    fn sequential(
        &self,
        reader: Box<dyn Read + Send>,
        mut out: &mut (dyn Write + Send),
    ) -> Result<(u64, u64, u64)> {
        let mut chunks = Chunks::new(reader);
        let (mut lines, mut printed) = (0u64, 0u64);
        let mut scratch = Scratch::default();
        while let Some(chunk) = chunks
            .next_chunk()
            .with_context(|| format!("cannot read input {}", self.name))?
        {
            let (l, p) = self
                .select(chunk, &mut scratch, &mut out)
                .map_err(|e| at_line(e, self.name, chunk, lines + 1, self.spec))?;
            lines += l;
            printed += p;
            self.bar.inc(chunk.len() as u64);
        }
        Ok((lines, printed, scratch.keyed))
    }

    /// Several threads: the input is read in blocks on a thread of its
    /// own; each block is cut into pieces at line ends, and the pool
    /// filters the pieces, each into its own buffer, while the previous
    /// block's buffers are written out, in input order. The working memory
    /// of a piece (keys, answers) is its thread's, reused from piece to
    /// piece, so that it stays in that thread's cache.
    fn parallel(
        &self,
        reader: Box<dyn Read + Send>,
        pool: &rayon::ThreadPool,
        threads: usize,
        mut out: &mut (dyn Write + Send),
    ) -> Result<(u64, u64, u64)> {
        let blocks = Blocks::spawn(reader, threads)?;
        let scratches: Vec<Mutex<Scratch>> = (0..pool.current_num_threads())
            .map(|_| Mutex::default())
            .collect();
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
            // A bad key's line: the lines before this block, then those
            // of the block before its piece (counted only then).
            let before = lines;
            let line_of = |piece: &[u8]| {
                let offset = piece.as_ptr() as usize - block.as_ptr() as usize;
                before + memchr::memchr_iter(b'\n', &block[..offset]).count() as u64 + 1
            };
            let (wrote, filtered) = pool.install(|| {
                rayon::join(
                    || write_pieces(&done[..ready], &mut out),
                    || {
                        pieces
                            .par_iter()
                            .zip(work_now.par_iter_mut())
                            .try_for_each(|(piece, w)| {
                                // Each thread locks its own: never contended.
                                let i = rayon::current_thread_index().unwrap_or(0);
                                let mut scratch =
                                    scratches[i].lock().unwrap_or_else(PoisonError::into_inner);
                                w.filter(self, piece, &mut scratch).map_err(|e| {
                                    at_line(e, self.name, piece, line_of(piece), self.spec)
                                })
                            })
                    },
                )
            });
            wrote.context(self.out_context.to_string())?;
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
        write_pieces(&done[..ready], &mut out).context(self.out_context.to_string())?;
        // Every thread's scratch counts the keyed lines it filtered.
        let keyed = scratches
            .into_iter()
            .map(|s| s.into_inner().unwrap_or_else(PoisonError::into_inner).keyed)
            .sum();
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
        let Scratch {
            starts,
            has_key,
            answers,
            ints,
            flips,
            ..
        } = scratch;
        let (lines, printed) = if self.spec.is_whole_line() {
            // Fast path: the key is the line, so line i spans from key i's
            // start to key i+1's start; one vector per chunk.
            for_each_line(chunk, |line| keys.push(strip_eol(line)));
            answers.resize(keys.len(), false);
            self.filter
                .contains_keys(self.spec.encode(&keys, ints)?, answers, None)?;
            let mut sel = Selection::new(self.invert, flips, keys.len());
            for (key, &present) in keys.iter().zip(answers.iter()) {
                sel.line(key.as_ptr() as usize - base, present);
            }
            (keys.len() as u64, sel.finish(chunk, out))
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
            self.filter
                .contains_keys(self.spec.encode(&keys, ints)?, answers, None)?;
            let mut sel = Selection::new(self.invert, flips, starts.len());
            let mut answer = answers.iter();
            for (&start, &keyed) in starts.iter().zip(has_key.iter()) {
                let present = keyed && *answer.next().expect("one answer per key");
                sel.line(start, present);
            }
            (starts.len() as u64, sel.finish(chunk, out))
        };
        let printed = printed.with_context(|| self.out_context.to_string())?;
        scratch.keyed += keys.len() as u64;
        scratch.keys = recycle(keys);
        Ok((lines, printed))
    }
}

/// Reused across chunks: line starts (field mode), which lines have a key
/// (field mode), the answers, the parsed keys (`--keys int`), where the
/// selection flips, and the keys' allocation.
#[derive(Default)]
struct Scratch {
    starts: Vec<usize>,
    has_key: Vec<bool>,
    answers: Vec<bool>,
    ints: Vec<[u8; 8]>,
    flips: Vec<usize>,
    keys: Vec<&'static [u8]>,
    /// The lines with a key so far (field mode: a count of 0 over many
    /// lines means the field or the delimiter is wrong).
    keyed: u64,
}

/// One piece of a block on the parallel path: its selected lines, and
/// how many it read and selected.
#[derive(Default)]
struct Piece {
    out: Vec<u8>,
    lines: u64,
    printed: u64,
}

impl Piece {
    fn filter(&mut self, job: &Job<'_>, piece: &[u8], scratch: &mut Scratch) -> Result<()> {
        self.out.clear();
        (self.lines, self.printed) = job.select(piece, scratch, &mut self.out)?;
        Ok(())
    }
}

/// Writes the pieces' selected lines, in order.
fn write_pieces(pieces: &[Piece], out: &mut impl Write) -> std::io::Result<()> {
    pieces.iter().try_for_each(|p| out.write_all(&p.out))
}

/// Which lines of a chunk are printed, kept as the offsets where the
/// selection flips (a run of selected lines starts at an even flip and
/// ends at the next): the lines are visited without a branch on their
/// answers, which are as unpredictable as the keys (a mispredicted branch
/// per line costs more than the probe), and each run is then written with
/// one `write_all`.
struct Selection<'s> {
    invert: bool,
    flips: &'s mut Vec<usize>,
    /// Flips so far: `flips[..count]`.
    count: usize,
    /// Whether the previous line was selected.
    selected: bool,
    printed: u64,
}

impl<'s> Selection<'s> {
    /// A selection of up to `lines` lines, in `flips` (reused).
    fn new(invert: bool, flips: &'s mut Vec<usize>, lines: usize) -> Self {
        flips.clear();
        flips.resize(lines + 1, 0);
        Self {
            invert,
            flips,
            count: 0,
            selected: false,
            printed: 0,
        }
    }

    /// The line starting at `start` (the lines of a chunk in order, each
    /// ending where the next starts): printed if `present != invert`.
    #[inline]
    fn line(&mut self, start: usize, present: bool) {
        let selected = present != self.invert;
        // Written always, kept only where the selection changes.
        self.flips[self.count] = start;
        self.count += usize::from(selected != self.selected);
        self.selected = selected;
        self.printed += u64::from(selected);
    }

    /// Writes the runs of selected lines (the last up to the chunk's end);
    /// the number of lines printed.
    fn finish(self, chunk: &[u8], out: &mut impl Write) -> std::io::Result<u64> {
        for run in self.flips[..self.count].chunks(2) {
            match *run {
                [start, end] => out.write_all(&chunk[start..end])?,
                [start] => {
                    out.write_all(&chunk[start..])?;
                    // The input's last line may lack its newline; the
                    // output's never does.
                    if !chunk.ends_with(b"\n") {
                        out.write_all(b"\n")?;
                    }
                }
                _ => unreachable!("chunks of two"),
            }
        }
        Ok(self.printed)
    }
}
