//! Parquet and Arrow IPC input and output: record batches read from a file
//! (row group after row group, batch after batch, in bounded memory), the
//! key column chosen by name, and the selected rows written back whole in
//! Parquet (columns encoded in parallel) or Arrow IPC.
//!
//! Keys are hashed by their column's Arrow type, through the library's
//! encoding table (`lesshash::arrow`, docs/guide.md): an Int32 or Int64
//! column answers as `--keys int` lines do, a Utf8 column as text lines.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, sync_channel};

use anyhow::{Context, Result, anyhow, bail};
use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, RecordBatchReader};
use arrow_ipc::reader::{FileReader, StreamReader};
use arrow_ipc::writer::{FileWriter, StreamWriter};
use arrow_schema::{DataType, SchemaRef};
use lesshash::KeyKind;

pub use crate::input_format::Format;
use parquet::arrow::ProjectionMask;
use parquet::arrow::add_encoded_arrow_schema_to_metadata;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReader,
    ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::arrow_writer::{
    ArrowColumnWriter, ArrowRowGroupWriterFactory, ArrowWriter, ArrowWriterOptions, compute_leaves,
};
use parquet::basic::{Compression, Encoding, PageType};
use parquet::file::metadata::ColumnChunkMetaData;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use rayon::prelude::*;

mod guard;
mod ipc_checks;
mod parquet_checks;
mod stored_types;
mod thrift;

use parquet_checks::Footer;

/// Rows per record batch read: large enough that a batch query amortises
/// its set-up and a column's encoding its calls, small enough that a few
/// batches of wide rows stay in memory.
pub const BATCH_ROWS: usize = 64 << 10;

/// Batches read ahead of the work on the reader thread.
const READ_AHEAD: usize = 2;

/// Rows per output row group when the input has none to follow (Arrow IPC
/// input written as Parquet): the Parquet writer's default.
const ROW_GROUP_ROWS: usize = 1 << 20;

/// A Parquet or Arrow IPC input, opened: its file (stdin copied to an
/// unnamed temporary file first, as Parquet must be read from the end),
/// schema and, for Parquet, metadata.
pub struct Columnar {
    /// The input's name, for messages.
    pub name: String,
    /// Parquet, an Arrow IPC file or stream.
    pub format: Format,
    /// The open file (each pass reads a clone from its start).
    file: File,
    schema: SchemaRef,
    /// The Parquet footer, read once and checked, and where it starts.
    parquet: Option<(ArrowReaderMetadata, Footer)>,
}

/// The key column of a columnar input.
#[derive(Debug, Clone)]
pub struct KeyColumn {
    /// Its index in the schema.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// Its Arrow type.
    pub data_type: DataType,
    /// The kind of keys it holds (its type, through the encoding table).
    pub kind: KeyKind,
}

impl KeyColumn {
    /// "column user_id (Int64) of events.parquet", for messages.
    pub fn describe(&self, input: &str) -> String {
        format!("column {} ({}) of {input}", self.name, self.data_type)
    }
}

impl Columnar {
    /// Reads the schema of `file`, an input named `name` (for messages)
    /// in the columnar `format`. The file is untrusted: its framing is
    /// checked before a decoder reads it, and what a decoder still panics
    /// on becomes an error naming it.
    pub fn from_file(name: String, file: File, format: Format) -> Result<Self> {
        let what = format.name();
        let context = || format!("cannot read input {name} as {what}");
        let len = file.metadata().with_context(context)?.len();
        let mut parquet = None;
        let schema = guard::decode(|| match format {
            Format::Parquet => {
                let footer = parquet_checks::check_footer(&file, len)?;
                let meta = ArrowReaderMetadata::load(&file, ArrowReaderOptions::new())?;
                parquet_checks::check_rows(meta.metadata())?;
                let schema = Arc::clone(meta.schema());
                parquet = Some((meta, footer));
                Ok(schema)
            }
            Format::ArrowFile => {
                ipc_checks::check_file(&file, len)?;
                Ok(FileReader::try_new_buffered(rewound(&file)?, None)?.schema())
            }
            Format::ArrowStream => {
                ipc_checks::check_stream(&file, len)?;
                Ok(StreamReader::try_new_buffered(rewound(&file)?, None)?.schema())
            }
            Format::Lines | Format::Csv => unreachable!("a columnar format"),
        })
        .with_context(context)?;
        Ok(Columnar {
            name,
            format,
            file,
            schema,
            parquet,
        })
    }

    /// The number of rows, when the footer says (Parquet).
    pub fn rows(&self) -> Option<u64> {
        let (meta, _) = self.parquet.as_ref()?;
        Some(meta.metadata().file_metadata().num_rows().max(0) as u64)
    }

    /// The input's schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The key column: `column` by name (`--column NAME`), the `field`th
    /// (1-based, `--field N`), or the only column; its type must have a
    /// key encoding.
    pub fn key_column(&self, column: Option<&str>, field: Option<u32>) -> Result<KeyColumn> {
        let fields = self.schema.fields();
        let listing = || {
            fields
                .iter()
                .map(|f| format!("{} ({})", f.name(), f.data_type()))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let index = if let Some(name) = column {
            self.schema.index_of(name).map_err(|_| {
                anyhow!(
                    "{} has no column {name:?}; its columns: {}",
                    self.name,
                    listing()
                )
            })?
        } else if let Some(n) = field {
            let i = n as usize - 1;
            if i >= fields.len() {
                bail!(
                    "{} has {} columns, so no --field {n}; its columns: {}",
                    self.name,
                    fields.len(),
                    listing()
                );
            }
            i
        } else if fields.len() == 1 {
            0
        } else {
            bail!(
                "{} has {} columns: name the key column with --column NAME; its columns: {}",
                self.name,
                fields.len(),
                listing()
            );
        };
        let field = &fields[index];
        let mut key = KeyColumn {
            index,
            name: field.name().clone(),
            data_type: field.data_type().clone(),
            kind: KeyKind::Unrecorded,
        };
        key.kind = lesshash::arrow::key_kind_of(field.data_type())
            .map_err(|e| anyhow!("{} cannot be a key column: {e}", key.describe(&self.name)))?;
        Ok(key)
    }

    /// The number of non-null keys in `key`'s column from the Parquet
    /// footer alone: the rows less the nulls the column statistics count
    /// (the rows where a row group has no null count). `None` for Arrow
    /// IPC, whose footer does not count rows.
    ///
    /// The rows are the footer's claim, which sizes the filter: the key
    /// column's page headers are checked first, so that a claim its pages
    /// do not back fails here instead of sizing a filter for rows the file
    /// does not hold.
    pub fn counted_keys(&self, key: &KeyColumn) -> Result<Option<u64>> {
        let Some((meta, footer)) = self.parquet.as_ref() else {
            return Ok(None);
        };
        let leaves = self.leaves(Some(key.index));
        let mut keys = 0u64;
        for (g, rg) in meta.metadata().row_groups().iter().enumerate() {
            guard::decode(|| {
                parquet_checks::check_row_group(&self.file, *footer, meta.metadata(), g, &leaves)
            })
            .with_context(|| format!("cannot read input {} as Parquet", self.name))?;
            let rows = rg.num_rows().max(0) as u64;
            let nulls = match leaves[..] {
                [leaf] => rg
                    .column(leaf)
                    .statistics()
                    .and_then(|s| s.null_count_opt())
                    .unwrap_or(0),
                _ => 0,
            };
            keys += rows.saturating_sub(nulls);
        }
        Ok(Some(keys))
    }

    /// The Parquet leaf columns under top-level column `column` (`None`:
    /// all of them).
    fn leaves(&self, column: Option<usize>) -> Vec<usize> {
        let Some((meta, _)) = self.parquet.as_ref() else {
            return Vec::new();
        };
        let descr = meta.parquet_schema();
        (0..descr.num_columns())
            .filter(|&leaf| column.is_none_or(|c| descr.get_column_root_idx(leaf) == c))
            .collect()
    }

    /// The number of non-null keys in `key`'s column, read (that column
    /// only).
    pub fn count_keys(&self, key: &KeyColumn) -> Result<u64> {
        let mut n = 0u64;
        for batch in self.batches(Some(key.index))? {
            let (_, batch) = batch?;
            let column = batch.column(0);
            n += (column.len() - column.logical_null_count()) as u64;
        }
        Ok(n)
    }

    /// The record batches, each with the index of the Parquet row group it
    /// is from (0 for Arrow IPC), in input order; `column`: that column
    /// only. The iterator owns what it reads, so that a thread of its own
    /// can run it (`read_ahead`).
    pub fn batches(&self, column: Option<usize>) -> Result<Batches> {
        let name = self.name.clone();
        let what = self.format.name();
        let context = move || format!("cannot read input {name} as {what}");
        let projection = column.map(|c| vec![c]);
        let inner = guard::decode(|| {
            Ok(match self.format {
                Format::Parquet => {
                    let (meta, footer) = self.parquet.clone().expect("Parquet metadata");
                    let mask = match column {
                        Some(c) => ProjectionMask::roots(meta.parquet_schema(), [c]),
                        None => ProjectionMask::all(),
                    };
                    Inner::Parquet(Box::new(ParquetGroups {
                        groups: 0..meta.metadata().num_row_groups(),
                        file: self.file.try_clone()?,
                        meta,
                        footer,
                        mask,
                        leaves: self.leaves(column),
                        current: None,
                    }))
                }
                Format::ArrowFile => Inner::Arrow(Box::new(FileReader::try_new_buffered(
                    rewound(&self.file)?,
                    projection,
                )?)),
                Format::ArrowStream => Inner::Arrow(Box::new(StreamReader::try_new_buffered(
                    rewound(&self.file)?,
                    projection,
                )?)),
                Format::Lines | Format::Csv => unreachable!("a columnar format"),
            })
        })
        .with_context(context.clone())?;
        Ok(Batches {
            inner,
            context: Box::new(context),
        })
    }

    /// The Parquet writer's properties for output of this input: each
    /// column's codec and dictionary choice as in the input's first row
    /// group (Snappy and dictionaries for Arrow input, or a Parquet file
    /// without row groups), its key-value metadata
    /// (pandas' among them), no row-group size limit (the caller cuts row
    /// groups where the input's end).
    pub fn writer_properties(&self) -> WriterProperties {
        let mut props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(None)
            .set_max_row_group_bytes(None);
        if let Some((meta, _)) = &self.parquet {
            let file = meta.metadata().file_metadata();
            if let Some(kv) = file.key_value_metadata() {
                // The writer adds the Arrow schema of what it writes.
                let kept = kv.iter().filter(|kv| kv.key != "ARROW:schema").cloned();
                props = props.set_key_value_metadata(Some(kept.collect()));
            }
            if let Some(rg) = meta.metadata().row_groups().first() {
                for column in rg.columns() {
                    let path = column.column_path().clone();
                    props = props
                        .set_column_compression(path.clone(), column.compression())
                        .set_column_dictionary_enabled(path, dictionary_kept(column));
                }
            }
        }
        props.build()
    }
}

/// Whether the writer of `column` kept every data page dictionary-encoded,
/// so that its output column is worth a dictionary too. A writer that fell
/// back to plain pages (a column of mostly distinct values: ids, measures)
/// or never tried says that a dictionary would be built (a hash table of
/// every value, the dearest part of writing such a column) and thrown
/// away.
/// Without page statistics, the writer's default (a dictionary) stays.
fn dictionary_kept(column: &ColumnChunkMetaData) -> bool {
    let dictionary =
        |e: &Encoding| matches!(e, Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY);
    column.dictionary_page_offset().is_some()
        && match (
            column.page_encoding_stats_mask(),
            column.page_encoding_stats(),
        ) {
            (Some(mask), _) => {
                mask.is_only(Encoding::PLAIN_DICTIONARY) || mask.is_only(Encoding::RLE_DICTIONARY)
            }
            (None, Some(stats)) => stats
                .iter()
                .filter(|s| matches!(s.page_type, PageType::DATA_PAGE | PageType::DATA_PAGE_V2))
                .all(|s| dictionary(&s.encoding)),
            (None, None) => true,
        }
}

/// Reads `buf.len()` bytes of `file` at `offset` (not moving the offset
/// that clones of the file share).
fn read_at(file: &File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(not(unix))]
    {
        use std::io::Read;
        let mut f = file.try_clone()?;
        f.seek(SeekFrom::Start(offset))?;
        f.read_exact(buf)
    }
}

/// A clone of `file` (the same open file, sharing its offset: one reader
/// at a time) read from its start.
pub fn rewound(file: &File) -> Result<File> {
    let mut f = file.try_clone().context("cannot reopen the input")?;
    f.seek(SeekFrom::Start(0))
        .context("cannot rewind the input")?;
    Ok(f)
}

/// The record batches of a columnar input ([`Columnar::batches`]).
pub struct Batches {
    inner: Inner,
    /// The context of a read error: the input's name and format.
    context: Box<dyn Fn() -> String + Send>,
}

/// The readers behind [`Batches`].
enum Inner {
    /// Parquet, row group after row group.
    Parquet(Box<ParquetGroups>),
    /// An Arrow IPC file or stream reader.
    Arrow(Box<dyn RecordBatchReader + Send>),
    /// A decoder panicked (its error returned): nothing more is read.
    Stopped,
}

/// A Parquet file's row groups, each read by a reader of its own once its
/// column chunks' page headers pass [`parquet_checks::check_row_group`],
/// and its rows counted against its claim.
struct ParquetGroups {
    groups: std::ops::Range<usize>,
    file: File,
    meta: ArrowReaderMetadata,
    footer: Footer,
    mask: ProjectionMask,
    /// The leaf columns read (whose page headers are checked).
    leaves: Vec<usize>,
    /// The row group being read, its reader and the rows it gave so far.
    current: Option<(usize, ParquetRecordBatchReader, u64)>,
}

impl ParquetGroups {
    /// The next batch and its row group.
    fn next_batch(&mut self) -> Option<Result<(usize, RecordBatch)>> {
        loop {
            if let Some((group, reader, rows)) = &mut self.current {
                match reader.next() {
                    Some(Ok(batch)) => {
                        *rows += batch.num_rows() as u64;
                        return Some(Ok((*group, batch)));
                    }
                    Some(Err(e)) => return Some(Err(anyhow::Error::new(e))),
                    None => {
                        let claimed = self.meta.metadata().row_group(*group).num_rows();
                        if *rows != claimed as u64 {
                            return Some(Err(anyhow!(
                                "row group {group} claims {claimed} rows, but {rows} were read: \
                                 the file is damaged"
                            )));
                        }
                        self.current = None;
                    }
                }
            }
            let group = self.groups.next()?;
            let reader = parquet_checks::check_row_group(
                &self.file,
                self.footer,
                self.meta.metadata(),
                group,
                &self.leaves,
            )
            .and_then(|()| Ok(self.file.try_clone()?))
            .and_then(|f| {
                Ok(
                    ParquetRecordBatchReaderBuilder::new_with_metadata(f, self.meta.clone())
                        .with_row_groups(vec![group])
                        .with_projection(self.mask.clone())
                        .with_batch_size(BATCH_ROWS)
                        .build()?,
                )
            });
            match reader {
                Ok(reader) => self.current = Some((group, reader, 0)),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl Iterator for Batches {
    /// A batch and the row group it is from.
    type Item = Result<(usize, RecordBatch)>;

    fn next(&mut self) -> Option<Self::Item> {
        let inner = &mut self.inner;
        let result = guard::decode(|| {
            Ok(match inner {
                Inner::Arrow(reader) => reader
                    .next()
                    .map(|b| b.map(|b| (0, b)).map_err(anyhow::Error::new)),
                Inner::Parquet(groups) => groups.next_batch(),
                Inner::Stopped => None,
            })
        });
        let item = match result {
            Ok(item) => item?,
            // A panic: the reader is not used again.
            Err(e) => {
                self.inner = Inner::Stopped;
                Err(e)
            }
        };
        Some(item.with_context(|| (self.context)()))
    }
}

/// Runs `iter` on a thread of its own, `READ_AHEAD` items ahead of the
/// caller, so that reading and decoding the next batches overlaps the work
/// on this one. `None` ends the items; a receiver that sees the channel
/// closed without it knows the thread stopped (a panic). The thread ends
/// when the items do, at the first error, or when the receiver is dropped.
fn read_ahead<T: Send + 'static>(
    iter: impl Iterator<Item = Result<T>> + Send + 'static,
) -> Result<Receiver<Result<Option<T>>>> {
    let (tx, rx) = sync_channel(READ_AHEAD);
    std::thread::Builder::new()
        .name("lesshash-reader".into())
        .spawn(move || {
            for item in iter {
                let failed = item.is_err();
                if tx.send(item.map(Some)).is_err() || failed {
                    return;
                }
            }
            let _ = tx.send(Ok(None));
        })
        .context("cannot start the reader thread")?;
    Ok(rx)
}

/// The selection of a batch's rows: those whose key is possibly in the
/// filter (`invert`: certainly not). A null key is not in the filter: its
/// row is dropped, or kept by `invert`.
pub fn selection(answers: &BooleanArray, invert: bool) -> BooleanArray {
    let mut keep = answers.values().clone();
    if let Some(nulls) = answers.nulls() {
        keep = &keep & nulls.inner();
    }
    if invert {
        keep = !&keep;
    }
    BooleanArray::new(keep, None)
}

/// The rows of `batch` that `mask` selects (no nulls in it), each column
/// filtered on the pool when there is one.
pub fn select_rows(
    batch: &RecordBatch,
    mask: &BooleanArray,
    pool: Option<&rayon::ThreadPool>,
) -> Result<RecordBatch> {
    let selected = mask.true_count();
    if selected == batch.num_rows() {
        return Ok(batch.clone());
    }
    let predicate = arrow_select::filter::FilterBuilder::new(mask)
        .optimize()
        .build();
    let columns: Vec<ArrayRef> = match pool {
        Some(pool) if batch.num_columns() > 1 => pool.install(|| {
            batch
                .columns()
                .par_iter()
                .map(|c| predicate.filter(c))
                .collect::<Result<_, _>>()
        }),
        _ => batch
            .columns()
            .iter()
            .map(|c| predicate.filter(c))
            .collect::<Result<_, _>>(),
    }
    .context("cannot select the rows")?;
    let options = arrow_array::RecordBatchOptions::new().with_row_count(Some(selected));
    RecordBatch::try_new_with_options(batch.schema(), columns, &options)
        .context("cannot select the rows")
}

/// A columnar output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutFormat {
    /// A Parquet file.
    Parquet,
    /// An Arrow IPC file (Feather v2).
    ArrowFile,
    /// An Arrow IPC stream.
    ArrowStream,
}

impl OutFormat {
    /// The format an output file's name asks for (`.parquet`, `.arrow`,
    /// `.feather`, `.arrows`), if it names one.
    pub fn of_name(path: &std::path::Path) -> Option<OutFormat> {
        let ext = path.extension()?.to_string_lossy().to_ascii_lowercase();
        Some(match ext.as_str() {
            "parquet" | "parq" | "pq" => OutFormat::Parquet,
            "arrow" | "feather" | "ipc" => OutFormat::ArrowFile,
            "arrows" => OutFormat::ArrowStream,
            _ => return None,
        })
    }

    /// The input's own format.
    pub fn of_input(format: Format) -> OutFormat {
        match format {
            Format::ArrowFile => OutFormat::ArrowFile,
            Format::ArrowStream => OutFormat::ArrowStream,
            _ => OutFormat::Parquet,
        }
    }

    /// A name for messages.
    pub fn name(self) -> &'static str {
        match self {
            OutFormat::Parquet => "Parquet",
            OutFormat::ArrowFile => "Arrow IPC file",
            OutFormat::ArrowStream => "Arrow IPC stream",
        }
    }
}

/// Where selected batches are written: Parquet, row group by row group,
/// each column encoded on the pool; or Arrow IPC, batch by batch.
pub enum Sink<W: Write + Send> {
    /// Parquet, row group by row group.
    Parquet(Box<ParquetSink<W>>),
    /// An Arrow IPC file.
    ArrowFile(FileWriter<W>),
    /// An Arrow IPC stream.
    ArrowStream(StreamWriter<W>),
}

impl<W: Write + Send> Sink<W> {
    /// A writer of `format` with the input's `schema` (`source`: the
    /// input's name, for messages; Parquet: `props`; `follow_groups`: row
    /// groups end where the caller says, as the input's do, instead of
    /// every [`ROW_GROUP_ROWS`] rows).
    pub fn new(
        format: OutFormat,
        out: W,
        source: &str,
        schema: &SchemaRef,
        props: WriterProperties,
        follow_groups: bool,
    ) -> Result<Self> {
        let context = || format!("cannot write {} output", format.name());
        Ok(match format {
            OutFormat::Parquet => {
                // Types Parquet cannot hold as they are: stored as pyarrow
                // stores them, the input's schema recorded beside them.
                let stored = stored_types::stored_schema(schema);
                let mut props = props;
                add_encoded_arrow_schema_to_metadata(schema, &mut props);
                let options = ArrowWriterOptions::new()
                    .with_properties(props)
                    .with_skip_arrow_metadata(true);
                let writer = ArrowWriter::try_new_with_options(
                    out,
                    stored.clone().unwrap_or_else(|| Arc::clone(schema)),
                    options,
                )
                .with_context(context)?;
                let (writer, factory) = writer.into_serialized_writer().with_context(context)?;
                Sink::Parquet(Box::new(ParquetSink {
                    writer,
                    factory,
                    convert: stored.is_some(),
                    source: source.to_string(),
                    schema: stored.unwrap_or_else(|| Arc::clone(schema)),
                    columns: None,
                    rows: 0,
                    groups: 0,
                    max_rows: (!follow_groups).then_some(ROW_GROUP_ROWS),
                }))
            }
            OutFormat::ArrowFile => {
                Sink::ArrowFile(FileWriter::try_new(out, schema).with_context(context)?)
            }
            OutFormat::ArrowStream => {
                Sink::ArrowStream(StreamWriter::try_new(out, schema).with_context(context)?)
            }
        })
    }

    /// Appends `batch` (its rows' columns encoded on the pool when there is
    /// one).
    pub fn write(&mut self, batch: &RecordBatch, pool: Option<&rayon::ThreadPool>) -> Result<()> {
        match self {
            Sink::Parquet(sink) => sink.write(batch, pool),
            Sink::ArrowFile(w) => w.write(batch).map_err(|e| {
                let replaced = e.to_string().contains("Dictionary replacement");
                let e = anyhow::Error::new(e);
                if replaced {
                    e.context(
                        "an Arrow IPC file holds one dictionary per column, and this input's \
                         dictionaries change between batches (a Parquet file's, between row \
                         groups): write an Arrow IPC stream (-o OUT.arrows) or Parquet instead",
                    )
                } else {
                    e
                }
            }),
            Sink::ArrowStream(w) => w.write(batch).map_err(anyhow::Error::new),
        }
    }

    /// Ends the current Parquet row group (an input row group ended); for
    /// Arrow IPC, nothing.
    pub fn end_group(&mut self, pool: Option<&rayon::ThreadPool>) -> Result<()> {
        match self {
            Sink::Parquet(sink) => sink.end_group(pool),
            _ => Ok(()),
        }
    }

    /// Writes the footer; the writer is then flushed by the caller.
    pub fn finish(self, pool: Option<&rayon::ThreadPool>) -> Result<()> {
        match self {
            Sink::Parquet(mut sink) => {
                sink.end_group(pool)?;
                let ParquetSink { writer, .. } = *sink;
                writer.close()?;
            }
            Sink::ArrowFile(mut w) => w.finish()?,
            Sink::ArrowStream(mut w) => w.finish()?,
        }
        Ok(())
    }
}

/// A Parquet file written row group by row group, each column's writer
/// fed on the pool (the parallel column encoding of the parquet crate's
/// `ArrowColumnWriter`): the same bytes on any number of threads.
pub struct ParquetSink<W: Write + Send> {
    writer: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    /// The schema written (`stored_types`: the input's, or its stored form).
    schema: SchemaRef,
    /// Whether batches are converted to `schema` first.
    convert: bool,
    /// The input's name, for messages.
    source: String,
    /// The current row group's column writers (one per leaf column).
    columns: Option<Vec<ArrowColumnWriter>>,
    /// Rows in the current row group.
    rows: usize,
    /// Row groups written.
    groups: usize,
    /// Rows after which a row group ends by itself, if any.
    max_rows: Option<usize>,
}

impl<W: Write + Send> ParquetSink<W> {
    /// Appends `batch`, ending row groups every `max_rows` rows if set.
    fn write(&mut self, batch: &RecordBatch, pool: Option<&rayon::ThreadPool>) -> Result<()> {
        let mut batch = match self.convert {
            true => stored_types::to_stored(batch, &self.schema, &self.source)?,
            false => batch.clone(),
        };
        while batch.num_rows() > 0 {
            let room = self.max_rows.map_or(usize::MAX, |m| m - self.rows);
            let now = batch.slice(0, room.min(batch.num_rows()));
            batch = batch.slice(now.num_rows(), batch.num_rows() - now.num_rows());
            self.write_part(&now, pool)?;
            if self.max_rows.is_some_and(|m| self.rows >= m) {
                self.end_group(pool)?;
            }
        }
        Ok(())
    }

    /// Appends `batch` to the current row group (started if none is),
    /// its leaf columns encoded on the pool.
    fn write_part(&mut self, batch: &RecordBatch, pool: Option<&rayon::ThreadPool>) -> Result<()> {
        if self.columns.is_none() {
            self.columns = Some(self.factory.create_column_writers(self.groups)?);
        }
        let columns = self.columns.as_mut().expect("created above");
        let mut leaves = Vec::with_capacity(columns.len());
        for (field, column) in self.schema.fields().iter().zip(batch.columns()) {
            leaves.extend(compute_leaves(field, column)?);
        }
        match pool {
            Some(pool) if columns.len() > 1 => pool.install(|| {
                columns
                    .par_iter_mut()
                    .zip(leaves.par_iter())
                    .try_for_each(|(w, leaf)| w.write(leaf))
            })?,
            _ => {
                for (w, leaf) in columns.iter_mut().zip(&leaves) {
                    w.write(leaf)?;
                }
            }
        }
        self.rows += batch.num_rows();
        Ok(())
    }

    /// Closes the current row group's column writers (on the pool) and
    /// appends their chunks to the file, if a row group is open.
    fn end_group(&mut self, pool: Option<&rayon::ThreadPool>) -> Result<()> {
        let Some(columns) = self.columns.take() else {
            return Ok(());
        };
        let chunks = match pool {
            Some(pool) if columns.len() > 1 => pool.install(|| {
                columns
                    .into_par_iter()
                    .map(ArrowColumnWriter::close)
                    .collect::<Result<Vec<_>, _>>()
            })?,
            _ => columns
                .into_iter()
                .map(ArrowColumnWriter::close)
                .collect::<Result<Vec<_>, _>>()?,
        };
        let mut group = self.writer.next_row_group()?;
        for chunk in chunks {
            chunk.append_to_row_group(&mut group)?;
        }
        group.close()?;
        self.groups += 1;
        self.rows = 0;
        Ok(())
    }
}

/// A reader of the input's batches: on a thread of its own with a pool
/// (reading overlaps the work), on the calling thread without.
pub enum Feed {
    /// Read on the calling thread.
    Here(Batches),
    /// Read on a thread of its own (`read_ahead`).
    Ahead(Receiver<Result<Option<(usize, RecordBatch)>>>),
}

impl Feed {
    /// `batches`, read ahead on a thread of its own if `ahead`.
    pub fn new(batches: Batches, ahead: bool) -> Result<Self> {
        Ok(if ahead {
            Feed::Ahead(read_ahead(batches)?)
        } else {
            Feed::Here(batches)
        })
    }
}

impl Iterator for Feed {
    type Item = Result<(usize, RecordBatch)>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Feed::Here(b) => b.next(),
            Feed::Ahead(rx) => match rx.recv() {
                Ok(item) => item.transpose(),
                Err(_) => Some(Err(anyhow!("the reader thread stopped"))),
            },
        }
    }
}
