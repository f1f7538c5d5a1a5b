//! What `build` keeps of a stream (stdin, a pipe, a FIFO) read without
//! `--items`, until it knows how many lines there are and can size the
//! filter: the keys' 16-byte hashes (or, for the `Independent` scheme, the
//! input's bytes) in memory up to a budget, the rest in a temporary file.

use std::fs::File;
use std::io::{self, BufWriter, Cursor, Read, Seek, SeekFrom, Write};

use anyhow::{Context, Result, bail};
use bytemuck::Pod;

/// The memory budget of a spool: 64 MiB, the hashes of 4 Mi keys. Why
/// this much: below it nothing touches the disk, so most builds (and every
/// test of the tool but those that set [`BUDGET_VAR`]) keep their hashes
/// in memory, at a cost of the same order as the filter they are for (a
/// blocked filter for 4 million keys is 4.7 MiB at 1%, 18.5 MiB at 1e-6).
/// Why no more: above it memory stays flat however long the input, and the
/// rest goes to the disk at 16 bytes a key, written and read back once,
/// sequentially (8 million short lines from a pipe, one thread, on the
/// 2-core development machine: 0.49-0.65 s with every hash through the
/// file, 0.43-0.53 s with all of them in memory).
pub(crate) const DEFAULT_BUDGET: usize = 64 << 20;

/// The environment variable that sets the budget, in bytes (0: everything
/// to the disk); the tests use a small one to reach the file.
pub(crate) const BUDGET_VAR: &str = "LESSHASH_SPILL_BYTES";

/// The budget: [`BUDGET_VAR`] if set, else [`DEFAULT_BUDGET`].
pub(crate) fn budget() -> Result<usize> {
    match std::env::var_os(BUDGET_VAR) {
        None => Ok(DEFAULT_BUDGET),
        Some(v) => match v.to_str().and_then(|s| s.trim().parse().ok()) {
            Some(bytes) => Ok(bytes),
            None => bail!("{BUDGET_VAR} must be a number of bytes, got {v:?}"),
        },
    }
}

/// Items of type `T` in order: the first ones in memory, up to the budget,
/// the rest in a temporary file.
///
/// The file is unnamed ([`tempfile::tempfile`]: `O_TMPFILE` on Linux, or
/// created and unlinked at once elsewhere on Unix), in the system's
/// temporary directory (`TMPDIR`, else `/tmp`), so nothing can be left
/// behind: the OS frees it when the file is closed or the process ends,
/// normally, on an error, or killed by any signal (SIGINT, SIGTERM,
/// SIGPIPE, SIGKILL) without a handler having to run.
pub(crate) struct Spool<T> {
    mem: Vec<T>,
    /// The most items `mem` holds.
    budget: usize,
    file: Option<BufWriter<File>>,
    /// Items pushed, in memory and in the file.
    len: u64,
}

impl<T: Pod> Spool<T> {
    /// An empty spool keeping up to `budget_bytes` of items in memory.
    pub fn new(budget_bytes: usize) -> Self {
        Self {
            mem: Vec::new(),
            budget: budget_bytes / size_of::<T>(),
            file: None,
            len: 0,
        }
    }

    /// Items pushed.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Appends `items`: to memory while they fit in the budget, then (from
    /// the first push that does not fit on) to the file.
    pub fn push(&mut self, items: &[T]) -> Result<()> {
        self.len += items.len() as u64;
        let file = match &mut self.file {
            Some(file) => file,
            None if self.mem.len() + items.len() <= self.budget => {
                // Grown by doubling, but never past the budget.
                let need = self.mem.len() + items.len();
                if need > self.mem.capacity() {
                    let cap = (2 * self.mem.capacity()).clamp(need, self.budget.max(need));
                    self.mem.reserve_exact(cap - self.mem.len());
                }
                self.mem.extend_from_slice(items);
                return Ok(());
            }
            None => self
                .file
                .insert(BufWriter::new(tempfile::tempfile().with_context(|| {
                    format!("cannot create a temporary file in {}", temp_dir())
                })?)),
        };
        file.write_all(bytemuck::cast_slice(items))
            .with_context(|| format!("cannot write the temporary file in {}", temp_dir()))
    }

    /// Whether the items went past the budget to the file.
    #[cfg(test)]
    fn spilled(&self) -> bool {
        self.file.is_some()
    }

    /// Hands the items to `f` in order: those in memory in one slice, then
    /// those in the file in slices of at most `chunk` items. Fails if the
    /// file cannot be read back whole.
    pub fn drain(self, chunk: usize, mut f: impl FnMut(&[T])) -> Result<()> {
        let Self { mem, file, len, .. } = self;
        let mut seen = mem.len() as u64;
        if !mem.is_empty() {
            f(&mem);
        }
        drop(mem);
        if let Some(file) = file {
            let mut file = rewound(file)?;
            let mut buf = vec![T::zeroed(); chunk.max(1)];
            loop {
                let bytes = fill(&mut file, bytemuck::cast_slice_mut(&mut buf))
                    .with_context(|| format!("cannot read the temporary file in {}", temp_dir()))?;
                if bytes == 0 {
                    break;
                }
                if bytes % size_of::<T>() != 0 {
                    break; // a torn item: reported as a short file below
                }
                let items = &buf[..bytes / size_of::<T>()];
                seen += items.len() as u64;
                f(items);
            }
        }
        if seen != len {
            bail!(
                "the temporary file in {} was cut short: {seen} of {len} items read back",
                temp_dir()
            );
        }
        Ok(())
    }
}

impl Spool<u8> {
    /// The bytes pushed, in order, as a reader.
    pub fn into_reader(self) -> Result<Box<dyn Read + Send>> {
        let mem = Cursor::new(self.mem);
        Ok(match self.file {
            None => Box::new(mem),
            Some(file) => Box::new(mem.chain(rewound(file)?)),
        })
    }
}

/// The file written, flushed and rewound for reading.
fn rewound(file: BufWriter<File>) -> Result<File> {
    file.into_inner()
        .map_err(io::IntoInnerError::into_error)
        .and_then(|mut f| f.seek(SeekFrom::Start(0)).map(|_| f))
        .with_context(|| format!("cannot write the temporary file in {}", temp_dir()))
}

/// Reads into `buf` until it is full or the input ends; the bytes read.
fn fill(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The directory temporary files go to, for messages.
fn temp_dir() -> String {
    std::env::temp_dir().display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The items come back in order, whole, from memory alone, from memory
    /// and the file, and from the file alone (budget 0), in chunks of any
    /// size; the bytes' reader gives the bytes back.
    #[test]
    fn items_come_back_in_order() {
        let items: Vec<u128> = (0..10_000u128).map(|i| i * 0x1_0000_0001).collect();
        for (budget, spills) in [(1 << 20, false), (16 * 1000, true), (0, true)] {
            for chunk in [1, 7, 4096, 1 << 20] {
                let mut spool = Spool::new(budget);
                for part in items.chunks(333) {
                    spool.push(part).unwrap();
                }
                assert_eq!(spool.len(), items.len() as u64);
                assert_eq!(spool.spilled(), spills, "budget {budget}");
                assert!(spool.mem.capacity() <= budget / 16);
                let mut back = Vec::new();
                spool
                    .drain(chunk, |part| {
                        assert!(part.len() <= chunk || back.is_empty());
                        back.extend_from_slice(part);
                    })
                    .unwrap();
                assert!(back == items, "budget {budget} chunk {chunk}");
            }
            let bytes: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
            let mut spool = Spool::new(budget / 16);
            for part in bytes.chunks(999) {
                spool.push(part).unwrap();
            }
            let mut back = Vec::new();
            spool.into_reader().unwrap().read_to_end(&mut back).unwrap();
            assert!(back == bytes, "budget {budget}");
        }
    }
}
