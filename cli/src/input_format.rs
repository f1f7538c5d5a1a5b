//! The formats an input is read in: lines, CSV, Parquet, Arrow IPC.

/// The format an input is read in, once decided (the command line's `InputArgs::detect`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One record per line.
    Lines,
    /// CSV records.
    Csv,
    /// A Parquet file.
    Parquet,
    /// An Arrow IPC file (Feather v2).
    ArrowFile,
    /// An Arrow IPC stream.
    ArrowStream,
}

impl Format {
    /// Whether records are read as Arrow record batches.
    pub fn is_columnar(self) -> bool {
        matches!(
            self,
            Format::Parquet | Format::ArrowFile | Format::ArrowStream
        )
    }

    /// A name for messages.
    pub fn name(self) -> &'static str {
        match self {
            Format::Lines => "lines",
            Format::Csv => "CSV",
            Format::Parquet => "Parquet",
            Format::ArrowFile => "Arrow IPC file",
            Format::ArrowStream => "Arrow IPC stream",
        }
    }
}
