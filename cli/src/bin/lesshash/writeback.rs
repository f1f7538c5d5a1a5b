//! The disk write of a `-o` file started while it is being written, so
//! that the sync before its rename (output.rs) finds little left to do.
//!
//! An atomic `-o` is synced before it is renamed into place, or a crash
//! could leave an empty file under the output's name. Synced only at the
//! end, the whole output is written to the disk after the work is done: a
//! serial tail that no thread count shortens. Asking the kernel to start
//! writing each range as soon as it is complete (Linux's
//! `sync_file_range(SYNC_FILE_RANGE_WRITE)`, which does not wait, as
//! RocksDB's `bytes_per_sync` does) overlaps the disk with the work.
//! Elsewhere the file is written as is.
#![allow(unsafe_code)]

use std::fs::File;
use std::io::{self, Write};

/// How much is written between two starts of write-back: large enough
/// that the calls cost nothing, small enough that little is left at the end.
const STEP: u64 = 8 << 20;

/// A file whose write-back starts every [`STEP`] bytes written.
pub(crate) struct WriteBehind<'a> {
    file: &'a File,
    written: u64,
    /// Write-back was started for `..started`.
    started: u64,
}

impl<'a> WriteBehind<'a> {
    /// Writes to `file` from its current position, assumed its start.
    pub fn new(file: &'a File) -> Self {
        Self {
            file,
            written: 0,
            started: 0,
        }
    }
}

impl Write for WriteBehind<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        if self.written - self.started >= STEP {
            start_writeback(self.file, self.started, self.written - self.started);
            self.started = self.written;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// Starts writing `len` bytes of `file` from `offset` to the disk, without
/// waiting. Advice only: an error here is one the final sync reports.
#[cfg(target_os = "linux")]
fn start_writeback(file: &File, offset: u64, len: u64) {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (i64::try_from(offset), i64::try_from(len)) else {
        return;
    };
    // SAFETY: sync_file_range reads no memory of ours; the descriptor is
    // open for the call (borrowed from a live `File`), and any error is
    // returned, not raised.
    unsafe {
        libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE);
    }
}

#[cfg(not(target_os = "linux"))]
fn start_writeback(_: &File, _: u64, _: u64) {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek};

    /// Every byte arrives, in order, across many write-back steps.
    #[test]
    fn writes_everything() {
        let mut file = tempfile_in_target();
        let data: Vec<u8> = (0..(STEP as usize * 2 + 12_345)).map(|i| i as u8).collect();
        {
            let mut w = io::BufWriter::with_capacity(1 << 20, WriteBehind::new(&file));
            w.write_all(&data).unwrap();
            w.flush().unwrap();
        }
        file.rewind().unwrap();
        let mut back = Vec::new();
        file.read_to_end(&mut back).unwrap();
        assert!(back == data);
    }

    fn tempfile_in_target() -> File {
        let path = std::env::temp_dir().join(format!("lesshash-writeback-{}", std::process::id()));
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        file
    }
}
