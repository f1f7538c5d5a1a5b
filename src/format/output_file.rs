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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_dir_of_a_bare_name_is_the_current_directory() {
        assert_eq!(parent_dir(Path::new("f.lhbf")), Path::new("."));
        assert_eq!(parent_dir(Path::new("a/b/f.lhbf")), Path::new("a/b"));
        assert_eq!(parent_dir(Path::new("/f.lhbf")), Path::new("/"));
    }

    #[test]
    fn temporary_files_are_new_hidden_and_beside_the_target() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.lhbf");
        let (a, _) = create_temp_beside(&target, "out.lhbf".as_ref()).unwrap();
        let (b, _) = create_temp_beside(&target, "out.lhbf".as_ref()).unwrap();
        assert_ne!(a, b);
        for t in [&a, &b] {
            assert_eq!(t.parent(), Some(dir.path()));
            let name = t.file_name().unwrap().to_str().unwrap();
            assert!(
                name.starts_with(".out.lhbf.") && name.ends_with(".tmp"),
                "{name}"
            );
            assert_eq!(fs::metadata(t).unwrap().len(), 0);
        }
        assert!(!target.exists());
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_to_their_end_and_streams_known() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // a -> b -> c (relative, dangling): the write goes to c.
        symlink("b", d.join("a")).unwrap();
        symlink(d.join("c"), d.join("b")).unwrap();
        assert_eq!(resolve_links(&d.join("a")).unwrap(), d.join("c"));
        assert_eq!(resolve_links(&d.join("plain")).unwrap(), d.join("plain"));
        // A loop is an error, not a hang.
        symlink("y", d.join("x")).unwrap();
        symlink("x", d.join("y")).unwrap();
        assert!(resolve_links(&d.join("x")).is_err());

        File::create(d.join("plain")).unwrap();
        assert!(!is_stream(
            &fs::metadata(d.join("plain")).unwrap().file_type()
        ));
        assert!(is_stream(&fs::metadata("/dev/null").unwrap().file_type()));
    }
}
