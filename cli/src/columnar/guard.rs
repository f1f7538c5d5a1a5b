//! The boundary between the command line and the Parquet and Arrow IPC
//! decoders, for input that may be damaged.
//!
//! The checks in [`super::ipc`] and [`super::parquet`] reject what the
//! decoders would allocate or index on the file's word alone; what the
//! decoders still panic on (an invariant of their own broken by a file
//! that passed those checks) is caught here and becomes the error of the
//! call that read, so the command fails with its one line naming the
//! file, on every thread count, and removes its temporary output as on
//! any error. The panic's message is kept for that line instead of being
//! printed by the default hook.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

use anyhow::{Result, anyhow};

thread_local! {
    /// Whether this thread is inside [`decode`]: its panics are caught.
    static GUARDED: Cell<bool> = const { Cell::new(false) };
    /// The message of the last panic caught on this thread.
    static MESSAGE: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Installs the panic hook once: inside [`decode`] a panic's message is
/// kept for the error; anywhere else the default hook prints it (a panic
/// of lesshash's own is a bug, to be seen whole).
fn install() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) {
                let message = info
                    .payload()
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| info.payload().downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic without a message".into());
                MESSAGE.with(|m| *m.borrow_mut() = Some(message));
            } else {
                default(info);
            }
        }));
    });
}

/// Runs `f`, a call into a decoder over untrusted bytes; a panic in it is
/// returned as an error ("the decoder failed on damaged input: ...").
///
/// The decoder's state is not used again after a panic: callers drop the
/// reader that panicked (see `Batches`), so no broken invariant is seen.
pub(crate) fn decode<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    install();
    let outer = GUARDED.with(|g| g.replace(true));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(outer));
    result.unwrap_or_else(|_| {
        let message = MESSAGE
            .with(|m| m.borrow_mut().take())
            .unwrap_or_else(|| "a panic without a message".into());
        Err(anyhow!(
            "the file is damaged (the decoder stopped: {message})"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_with_its_message() {
        let e = decode::<()>(|| panic!("offset {} beyond {}", 9, 3)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the file is damaged (the decoder stopped: offset 9 beyond 3)"
        );
        assert_eq!(decode(|| Ok(7)).unwrap(), 7);
        // Outside `decode` nothing is guarded.
        assert!(!GUARDED.with(Cell::get));
    }
}
