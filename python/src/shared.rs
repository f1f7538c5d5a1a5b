//! A filter or sketch shared by Python threads.
//!
//! The Python classes are `frozen` (no PyO3 borrow flag, so never "Already
//! mutably borrowed") and keep the crate's value in a [`Shared`]: a
//! reader-writer lock that queries share and inserts take alone. Two rules
//! keep it free of deadlocks with the GIL (or, on free-threaded builds,
//! with CPython's per-object critical sections):
//!
//! * a thread never *blocks* on the lock while attached to the interpreter:
//!   it waits with the GIL released (a batch insert holding the lock has
//!   released the GIL and takes it back only after unlocking);
//! * nothing runs Python code while holding the lock: keys are converted to
//!   bytes or integers first, then the lock is taken for the crate call.
//!
//! One-key calls (`key in bf`, `bf.add(key)`, getters) hold the GIL
//! throughout. On GIL builds they skip the lock when the GIL alone shows
//! that nobody else uses the value: every use *without* the GIL registers
//! in a counter while holding the GIL, before releasing it, and unregisters
//! after taking it back. So a thread holding the GIL that sees no
//! registered writer may read, and one that sees nobody registered may
//! write, until it releases the GIL: nobody can register meanwhile. This
//! saves the lock's two atomic read-modify-writes: 3.7 of 32 ns of a
//! `key in bf` loop on a filter in the cache, 5.6 of 39 on a 1e6-key filter
//! (the 2-core development machine, the same build with and without).
//! Free-threaded builds (`Py_GIL_DISABLED`) have no such guarantee and take
//! the lock every time.
//!
//! Poisoning is ignored: a panic inside the crate (a bug) reaches the
//! caller as `PanicException`, and the value stays usable as the
//! interrupted call left it. Inserts only ever set bits (or raise
//! counters), so every key added before is still a member; the interrupted
//! batch may be partly in.

// The value is behind an `UnsafeCell` guarded by the lock or, for one-key
// calls on GIL builds, by the GIL and the counters (module docs).
#![allow(unsafe_code)]

use std::cell::UnsafeCell;
#[cfg(Py_GIL_DISABLED)]
use std::sync::TryLockError;
#[cfg(not(Py_GIL_DISABLED))]
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{PoisonError, RwLock};

use pyo3::prelude::*;

pub struct Shared<T> {
    lock: RwLock<()>,
    value: UnsafeCell<T>,
    /// Threads registered to read or write the value without the GIL
    /// (changed only with the GIL held, which orders them; atomics only
    /// because `Shared` is shared).
    #[cfg(not(Py_GIL_DISABLED))]
    readers: AtomicUsize,
    #[cfg(not(Py_GIL_DISABLED))]
    writers: AtomicUsize,
}

// SAFETY: the value is reached only through `&T` under the read lock (or
// the GIL with no registered writer) and through `&mut T` under the write
// lock (or the GIL with nobody registered), so `Shared<T>` is a lock like
// `RwLock<T>`, which is `Sync` for `T: Send + Sync`.
unsafe impl<T: Send + Sync> Sync for Shared<T> {}

/// A registration (module docs): undone on drop, with the GIL held again
/// (`py.detach` returns, or unwinds, attached).
#[cfg(not(Py_GIL_DISABLED))]
struct Registered<'a>(&'a AtomicUsize);

#[cfg(not(Py_GIL_DISABLED))]
impl<'a> Registered<'a> {
    fn new(_py: Python<'_>, counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Relaxed);
        Self(counter)
    }
}

#[cfg(not(Py_GIL_DISABLED))]
impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Relaxed);
    }
}

impl<T: Send + Sync> Shared<T> {
    pub fn new(value: T) -> Self {
        Self {
            lock: RwLock::new(()),
            value: UnsafeCell::new(value),
            #[cfg(not(Py_GIL_DISABLED))]
            readers: AtomicUsize::new(0),
            #[cfg(not(Py_GIL_DISABLED))]
            writers: AtomicUsize::new(0),
        }
    }

    /// `f` on the value with the GIL held: a one-key query, a getter. When
    /// the value is in use by a writer, waits for it without the GIL.
    #[inline]
    pub fn read<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&T) -> R + Send) -> R {
        #[cfg(not(Py_GIL_DISABLED))]
        if self.writers.load(Relaxed) == 0 {
            // SAFETY: attached (`py`) with no writer registered: any writer
            // must register first, which needs the GIL this thread holds
            // until `f` returns; a writer holding the GIL is this thread.
            return f(unsafe { &*self.value.get() });
        }
        #[cfg(Py_GIL_DISABLED)]
        match self.lock.try_read() {
            // SAFETY: the read lock is held until `f` returns.
            Ok(_guard) => return f(unsafe { &*self.value.get() }),
            Err(TryLockError::Poisoned(_guard)) => return f(unsafe { &*self.value.get() }),
            Err(TryLockError::WouldBlock) => {}
        }
        self.read_detached(py, f)
    }

    /// `f` on the value to change it, with the GIL held: a one-key insert.
    /// When the value is in use, waits for it without the GIL.
    #[inline]
    pub fn write<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut T) -> R + Send) -> R {
        #[cfg(not(Py_GIL_DISABLED))]
        if self.writers.load(Relaxed) == 0 && self.readers.load(Relaxed) == 0 {
            // SAFETY: attached with nobody registered: nobody else can use
            // the value until this thread releases the GIL, after `f`.
            return f(unsafe { &mut *self.value.get() });
        }
        #[cfg(Py_GIL_DISABLED)]
        match self.lock.try_write() {
            // SAFETY: the write lock is held until `f` returns.
            Ok(_guard) => return f(unsafe { &mut *self.value.get() }),
            Err(TryLockError::Poisoned(_guard)) => return f(unsafe { &mut *self.value.get() }),
            Err(TryLockError::WouldBlock) => {}
        }
        self.write_detached(py, f)
    }

    /// `f` on the value without the GIL: batch queries, copies,
    /// serialisation (work long enough that other threads should run
    /// meanwhile), and waiting for the lock.
    pub fn read_detached<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&T) -> R + Send) -> R {
        #[cfg(not(Py_GIL_DISABLED))]
        let _registered = Registered::new(py, &self.readers);
        py.detach(|| {
            let _guard = self.lock.read().unwrap_or_else(PoisonError::into_inner);
            // SAFETY: the read lock is held until `f` returns.
            f(unsafe { &*self.value.get() })
        })
    }

    /// `f` on the value to change it, without the GIL: batch inserts.
    pub fn write_detached<R: Send>(&self, py: Python<'_>, f: impl FnOnce(&mut T) -> R + Send) -> R {
        #[cfg(not(Py_GIL_DISABLED))]
        let _registered = Registered::new(py, &self.writers);
        py.detach(|| {
            let _guard = self.lock.write().unwrap_or_else(PoisonError::into_inner);
            // SAFETY: the write lock is held until `f` returns.
            f(unsafe { &mut *self.value.get() })
        })
    }
}

/// Python's `==` / `!=` between two shared values, by `equal` (both read
/// together as in [`read_both`]); other comparisons are `NotImplemented`.
pub fn compare<T: Send + Sync>(
    py: Python<'_>,
    a: &Shared<T>,
    b: &Shared<T>,
    op: pyo3::basic::CompareOp,
    equal: impl FnOnce(&T, &T) -> Result<bool, lesshash::Error> + Send,
) -> PyResult<Py<PyAny>> {
    use pyo3::basic::CompareOp;
    let equal = || read_both(py, a, b, equal).map_err(crate::errors::to_py);
    Ok(match op {
        CompareOp::Eq => equal()?.into_pyobject(py)?.to_owned().into_any().unbind(),
        CompareOp::Ne => (!equal()?)
            .into_pyobject(py)?
            .to_owned()
            .into_any()
            .unbind(),
        _ => py.NotImplemented(),
    })
}

/// `f` on `a` and `b` read together, without the GIL. The locks are taken
/// in address order, so that `f(a, b)` in one thread and `f(b, a)` in
/// another cannot wait for each other; `a` and `b` the same value is read
/// under one lock (a second read lock by the same thread can wait behind a
/// queued writer forever).
pub fn read_both<T: Send + Sync, R: Send>(
    py: Python<'_>,
    a: &Shared<T>,
    b: &Shared<T>,
    f: impl FnOnce(&T, &T) -> R + Send,
) -> R {
    if std::ptr::eq(a, b) {
        return a.read_detached(py, |a| f(a, a));
    }
    #[cfg(not(Py_GIL_DISABLED))]
    let _registered = (
        Registered::new(py, &a.readers),
        Registered::new(py, &b.readers),
    );
    py.detach(|| {
        let (first, second) = if first_is_a(a, b) { (a, b) } else { (b, a) };
        let _first = first.lock.read().unwrap_or_else(PoisonError::into_inner);
        let _second = second.lock.read().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: both read locks are held until `f` returns.
        unsafe { f(&*a.value.get(), &*b.value.get()) }
    })
}

/// `f` changing `a` from `b` (which must be another value), without the
/// GIL; the locks in address order, as in [`read_both`].
pub fn write_from<T: Send + Sync, R: Send>(
    py: Python<'_>,
    a: &Shared<T>,
    b: &Shared<T>,
    f: impl FnOnce(&mut T, &T) -> R + Send,
) -> R {
    assert!(!std::ptr::eq(a, b), "write_from: the same value twice");
    #[cfg(not(Py_GIL_DISABLED))]
    let _registered = (
        Registered::new(py, &a.writers),
        Registered::new(py, &b.readers),
    );
    py.detach(|| {
        let (_a, _b);
        if first_is_a(a, b) {
            _a = a.lock.write().unwrap_or_else(PoisonError::into_inner);
            _b = b.lock.read().unwrap_or_else(PoisonError::into_inner);
        } else {
            _b = b.lock.read().unwrap_or_else(PoisonError::into_inner);
            _a = a.lock.write().unwrap_or_else(PoisonError::into_inner);
        }
        // SAFETY: `a`'s write lock and `b`'s read lock are held until `f`
        // returns, and `a` and `b` are different values.
        unsafe { f(&mut *a.value.get(), &*b.value.get()) }
    })
}

fn first_is_a<T>(a: &Shared<T>, b: &Shared<T>) -> bool {
    std::ptr::from_ref(a) < std::ptr::from_ref(b)
}
