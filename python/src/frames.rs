//! A filter as two frames, for a transport that guarantees integrity itself
//! (`lesshash.dask`'s serialiser): the 64-byte header and the payload,
//! without the format's trailing checksum (the crate's
//! `BloomFilter::payload_bytes` / `from_header_and_payload`).
//!
//! Sending lends the payload without copying it: [`Payload`] is a
//! read-only Python buffer over the filter's own bits, holding the filter
//! in an `Arc` so that the bits stay in place and unchanged while any view
//! of them lives (a change to the filter meanwhile copies them first; see
//! `Backing::Lent`). Receiving reads the received buffer in place and
//! copies it once into the new filter's aligned bits.

// The buffer protocol is a C interface: filling a `Py_buffer`, and reading
// a received buffer as a slice. Nothing else here is unsafe.
#![allow(unsafe_code)]

use std::borrow::Cow;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;

/// The payload of a filter: a read-only buffer (`memoryview(payload)`) of
/// the format's little-endian words. Made by `BloomFilter._frames()`.
#[pyclass(module = "lesshash", frozen)]
pub struct Payload {
    bits: PayloadBits,
}

enum PayloadBits {
    /// An owned filter's bits, lent (little-endian platforms: the bits are
    /// the payload as they are).
    Lent(Arc<lesshash::BloomFilter>),
    /// A copy: a map's payload, or a big-endian platform's converted bits.
    Copied(Vec<u8>),
}

impl Payload {
    pub fn lent(filter: Arc<lesshash::BloomFilter>) -> Self {
        let bits = match filter.payload_bytes() {
            Cow::Borrowed(_) => PayloadBits::Lent(filter),
            Cow::Owned(bytes) => PayloadBits::Copied(bytes),
        };
        Self { bits }
    }

    pub fn copied(bytes: Vec<u8>) -> Self {
        Self {
            bits: PayloadBits::Copied(bytes),
        }
    }

    fn bytes(&self) -> &[u8] {
        match &self.bits {
            // Borrowed, as `lent` checked (the platform does not change).
            PayloadBits::Lent(f) => match f.payload_bytes() {
                Cow::Borrowed(b) => b,
                Cow::Owned(_) => unreachable!("lent only where the bits are the payload"),
            },
            PayloadBits::Copied(b) => b,
        }
    }
}

#[pymethods]
impl Payload {
    fn __len__(&self) -> usize {
        self.bytes().len()
    }

    /// # Safety
    /// Called by CPython with a `Py_buffer` to fill (the buffer protocol).
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let bytes = slf.get().bytes();
        let len = isize::try_from(bytes.len())
            .map_err(|_| PyValueError::new_err("the payload is larger than a buffer can be"))?;
        // SAFETY: `view` is CPython's, to fill. The bytes live as long as
        // `slf` (a frozen object whose bits never change: the `Arc` keeps
        // the filter alive and the filter copies before any change while
        // it is shared), and `PyBuffer_FillInfo` stores a new reference to
        // `slf` in the view, so they outlive every consumer. Read-only (1):
        // a request for a writable buffer fails with `BufferError`.
        let rc = unsafe {
            ffi::PyBuffer_FillInfo(
                view,
                slf.as_ptr(),
                bytes.as_ptr().cast::<c_void>().cast_mut(),
                len,
                1,
                flags,
            )
        };
        if rc == 0 {
            Ok(())
        } else {
            Err(PyErr::fetch(slf.py()))
        }
    }
}

/// `f` on the bytes of a received buffer (`bytes`, `bytearray`, a
/// `memoryview`, a NumPy array: any C-contiguous buffer), read in place.
/// The GIL is released around `f`: the buffer must not change meanwhile,
/// which holds for a transport's received frame (nobody else has it).
pub fn with_received<R: Send>(
    obj: &Bound<'_, PyAny>,
    what: &str,
    f: impl FnOnce(&[u8]) -> R + Send,
) -> PyResult<R> {
    let buffer = PyBuffer::<u8>::get(obj)
        .map_err(|e| PyValueError::new_err(format!("`{what}` must be a bytes-like object: {e}")))?;
    if !buffer.is_c_contiguous() {
        return Err(PyValueError::new_err(format!(
            "`{what}` must be a contiguous buffer"
        )));
    }
    let (ptr, len) = (buffer.buf_ptr() as usize, buffer.len_bytes());
    Ok(obj.py().detach(|| {
        // SAFETY: `buffer` holds the exporter's buffer (its memory stays
        // in place until `buffer` is dropped, after this closure); it is
        // C-contiguous with one-byte items (`PyBuffer<u8>` checked the
        // format), so `len` bytes from `ptr` are one initialised
        // allocation; and nothing writes to it while the slice lives (the
        // contract above).
        let bytes = unsafe { std::slice::from_raw_parts(ptr as *const u8, len) };
        f(bytes)
    }))
}
