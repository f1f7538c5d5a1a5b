//! The C allocator told to keep the memory it is given back (glibc).
//!
//! Reading Parquet or Arrow allocates each batch's buffers afresh, a few
//! megabytes at a time, and frees them a moment later. By default glibc
//! serves such sizes with a map of their own, unmapped when freed, and
//! hands the top of the heap back past 128 KiB free, so every batch
//! touches new pages (a page fault each). With these thresholds the freed
//! buffers are reused: the process's peak memory is the same, it is just
//! not returned before the process ends (a command, not a server).
#![allow(unsafe_code)]

/// Serves allocations below 32 MiB from the heap and keeps up to 256 MiB
/// free at its top. Called first thing in `main`.
pub(crate) fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt sets two of glibc's thresholds (it takes the
    // allocator's own lock); it reads and writes no memory of ours.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
    }
}
