//! Where `-o` writes, and guards against an output that is also an input.
//!
//! A regular file (or a path that does not exist yet) is written atomically:
//! a temporary file beside it, synced, then renamed over it. A symlink is
//! followed first, so its target is replaced and the link stays a link.
//! Pipes, character devices and `-o -` (stdout) are written straight
//! through: renaming over them would replace `/dev/null` with a regular file
//! as root, and send nothing to the reader of a FIFO.
//!
//! SIGINT and SIGTERM remove the temporary file before the process exits
//! (130, 143): a filter can be gigabytes, and an interrupted write must not
//! leave them on the disk.

use std::fs::{self, File};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once};

use anyhow::{Context, Result, bail};
use lesshash::{Block, BloomFilter, FilterView, MappedFilter};

use lesshash::internals::output_file::{create_temp_beside, is_stream, parent_dir, resolve_links};

use crate::writeback::WriteBehind;

/// Temporary files to remove if a signal ends the process. The signal
/// thread holds the lock until it exits, so no file is created after it
/// cleaned up, and a rename happens either wholly before or not at all.
static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn temporaries() -> MutexGuard<'static, Vec<PathBuf>> {
    // A panic while holding the lock leaves a list that is still valid.
    TEMPORARIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts (once) the thread that turns SIGINT/SIGTERM into cleanup and exit
/// status `128 + signal`, as a shell reports a process killed by it.
fn handle_signals() -> Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    static START: Once = Once::new();
    let mut result = Ok(());
    START.call_once(|| {
        result = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
            .context("cannot install the SIGINT/SIGTERM handler")
            .map(|mut signals| {
                std::thread::spawn(move || {
                    if let Some(signal) = signals.forever().next() {
                        let pending = temporaries();
                        for tmp in pending.iter() {
                            let _ = fs::remove_file(tmp);
                        }
                        std::process::exit(128 + signal);
                    }
                });
            });
    });
    result
}

/// A regular file's identity (device, inode): what `cat` compares to refuse
/// "input file is output file". Only regular files: a terminal or
/// `/dev/null` is routinely both stdin and stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    #[cfg(unix)]
    fn of(meta: &fs::Metadata) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        meta.is_file().then(|| FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    #[cfg(not(unix))]
    fn of(_: &fs::Metadata) -> Option<Self> {
        None
    }

    /// The file at `path` (symlinks followed), if it is a regular file.
    pub fn of_path(path: &Path) -> Option<Self> {
        fs::metadata(path).ok().as_ref().and_then(Self::of)
    }

    /// What stdout is open on, if a regular file (`> x`, `>> x`).
    pub fn of_stdout() -> Option<Self> {
        Self::of_fd(&std::io::stdout())
    }

    /// What stdin is open on, if a regular file (`< x`).
    pub fn of_stdin() -> Option<Self> {
        Self::of_fd(&std::io::stdin())
    }

    #[cfg(unix)]
    fn of_fd(fd: &impl std::os::fd::AsFd) -> Option<Self> {
        // fstat through a duplicate: std has no metadata() for stdio.
        let file = File::from(fd.as_fd().try_clone_to_owned().ok()?);
        Self::of(&file.metadata().ok()?)
    }

    #[cfg(not(unix))]
    fn of_fd<T>(_: &T) -> Option<Self> {
        None
    }
}

/// An input of a command, for the same-file checks: a path, or stdin.
pub(crate) fn input_id(path: Option<&Path>) -> Option<FileId> {
    match path {
        Some(p) => FileId::of_path(p),
        None => FileId::of_stdin(),
    }
}

/// Refuses to run when stdout is the regular file an input is read from:
/// `lesshash filter F -i x >> x` would read its own output back forever,
/// as `cat x >> x` would (which cat refuses the same way).
pub(crate) fn check_not_stdout(input: Option<FileId>, name: &str) -> Result<()> {
    if input.is_some() && input == FileId::of_stdout() {
        if name == "stdin" {
            bail!("stdin and stdout are the same file: refusing to read back what is written");
        }
        bail!("input file {name} is also stdout: refusing to read back what is written");
    }
    Ok(())
}

/// A filter file opened for queries (`query`, `filter`, `info`): a
/// regular file is memory-mapped, so a query reads only the pages its keys
/// fall in, not the whole file; anything else (a pipe, `/dev/stdin`) cannot
/// be mapped and is read whole into an aligned buffer.
pub(crate) enum Opened {
    // Boxed: a map's bookkeeping is ten times a Vec's.
    Mapped(Box<MappedFilter>),
    Read(Vec<Block>),
}

impl Opened {
    /// The filter, queried in place.
    pub(crate) fn view(&self) -> FilterView<'_> {
        match self {
            Opened::Mapped(m) => m.view(),
            Opened::Read(blocks) => {
                let bytes: &[u8] = bytemuck::cast_slice(blocks);
                let len = Self::read_len(bytes);
                // Validated in `open_filter`; the header is parsed again.
                FilterView::new_unverified(&bytes[..len])
                    .expect("bytes validated when the filter was read")
            }
        }
    }

    /// For a few keys: page faults read only the page a probe needs
    /// (`MappedFilter::advise_random`).
    pub(crate) fn advise_random(&self) {
        if let Opened::Mapped(m) = self {
            m.advise_random();
        }
    }

    /// For many keys or a whole-file pass: the file is read ahead
    /// (`MappedFilter::will_need`).
    pub(crate) fn will_need(&self) {
        if let Opened::Mapped(m) = self {
            m.will_need();
        }
    }

    /// The serialized length, from the header at the buffer's start.
    fn read_len(bytes: &[u8]) -> usize {
        lesshash::format::Header::parse(bytes)
            .map(|h| h.total_len() as usize)
            .unwrap_or(bytes.len())
    }
}

/// The filter file a query command reads, and how to check it.
#[derive(clap::Args, Debug)]
pub(crate) struct FilterArg {
    /// The filter file (a regular file is memory-mapped: only the pages
    /// the queries touch are read); `-` reads it from stdin.
    #[arg(value_name = "FILTER")]
    pub(crate) filter: PathBuf,

    /// Do not verify the payload's checksum: open in constant time instead
    /// of reading the whole file once. Header and length are still checked.
    /// For files checked before: a damaged payload then answers wrongly
    /// instead of being refused.
    #[arg(long)]
    pub(crate) skip_checksum: bool,
}

impl FilterArg {
    /// Opens the filter (see [`open_filter`]).
    pub(crate) fn open(&self) -> Result<Opened> {
        open_filter(&self.filter, !self.skip_checksum)
    }

    /// Whether the filter is read from stdin (`-`).
    pub(crate) fn is_stdin(&self) -> bool {
        self.filter.as_os_str() == "-"
    }
}

/// Opens the filter file a command queries, refusing first when stdout is
/// that file (`>> FILTER` would append text to it). `verify`: check the
/// payload's checksum (one pass over the file) as well as the header and
/// the length.
pub(crate) fn open_filter(path: &Path, verify: bool) -> Result<Opened> {
    // `-`: stdin, which is then read as the stream it is.
    let path = if path.as_os_str() == "-" {
        Path::new("/dev/stdin")
    } else {
        path
    };
    check_not_stdout(FileId::of_path(path), &path.display().to_string())?;
    let context = || format!("cannot load filter {}", path.display());
    let regular = fs::metadata(path).is_ok_and(|m| m.is_file());
    if regular {
        // Armed before the map exists: opening verifies the checksum by
        // reading every page, and a file cut meanwhile faults there.
        #[cfg(unix)]
        crate::sigbus::arm(path);
        let mapped = if verify {
            MappedFilter::open(path)
        } else {
            MappedFilter::open_unverified(path)
        };
        let mapped = mapped.with_context(context)?;
        return Ok(Opened::Mapped(Box::new(mapped)));
    }
    // A stream: read through the owned loader (its allocation grows with
    // what arrives, whatever the header claims, and it verifies the
    // checksum), then copy into a cache-line aligned buffer for the view.
    let file = File::open(path).with_context(context)?;
    let bytes = BloomFilter::read_from(file)
        .with_context(context)?
        .to_bytes();
    let mut blocks = vec![Block([0; 8]); bytes.len().div_ceil(64)];
    bytemuck::cast_slice_mut::<Block, u8>(&mut blocks)[..bytes.len()].copy_from_slice(&bytes);
    Ok(Opened::Read(blocks))
}

/// A filter output opened for writing (`-o`).
pub(crate) struct Output {
    /// The path as given, for messages.
    name: String,
    kind: Kind,
}

enum Kind {
    Stdout,
    /// A pipe or a character device: written in place.
    Direct(File),
    /// A regular file: `tmp` is renamed over `target` once complete.
    Atomic {
        file: File,
        tmp: PathBuf,
        target: PathBuf,
        dir: PathBuf,
    },
}

impl Output {
    /// Opens `-o path` (`-`: stdout) before the work starts, so that an
    /// unwritable directory fails at once, not after reading the input.
    /// `inputs`: the inputs' identities, checked against the output; for
    /// `merge`, whose inputs are loaded whole before the atomic rename,
    /// `allow_input` lets `-o` name one of them.
    pub fn create(
        path: &Path,
        inputs: &[(Option<FileId>, String)],
        allow_input: bool,
    ) -> Result<Self> {
        let name = path.display().to_string();
        if path.as_os_str() == "-" {
            for (id, input) in inputs {
                check_not_stdout(*id, input)?;
            }
            return Ok(Output {
                name: "stdout".into(),
                kind: Kind::Stdout,
            });
        }
        let meta = match fs::metadata(path) {
            Ok(meta) => Some(meta),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("cannot write {name}")),
        };
        if !allow_input {
            let out = meta.as_ref().and_then(FileId::of);
            for (id, input) in inputs {
                if id.is_some() && *id == out {
                    bail!(
                        "input file {input} is the output file {name}: refusing to overwrite \
                         the input"
                    );
                }
            }
        }
        let kind = match meta {
            Some(m) if m.is_dir() => bail!("cannot write {name}: it is a directory"),
            Some(m) if is_stream(&m.file_type()) => Kind::Direct(
                fs::OpenOptions::new()
                    .write(true)
                    .open(path)
                    .with_context(|| format!("cannot open {name} for writing"))?,
            ),
            Some(m) if !m.is_file() => bail!(
                "cannot write {name}: not a regular file, pipe or character device \
                 (refusing to replace it)"
            ),
            _ => atomic(path, meta.as_ref(), &name)?,
        };
        Ok(Output { name, kind })
    }

    /// The name for messages (`stdout` for `-`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Writes the filter and, for a regular file, syncs it and renames it
    /// into place.
    pub fn write_filter(self, filter: &BloomFilter) -> Result<()> {
        let what = match self.kind {
            Kind::Stdout => "cannot write the filter to stdout".to_string(),
            _ => format!("cannot write {}", self.name),
        };
        self.write_with(|w| filter.write_to(w).with_context(|| what.clone()))
    }

    /// Whether the output is stdout and stdout a terminal (where binary
    /// output is refused).
    pub fn is_terminal(&self) -> bool {
        matches!(self.kind, Kind::Stdout) && std::io::stdout().is_terminal()
    }

    /// Whether the output is stdout (`-o -`, or no `-o`).
    pub fn is_stdout(&self) -> bool {
        matches!(self.kind, Kind::Stdout)
    }

    /// Runs `write` on a buffered writer to the output, then flushes it and,
    /// for a regular file, syncs it and renames it into place. An error
    /// (from `write` or after) leaves no temporary file and the target as
    /// it was.
    pub fn write_with<T>(
        mut self,
        write: impl FnOnce(&mut (dyn Write + Send)) -> Result<T>,
    ) -> Result<T> {
        let name = self.name.clone();
        let stdout = self.is_stdout();
        let context = || {
            if stdout {
                "cannot write to stdout".to_string()
            } else {
                format!("cannot write {name}")
            }
        };
        const BUF: usize = 1 << 20;
        let result = match &mut self.kind {
            Kind::Stdout => {
                let mut w = BufWriter::with_capacity(BUF, std::io::stdout());
                let result = write(&mut w)?;
                w.flush().with_context(context)?;
                result
            }
            Kind::Direct(file) => {
                let mut w = BufWriter::with_capacity(BUF, file);
                let result = write(&mut w)?;
                w.flush().with_context(context)?;
                result
            }
            Kind::Atomic {
                file,
                tmp,
                target,
                dir,
            } => {
                // Its disk write started as it goes: the sync below then
                // waits for the last few megabytes only.
                let mut w = BufWriter::with_capacity(BUF, WriteBehind::new(file));
                let result = write(&mut w)?;
                w.flush().with_context(context)?;
                drop(w);
                file.sync_all()
                    .with_context(|| format!("cannot write {name}: syncing the temporary file"))?;
                {
                    // Under the lock: a signal now waits for the rename.
                    let mut pending = temporaries();
                    fs::rename(&*tmp, &*target).with_context(|| {
                        format!("cannot write {name}: renaming the temporary file")
                    })?;
                    pending.retain(|p| p != tmp);
                }
                // The rename is durable once the directory entry is.
                #[cfg(unix)]
                File::open(&*dir)
                    .and_then(|d| d.sync_all())
                    .with_context(|| format!("cannot write {name}: syncing the directory"))?;
                result
            }
        };
        Ok(result)
    }
}

impl Drop for Output {
    /// An output dropped before [`Output::write_filter`] completed (an error
    /// while reading the input, or while writing) leaves no temporary file.
    fn drop(&mut self) {
        if let Kind::Atomic { tmp, .. } = &self.kind {
            let mut pending = temporaries();
            if let Some(i) = pending.iter().position(|p| p == tmp) {
                let _ = fs::remove_file(tmp);
                pending.swap_remove(i);
            }
        }
    }
}

/// The temporary file beside the final target of `path` (symlinks
/// resolved, so the rename replaces the link's target, not the link).
fn atomic(path: &Path, existing: Option<&fs::Metadata>, name: &str) -> Result<Kind> {
    let target = resolve_links(path).with_context(|| format!("cannot write {name}"))?;
    let Some(file_name) = target.file_name() else {
        bail!("cannot write {name}: it has no file name");
    };
    let dir = parent_dir(&target).to_path_buf();
    handle_signals()?;
    let mut pending = temporaries();
    let (tmp, file) = create_temp_beside(&target, file_name).with_context(|| {
        format!(
            "cannot write {name}: creating a temporary file in {}",
            dir.display()
        )
    })?;
    pending.push(tmp.clone());
    drop(pending);
    // A replaced file keeps its permissions (as `sed -i` does); a failure
    // here leaves the default ones, which is no reason to stop.
    if let Some(meta) = existing {
        let _ = fs::set_permissions(&tmp, meta.permissions());
    }
    Ok(Kind::Atomic {
        file,
        tmp,
        target,
        dir,
    })
}
