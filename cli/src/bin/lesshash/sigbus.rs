//! A mapped filter file that shrinks under the map (truncated, or rewritten
//! in place by another program) makes the next read of a page past its new
//! end raise SIGBUS, which would kill the process silently, mid-output
//! (docs/format.md, "A file truncated or rewritten in place"). [`arm`]
//! installs a handler that writes one line naming the file and exits with
//! status 2 (an error, as every other), so the user sees why the output
//! stopped.
//!
//! The handler runs in signal context: it only reads a message made
//! before, calls `write(2)` and `_exit(2)` (both async-signal-safe), and
//! allocates, locks and unwinds nothing. SIGBUS has no safe wrapper
//! (signal-hook refuses it, as a signal whose handler must not return), so
//! this is the binary's one `unsafe`: `sigaction` through libc.

#![allow(unsafe_code)]

use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The line the handler writes, made when the filter is mapped.
static MESSAGE: OnceLock<Box<[u8]>> = OnceLock::new();

/// Whether a thread is already in the handler.
static FIRED: AtomicBool = AtomicBool::new(false);

/// The exit status after SIGBUS: 2, the status of every error.
const STATUS: libc::c_int = 2;

/// Installs the handler for the filter file at `path`, about to be mapped
/// (before the map exists, so that the checksum's read of every page is
/// covered too; a file that is not mapped in the end raises no SIGBUS).
/// Once per process (one filter per command); a failure to install leaves
/// the default action (the process dies of SIGBUS), as before.
pub(crate) fn arm(path: &Path) {
    let line = format!(
        "lesshash: filter file {} changed size while in use (truncated or rewritten in place \
         by another program); the output stops here and is incomplete\n",
        path.display()
    );
    if MESSAGE.set(line.into_bytes().into_boxed_slice()).is_err() {
        return;
    }
    // SAFETY: `sigaction` with a zeroed struct whose handler is a plain
    // `extern "C" fn(c_int)` (no SA_SIGINFO), an empty mask, and a null
    // old-action pointer: the documented use. The handler is
    // async-signal-safe (see `on_sigbus`).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigbus as extern "C" fn(libc::c_int) as libc::sighandler_t;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
}

/// Writes the message made by [`arm`] to stderr and exits: only
/// async-signal-safe calls (`OnceLock::get` is an atomic load of a value
/// set before the handler was installed; the flag an atomic swap).
extern "C" fn on_sigbus(_: libc::c_int) {
    // Several threads may fault on the same pages at once: the first one
    // in writes the line and exits; the others wait for that exit (which
    // ends every thread), so the line is written once and whole.
    if FIRED.swap(true, Ordering::SeqCst) {
        loop {
            // SAFETY: `pause` only waits for a signal (async-signal-safe).
            unsafe {
                libc::pause();
            }
        }
    }
    if let Some(line) = MESSAGE.get() {
        // SAFETY: `write(2)` from a live buffer of `line.len()` bytes; its
        // result is ignored (nothing can be done about a failed write here).
        unsafe {
            libc::write(libc::STDERR_FILENO, line.as_ptr().cast(), line.len());
        }
    }
    // SAFETY: `_exit` ends the process without running anything else.
    unsafe { libc::_exit(STATUS) }
}
