//! `lesshash build`: keys from lines to a filter file.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use lesshash::spark::{SparkBloomFilter, SparkVersion};
use lesshash::{BloomFilter, Layout, Scheme};

use crate::columnar::{self, Feed, rewound};
use crate::input::{
    BadKey, Chunks, Encoded, Format, InputArgs, KeySpec, at_line, count_lines, encode_keys,
    for_each_line, recycle, strip_eol, with_encoded,
};
use crate::output::{Output, input_id};
use crate::parallel::Blocks;
use crate::spool::Spool;

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
    /// are counted first. A regular file is read twice; stdin, a pipe or a
    /// FIFO is read once, keeping each key's 16-byte hash (with `--scheme
    /// independent`, the input's bytes) in memory up to 64 MiB (4 million
    /// hashes), the rest in an unnamed temporary file in TMPDIR
    /// (`LESSHASH_SPILL_BYTES` sets the budget). Duplicate lines count, so
    /// the filter may be larger than needed, never smaller. Parquet: the
    /// footer's row count less the column's nulls; Arrow IPC and CSV: the
    /// keys (records) counted in a first pass.
    #[arg(long, value_name = "N")]
    items: Option<u64>,

    /// Filter layout (default: the library's, `blocked`: one cache line
    /// per key; see docs/bench-notes/2026-11-23.md, "Defaults").
    #[arg(long, value_name = "LAYOUT", value_parser = crate::layout_parser())]
    layout: Option<Layout>,

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

    /// The 128-bit hash family, recorded in the file: `xxh3-128` (the
    /// default) or `folded-multiply` (keys of at most 16 bytes by two
    /// multiplies, XXH3-128 past that; two-hash schemes only). Queries
    /// read it from the file.
    #[arg(long = "hash", value_name = "FAMILY", value_parser = crate::hash_family_parser())]
    hash_family: Option<lesshash::HashFamily>,

    /// Insert threads (0: one per CPU): they cut the lines, hash the keys
    /// and insert them; with more than one, the input is read on a thread
    /// of its own. The filter is the same for any count.
    #[arg(long, short = 't', value_name = "T", default_value_t = 0)]
    threads: usize,

    /// The filter file's format: `lesshash`, or Spark's Bloom filter
    /// (`org.apache.spark.util.sketch.BloomFilter`, as its `writeTo`
    /// writes and `readFrom` reads) in version 2 (`spark-v2`, Spark 4.1's
    /// default: 64-bit index arithmetic and a seed) or 1 (`spark-v1`).
    /// Spark's filters are sized by Spark's rule for --items and --fpr
    /// (what `df.stat.bloomFilter(col, n, fpp)` makes); `--keys int`
    /// inserts longs (`putLong`), text keys their UTF-8 bytes
    /// (`putString`), Parquet and Arrow columns as Spark encodes their
    /// types; --seed is version 2's 32-bit seed (default 0); --layout and
    /// --scheme do not apply. Spark's insert runs on one thread.
    #[arg(long, value_enum, value_name = "FORMAT", default_value_t = OutputFormat::Lesshash)]
    output_format: OutputFormat,
}

/// `--output-format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OutputFormat {
    /// lesshash's format (docs/format.md).
    Lesshash,
    /// Spark's Bloom filter, version 1.
    #[value(name = "spark-v1")]
    SparkV1,
    /// Spark's Bloom filter, version 2.
    #[value(name = "spark-v2")]
    SparkV2,
}

impl OutputFormat {
    fn spark(self) -> Option<SparkVersion> {
        match self {
            OutputFormat::Lesshash => None,
            OutputFormat::SparkV1 => Some(SparkVersion::V1),
            OutputFormat::SparkV2 => Some(SparkVersion::V2),
        }
    }
}

impl Args {
    /// Whether the filter goes to stdout (`-o -`).
    pub(crate) fn writes_stdout(&self) -> bool {
        self.output.as_os_str() == "-"
    }
}

pub(crate) fn run(mut args: Args, quiet: bool) -> Result<ExitCode> {
    let start = Instant::now();
    let name = args.input.name();
    // Before any work: refuses `-i x -o x` (the keys would be replaced by
    // the filter) and an unwritable output.
    let output = Output::create(
        &args.output,
        &[(input_id(args.input.path()), name.clone())],
        false,
    )?;
    let format = args.input.detect()?;
    if let Some(version) = args.output_format.spark() {
        let name = args.output_format_name();
        if args.layout.is_some() || args.scheme.is_some() || args.hash_family.is_some() {
            anyhow::bail!(
                "--layout, --scheme and --hash do not apply to --output-format {name}: Spark's \
                 filter is a flat bit array with its own index scheme and hash"
            );
        }
        crate::spark::seed(version, args.seed)?;
    }
    let threads = crate::parallel::thread_count(args.threads);
    let pool = crate::parallel::pool(threads, "insert")?;
    let job = Job {
        args: &args,
        output,
        pool: pool.as_ref(),
        quiet,
        start,
    };
    match format {
        Format::Lines => {}
        Format::Csv => return job.csv(),
        _ => return job.columnar(format),
    }
    let Job { output, .. } = job;
    let spec = args.input.key_spec();
    // The filter's seed and scheme, as the builder below chooses them: a
    // stream's keys are hashed before the filter exists.
    let seed = args.seed.unwrap_or(lesshash::DEFAULT_SEED);
    let family = args.hash_family();
    let scheme = args.scheme.unwrap_or(args.layout().default_scheme());

    // Pass one when --items is absent: count the lines. A regular file is
    // read twice. A stream (stdin, a pipe, a FIFO) is read once: its keys'
    // hashes are kept (in memory up to a budget, then in an unnamed
    // temporary file) and inserted once the filter is sized; the
    // `Independent` scheme, which needs the keys' bytes, keeps the input's
    // bytes the same way and reads them back as the input.
    let (items, pending) = match args.items {
        Some(n) => (n, Pending::Input(args.input.open()?)),
        None if args.input.len().is_some() => {
            let n = count_lines(args.input.open()?)
                .with_context(|| format!("cannot read input {name}"))?;
            (n, Pending::Input(args.input.open()?))
        }
        // Spark's filter takes the keys themselves, as `Independent` does.
        None if !scheme.is_two_hash() || args.output_format.spark().is_some() => {
            let bar = crate::progress(quiet, None, "read");
            let (n, spool) = spool_input(args.input.open()?, &name, &bar)?;
            bar.finish_and_clear();
            (n, Pending::Input(spool.into_reader()?))
        }
        None => {
            let bar = crate::progress(quiet, None, "hash");
            let reader = args.input.open()?;
            let spool = Spool::new(crate::spool::budget()?);
            let (spool, skipped) = match &pool {
                None => spool_hashes(reader, spec, (family, seed), &name, &bar, spool)?,
                Some(pool) => spool_hashes_parallel(
                    reader,
                    spec,
                    (family, seed),
                    &name,
                    &bar,
                    spool,
                    pool,
                    threads,
                )?,
            };
            bar.finish_and_clear();
            // The lines, as `count_lines` counts them: each has a key or
            // is skipped.
            (spool.len() + skipped, Pending::Hashes(spool, skipped))
        }
    };

    let (filter, keys, skipped) = match (args.filling(items, spec.keys().kind())?, pending) {
        (Filling::Spark(mut filter), Pending::Input(reader)) => {
            let bar = crate::progress(quiet, args.input.len(), "build");
            let mut ints = Vec::new();
            let (n, skipped) = cut_all(reader, spec, &name, &bar, |keys| {
                crate::spark::insert_keys(&mut filter, spec.encode(keys, &mut ints)?);
                Ok(())
            })?;
            bar.finish_and_clear();
            (Filling::Spark(filter), n, skipped)
        }
        (Filling::Spark(_), Pending::Hashes(..)) => unreachable!("Spark's build spools keys"),
        (Filling::Lesshash(filter), Pending::Input(reader)) => {
            debug_assert_eq!(
                (filter.hash_family(), filter.seed(), filter.scheme()),
                (family, seed, scheme)
            );
            let bar = crate::progress(quiet, args.input.len(), "build");
            let (filter, n, skipped) = match &pool {
                None => insert_all(*filter, reader, spec, &name, &bar),
                Some(pool) => insert_parallel(*filter, reader, spec, &name, &bar, pool, threads),
            }?;
            bar.finish_and_clear();
            (Filling::Lesshash(Box::new(filter)), n, skipped)
        }
        (Filling::Lesshash(filter), Pending::Hashes(spool, skipped)) => {
            let keys = spool.len();
            let bar = crate::progress_count(quiet, keys, "insert");
            let filter = insert_spooled(*filter, spool, pool.as_ref(), &bar)?;
            bar.finish_and_clear();
            (Filling::Lesshash(Box::new(filter)), keys, skipped)
        }
    };

    // Not one line had the field: the field or the delimiter is wrong, and
    // an empty filter would answer "absent" to everything.
    if keys == 0 && skipped > 0 {
        anyhow::bail!(
            "none of the {skipped} lines of {name} has field {} (delimiter {:?}): nothing to \
             build; check --field and -d",
            args.input.field.unwrap_or(1),
            char::from(args.input.line_delimiter())
        );
    }
    let skipped = (skipped > 0).then(|| {
        format!(
            "; {skipped} lines without field {} skipped",
            args.input.field.unwrap_or(1)
        )
    });
    finish(output, &filter, keys, items, skipped, quiet, start)
}

/// Writes the filter, then the summary line (and a warning when more keys
/// went in than it was sized for).
fn finish(
    output: Output,
    filter: &Filling,
    keys: u64,
    items: u64,
    skipped: Option<String>,
    quiet: bool,
    start: Instant,
) -> Result<ExitCode> {
    let out_name = output.name().to_string();
    let mut tail = match filter {
        Filling::Lesshash(filter) => {
            output.write_filter(filter)?;
            format!(
                " -> {} ({} bytes, {}, {}, k = {}, {} keys, expected FPR now {:.4}%)",
                out_name,
                filter.serialized_len(),
                filter.layout().name(),
                filter.scheme().name(),
                filter.num_hashes(),
                filter.key_kind(),
                100.0 * filter.expected_fpr()
            )
        }
        Filling::Spark(filter) => {
            let bytes = filter.to_spark_bytes();
            let what = format!("cannot write {out_name}");
            output.write_with(|w| w.write_all(&bytes).context(what))?;
            format!(
                " -> {} ({} bytes, Spark's Bloom filter version {}, seed {}, k = {}, {} bits, \
                 expected FPR now {:.4}%)",
                out_name,
                bytes.len(),
                match filter.version() {
                    SparkVersion::V1 => 1,
                    SparkVersion::V2 => 2,
                },
                filter.seed(),
                filter.num_hashes(),
                filter.num_bits(),
                100.0 * filter.expected_fpr(keys)
            )
        }
    };
    if let Some(skipped) = skipped {
        tail += &skipped;
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

impl Args {
    fn layout(&self) -> Layout {
        self.layout.unwrap_or(Layout::Blocked)
    }

    fn hash_family(&self) -> lesshash::HashFamily {
        self.hash_family.unwrap_or_default()
    }

    fn output_format_name(&self) -> String {
        use clap::ValueEnum;
        self.output_format
            .to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_string())
    }

    /// The empty filter for `items` keys of `kind`: lesshash's, from the
    /// options' parameters (the kind recorded in the file), or Spark's by
    /// Spark's sizing.
    fn filling(&self, items: u64, kind: lesshash::KeyKind) -> Result<Filling> {
        match self.output_format.spark() {
            None => BloomFilter::builder()
                .expected_items(items)
                .fpr(self.fpr)
                .layout(self.layout())
                .seed(self.seed.unwrap_or(lesshash::DEFAULT_SEED))
                .hash_family(self.hash_family())
                .scheme(self.scheme.unwrap_or(self.layout().default_scheme()))
                .key_kind(kind)
                .build()
                .map(|f| Filling::Lesshash(Box::new(f)))
                .map_err(build_error),
            Some(version) => crate::spark::create(version, items, self.fpr, self.seed)
                .map(Filling::Spark)
                .map_err(build_error),
        }
    }
}

/// The filter a build fills: lesshash's, or Spark's (`--output-format`).
/// (lesshash's is boxed: it carries its one-key route and hash constants.)
enum Filling {
    Lesshash(Box<BloomFilter>),
    Spark(SparkBloomFilter),
}

impl Filling {
    /// Inserts a batch of cut keys, on `pool` when there is one (Spark's
    /// insert runs on the calling thread).
    fn insert_keys(&mut self, keys: Encoded<'_>, pool: Option<&rayon::ThreadPool>) {
        match self {
            Filling::Lesshash(f) => with_encoded!(keys, |k| match pool {
                Some(pool) => pool.install(|| f.par_insert_batch(k)),
                None => f.insert_batch(k),
            }),
            Filling::Spark(f) => crate::spark::insert_keys(f, keys),
        }
    }

    /// Inserts an Arrow column's keys (nulls skipped), on `pool` when there
    /// is one (not Spark's).
    fn insert_array(
        &mut self,
        column: &dyn arrow_array::Array,
        pool: Option<&rayon::ThreadPool>,
    ) -> Result<lesshash::arrow::ArrayInsert, lesshash::Error> {
        match self {
            Filling::Lesshash(f) => match pool {
                Some(pool) => pool.install(|| f.par_insert_array(column)),
                None => f.insert_array(column),
            },
            Filling::Spark(f) => f.insert_array(column),
        }
    }
}

/// A build from CSV or a columnar input: what it writes to and runs on.
struct Job<'a> {
    args: &'a Args,
    output: Output,
    pool: Option<&'a rayon::ThreadPool>,
    quiet: bool,
    start: Instant,
}

impl Job<'_> {
    /// A build from a Parquet or Arrow IPC column: sized by the Parquet
    /// footer's row count less the column's null count (Arrow IPC: the
    /// column read once to count its keys) unless --items; the batches
    /// read on a thread of their own while the pool inserts the previous
    /// one (`par_insert_array`). Null keys are skipped.
    fn columnar(self, format: Format) -> Result<ExitCode> {
        let input = &self.args.input;
        let src = columnar::open(input, format)?;
        let key = columnar::key_column(&src, input)?;
        let items = match self.args.items {
            Some(n) => n,
            None => match src.counted_keys(&key)? {
                Some(n) => n,
                None => src.count_keys(&key)?,
            },
        };
        let mut filter = self.args.filling(items, key.kind)?;
        let bar = crate::progress_count(self.quiet, items, "build");
        let feed = Feed::new(src.batches(Some(key.index))?, self.pool.is_some())?;
        let (mut keys, mut nulls) = (0u64, 0u64);
        for batch in feed {
            let (_, batch) = batch?;
            let column = batch.column(0);
            let done = filter
                .insert_array(column.as_ref(), self.pool)
                .with_context(|| format!("cannot insert {}", key.describe(&src.name)))?;
            keys += done.inserted as u64;
            nulls += done.nulls as u64;
            bar.inc(done.inserted as u64);
        }
        bar.finish_and_clear();
        if keys == 0 && nulls > 0 {
            anyhow::bail!(
                "{} has only null keys ({nulls} rows): nothing to build",
                key.describe(&src.name)
            );
        }
        let skipped = (nulls > 0).then(|| format!("; {nulls} null keys skipped"));
        finish(
            self.output,
            &filter,
            keys,
            items,
            skipped,
            self.quiet,
            self.start,
        )
    }

    /// A build from a CSV field: sized by counting the records unless
    /// --items (stdin is copied to an unnamed temporary file first, to be
    /// read twice); keys inserted a batch at a time (on the pool with more
    /// than one thread).
    fn csv(self) -> Result<ExitCode> {
        let input = &self.args.input;
        let name = input.name();
        let keys_as = input.keys();
        let read = || format!("cannot read input {name}");
        // Without --items, the records are counted first: a file is read
        // twice, a stream copied to a temporary file and read from it twice.
        let count = |file: &std::fs::File| -> Result<u64> {
            let mut csv = crate::csv::open(rewound(file)?, input)?;
            let mut n = 0u64;
            while csv.records.next_record().with_context(read)?.is_some() {
                n += 1;
            }
            Ok(n)
        };
        let (items, reader): (u64, Box<dyn Read + Send>) = match (self.args.items, input.len()) {
            (Some(n), _) => (n, input.open()?),
            (None, Some(_)) => (count(&reopenable(input)?)?, input.open()?),
            (None, None) => {
                let file = spill_stdin(input)?;
                (count(&file)?, Box::new(rewound(&file)?))
            }
        };
        let mut filter = self.args.filling(items, keys_as.kind())?;
        let mut csv = crate::csv::open(reader, input)?;
        let bar = crate::progress_count(self.quiet, items, "build");
        let mut batch = crate::csv::Batch::new(false);
        let (mut keys, mut skipped) = (0u64, 0u64);
        let mut ints = Vec::new();
        let mut flush = |batch: &mut crate::csv::Batch| -> Result<()> {
            let cut = batch.keys();
            filter.insert_keys(
                encode_keys(keys_as, &cut, &mut ints).map_err(|e| batch.at_line(e, &name))?,
                self.pool,
            );
            keys += cut.len() as u64;
            skipped += batch.keyless();
            bar.inc(batch.len() as u64);
            batch.clear();
            Ok(())
        };
        while let Some(record) = csv.records.next_record().with_context(read)? {
            batch.push(&record, csv.key);
            if batch.len() == crate::csv::BATCH_RECORDS {
                flush(&mut batch)?;
            }
        }
        flush(&mut batch)?;
        bar.finish_and_clear();
        if keys == 0 && skipped > 0 {
            anyhow::bail!(
                "none of the {skipped} records of {name} has {} (delimiter {:?}): nothing to \
                 build; check --column, --field and -d",
                csv.key_name,
                char::from(crate::csv::delimiter(input))
            );
        }
        let skipped =
            (skipped > 0).then(|| format!("; {skipped} records without {} skipped", csv.key_name));
        finish(
            self.output,
            &filter,
            keys,
            items,
            skipped,
            self.quiet,
            self.start,
        )
    }
}

/// The input file opened a second time (for the count of a two-pass
/// build).
fn reopenable(input: &InputArgs) -> Result<std::fs::File> {
    let p = input.path().expect("a file");
    std::fs::File::open(p).with_context(|| format!("cannot open input {}", p.display()))
}

/// A stream (stdin, a pipe or FIFO) copied to an unnamed temporary file
/// (which the OS removes however the process ends), to be read twice.
pub(crate) fn spill_stdin(input: &InputArgs) -> Result<std::fs::File> {
    let mut tmp =
        tempfile::tempfile().context("cannot create a temporary file for stdin (set TMPDIR)")?;
    std::io::copy(&mut input.open()?, &mut tmp)
        .with_context(|| format!("cannot copy {} to a temporary file", input.name()))?;
    Ok(tmp)
}

/// What pass one leaves for the inserts.
enum Pending {
    /// The input to read (again, for a file; the spooled bytes of a stream
    /// for the `Independent` scheme).
    Input(Box<dyn Read + Send>),
    /// A stream's keys, hashed with the filter's seed, and its lines
    /// without a key.
    Hashes(Spool<u128>, u64),
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

/// Cuts every key of the input, chunk by chunk on the calling thread
/// (`--threads 1`), and hands each chunk's keys, in input order, to
/// `each`; returns the keys and the lines without one.
fn cut_all(
    reader: Box<dyn Read + Send>,
    spec: KeySpec,
    name: &str,
    bar: &indicatif::ProgressBar,
    mut each: impl FnMut(&[&[u8]]) -> Result<()>,
) -> Result<(u64, u64)> {
    let mut chunks = Chunks::new(reader);
    let (mut n, mut skipped) = (0u64, 0u64);
    // Reused across chunks: the key vector.
    let mut spare: Vec<&'static [u8]> = Vec::new();
    while let Some(chunk) = chunks
        .next_chunk()
        .with_context(|| format!("cannot read input {name}"))?
    {
        let mut keys = recycle(std::mem::take(&mut spare));
        keys.reserve(chunk.len() / 8);
        let first = n + skipped + 1;
        skipped += keys_of(chunk, spec, &mut keys);
        each(&keys).map_err(|e| at_line(e, name, chunk, first, spec))?;
        n += keys.len() as u64;
        bar.inc(chunk.len() as u64);
        spare = recycle(keys);
    }
    Ok((n, skipped))
}

/// Inserts every key of the input, chunk by chunk, on the calling thread
/// (`--threads 1`).
fn insert_all(
    mut filter: BloomFilter,
    reader: Box<dyn Read + Send>,
    spec: KeySpec,
    name: &str,
    bar: &indicatif::ProgressBar,
) -> Result<Built> {
    let mut ints = Vec::new();
    let (n, skipped) = cut_all(reader, spec, name, bar, |keys| {
        with_encoded!(spec.encode(keys, &mut ints)?, |k| filter.insert_batch(k));
        Ok(())
    })?;
    Ok((filter, n, skipped))
}

/// Cuts every key of the input on the pool and hands each block's keys,
/// a [`Cut`] per piece in input order, to `each` (on the calling thread).
/// The input is read in blocks on a thread of its own; each block is cut
/// into pieces at line ends, whose keys are cut in parallel. Returns the
/// keys and the lines without one.
fn cut_parallel(
    reader: Box<dyn Read + Send>,
    spec: KeySpec,
    name: &str,
    bar: &indicatif::ProgressBar,
    pool: &rayon::ThreadPool,
    threads: usize,
    mut each: impl FnMut(&[Cut<'_>]) -> Result<()>,
) -> Result<(u64, u64)> {
    use rayon::prelude::*;
    let blocks = Blocks::spawn(reader, threads)?;
    let (mut n, mut skipped) = (0u64, 0u64);
    // Reused across blocks: the pieces' key vectors.
    let mut spare: Vec<Vec<&'static [u8]>> = Vec::new();
    while let Some(block) = blocks
        .next_block()
        .with_context(|| format!("cannot read input {name}"))?
    {
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
        });
        // A bad key's index is among the block's keys (hash_cuts).
        let first = n + skipped + 1;
        each(&cuts).map_err(|e| at_line(e, name, &block, first, spec))?;
        for cut in cuts {
            n += cut.keys.len() as u64;
            skipped += cut.skipped;
            spare.push(recycle(cut.keys));
        }
        bar.inc(block.len() as u64);
        blocks.give_back(block);
    }
    Ok((n, skipped))
}

/// Hashes the keys of `cuts` with `seed` in parallel on the current pool,
/// each piece's straight into its own part of `hashes` (resized to hold
/// them all, in input order): no serial pass over the keys.
fn hash_cuts(
    cuts: &[Cut<'_>],
    spec: KeySpec,
    (family, seed): (lesshash::HashFamily, u64),
    hashes: &mut Vec<u128>,
) -> Result<()> {
    use rayon::prelude::*;
    hashes.resize(cuts.iter().map(|c| c.keys.len()).sum(), 0);
    let mut parts = Vec::with_capacity(cuts.len());
    let mut rest = &mut hashes[..];
    for cut in cuts {
        let (part, tail) = rest.split_at_mut(cut.keys.len());
        parts.push(part);
        rest = tail;
    }
    // Each cut's first key among the block's, for a bad key's index.
    let starts: Vec<usize> = cuts
        .iter()
        .scan(0, |at, c| {
            let start = *at;
            *at += c.keys.len();
            Some(start)
        })
        .collect();
    cuts.par_iter().zip(parts).zip(starts).try_for_each_init(
        Vec::new,
        |ints, ((cut, part), start)| {
            let encoded =
                spec.encode(&cut.keys, ints)
                    .map_err(|e| match e.downcast::<BadKey>() {
                        Ok(bad) => anyhow::Error::new(BadKey {
                            index: start + bad.index,
                            text: bad.text,
                        }),
                        Err(e) => e,
                    })?;
            with_encoded!(encoded, |k| family
                .hash_batch(k, seed, part)
                .expect("a part per piece's keys"));
            Ok(())
        },
    )
}

/// Inserts every key of the input on the pool, bit-identical to
/// [`insert_all`] (and the same insert count in the header): each block's
/// keys ([`cut_parallel`]) are hashed in parallel into one array of hashes
/// ([`hash_cuts`]), which the library's parallel insert takes (on one
/// thread the cut alone is about a third of the build). The `Independent`
/// scheme, which needs the keys' bytes, inserts the keys instead.
fn insert_parallel(
    mut filter: BloomFilter,
    reader: Box<dyn Read + Send>,
    spec: KeySpec,
    name: &str,
    bar: &indicatif::ProgressBar,
    pool: &rayon::ThreadPool,
    threads: usize,
) -> Result<Built> {
    let hashing = (filter.hash_family(), filter.seed());
    let by_hash = filter.prehashed().is_ok();
    // Reused across blocks: the block's hashes.
    let mut hashes: Vec<u128> = Vec::new();
    let (n, skipped) = cut_parallel(reader, spec, name, bar, pool, threads, |cuts| {
        pool.install(|| {
            if by_hash {
                hash_cuts(cuts, spec, hashing, &mut hashes)?;
                filter
                    .prehashed_mut()
                    .expect("a two-hash scheme")
                    .par_insert_batch(&hashes);
            } else {
                let keys: Vec<&[u8]> = cuts.iter().flat_map(|c| &c.keys).copied().collect();
                with_encoded!(spec.encode(&keys, &mut Vec::new())?, |k| filter
                    .par_insert_batch(k));
            }
            Ok(())
        })
    })?;
    Ok((filter, n, skipped))
}

/// A piece's keys, in order, and its lines without one.
struct Cut<'a> {
    keys: Vec<&'a [u8]>,
    skipped: u64,
}

/// Pass one of a stream without `--items`, on the calling thread
/// (`--threads 1`): every key cut as [`insert_all`] cuts it and hashed
/// with `seed` into `spool`. Returns the spool and the lines without a key
/// (lines: the spool's length plus those).
fn spool_hashes(
    reader: Box<dyn Read + Send>,
    spec: KeySpec,
    (family, seed): (lesshash::HashFamily, u64),
    name: &str,
    bar: &indicatif::ProgressBar,
    mut spool: Spool<u128>,
) -> Result<(Spool<u128>, u64)> {
    let (mut hashes, mut ints): (Vec<u128>, _) = (Vec::new(), Vec::new());
    let (_, skipped) = cut_all(reader, spec, name, bar, |keys| {
        hashes.resize(keys.len(), 0);
        with_encoded!(spec.encode(keys, &mut ints)?, |k| family
            .hash_batch(k, seed, &mut hashes)
            .expect("a hash per key"));
        spool.push(&hashes)
    })?;
    Ok((spool, skipped))
}

/// [`spool_hashes`] on the pool: the keys cut and hashed as
/// [`insert_parallel`] does, the block's hashes pushed in input order.
#[allow(clippy::too_many_arguments)]
fn spool_hashes_parallel(
    reader: Box<dyn Read + Send>,
    spec: KeySpec,
    hashing: (lesshash::HashFamily, u64),
    name: &str,
    bar: &indicatif::ProgressBar,
    mut spool: Spool<u128>,
    pool: &rayon::ThreadPool,
    threads: usize,
) -> Result<(Spool<u128>, u64)> {
    let mut hashes: Vec<u128> = Vec::new();
    let (_, skipped) = cut_parallel(reader, spec, name, bar, pool, threads, |cuts| {
        pool.install(|| hash_cuts(cuts, spec, hashing, &mut hashes))?;
        spool.push(&hashes)
    })?;
    Ok((spool, skipped))
}

/// Hashes read back from a spool's file per insert: 4 MiB, sixteen of the
/// library's parallel insert tasks.
const REPLAY: usize = 1 << 18;

/// Inserts a spool's hashes (the filter's seed, a two-hash scheme), on
/// the pool when there is one: the same bits and insert count as
/// inserting their keys.
fn insert_spooled(
    mut filter: BloomFilter,
    spool: Spool<u128>,
    pool: Option<&rayon::ThreadPool>,
    bar: &indicatif::ProgressBar,
) -> Result<BloomFilter> {
    let mut by_hash = filter
        .prehashed_mut()
        .expect("a two-hash scheme: `Independent` spools the input");
    spool.drain(REPLAY, |hashes| {
        match pool {
            Some(pool) => pool.install(|| by_hash.par_insert_batch(hashes)),
            None => by_hash.insert_batch(hashes),
        }
        bar.inc(hashes.len() as u64);
    })?;
    Ok(filter)
}

/// Pass one of a stream without `--items` for the `Independent` scheme:
/// the input's bytes copied into a spool (in memory up to the budget, then
/// in a temporary file) while its lines are counted. Returns the count and
/// the spool.
fn spool_input(
    reader: Box<dyn Read + Send>,
    name: &str,
    bar: &indicatif::ProgressBar,
) -> Result<(u64, Spool<u8>)> {
    let mut tee = Tee {
        reader,
        spool: Spool::new(crate::spool::budget()?),
        bar,
        failed: None,
    };
    let counted = count_lines(&mut tee);
    if let Some(e) = tee.failed.take() {
        return Err(e);
    }
    let n = counted.with_context(|| format!("cannot read input {name}"))?;
    Ok((n, tee.spool))
}

/// A reader that pushes what it reads into a spool.
struct Tee<'a> {
    reader: Box<dyn Read + Send>,
    spool: Spool<u8>,
    bar: &'a indicatif::ProgressBar,
    /// The spool's error, which ended the reads.
    failed: Option<anyhow::Error>,
}

impl Read for Tee<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.reader.read(buf)?;
        if let Err(e) = self.spool.push(&buf[..n]) {
            self.failed = Some(e);
            return Err(std::io::Error::other("the temporary file failed"));
        }
        self.bar.inc(n as u64);
        Ok(n)
    }
}
