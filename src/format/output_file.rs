//! Where an output file goes, shared by the library's
//! `BloomFilter::write_file` and the command line's `-o` (through
//! `internals::output_file`, so the rules exist once without becoming
//! public API; a node of its own in the deps table, below `format::frame`,
//! which the Bloom filter's format and the Count-Min sketch's build on):
//!
//! * symbolic links are followed, so a write replaces the link's target,
//!   not the link ([`resolve_links`]);
//! * FIFOs and character devices are written in place, never renamed over
//!   ([`is_stream`]);
//! * everything else is written to a new temporary file beside the target
//!   and renamed over it ([`create_temp_beside`]).
//!
//! Plain `std::io` only: each caller words its own errors.

#![forbid(unsafe_code)]

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// `path` with every symbolic link in its last component followed (a
/// dangling link gives the path it points to, which the write then
/// creates).
pub fn resolve_links(path: &Path) -> io::Result<PathBuf> {
    let mut path = path.to_path_buf();
    // Linux's own limit on a chain of links (ELOOP).
    for _ in 0..40 {
        match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = fs::read_link(&path)?;
                path = match path.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            _ => return Ok(path),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// Whether writes to a file of this type go to a reader or a device rather
/// than to stored bytes: a FIFO or a character device.
pub fn is_stream(t: &fs::FileType) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        t.is_fifo() || t.is_char_device()
    }
    #[cfg(not(unix))]
    {
        let _ = t;
        false
    }
}

/// The directory a file at `target` lives in (`.` for a bare name).
pub fn parent_dir(target: &Path) -> &Path {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// A new, empty temporary file beside `target`, named
/// `.<name>.<pid>.<n>.tmp` (hidden, and never an existing file: it is
/// created with `create_new`), and its path.
pub fn create_temp_beside(target: &Path, name: &std::ffi::OsStr) -> io::Result<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = parent_dir(target);
    loop {
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(
            ".{}.{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let tmp = dir.join(tmp_name);
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}
