//! Turning Python objects into byte slices: one page, or a collection of pages.
//!
//! A *page* is any object with the buffer protocol whose items are single
//! bytes: `bytes`, `bytearray`, `memoryview`, `array.array('B')`, a NumPy
//! `uint8` (or `int8`) array, ... at most 4096 bytes long. `bytes` objects
//! are read in place; other buffers are copied once into a `bytes` object,
//! because the stable ABI of Python 3.9 (this module is abi3-py39) has no
//! buffer access from native code. A copy of a 4 KiB page costs well under a
//! microsecond, against tens of microseconds to compress it.
//!
//! A *collection of pages* is a 2-D buffer (rows are pages, e.g. a NumPy array
//! of shape `(n, 4096)`), a 1-D buffer holding whole 4096-byte pages back to
//! back (the content of a raw `.pages` file), or any iterable of pages; every
//! page of a collection is exactly 4096 bytes (statistics, sizes and ratios
//! are per 4 KiB page, as zswap stores them).
//!
//! This file decides nothing about compression; it only borrows bytes.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView};

use crate::errors::invalid;

/// Size of a memory page (the workspace's one definition, owned by the
/// capture crate).
pub use cannery_codec::constants::PAGE_SIZE;

/// A buffer as `bytes`, with its memoryview shape.
struct Flat<'py> {
    bytes: Bound<'py, PyBytes>,
    shape: Vec<usize>,
}

fn describe(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// `obj` as bytes plus its shape, or `None` if it has no buffer protocol.
fn flat<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Option<Flat<'py>>> {
    if let Ok(b) = obj.downcast::<PyBytes>() {
        let n = b.as_bytes().len();
        return Ok(Some(Flat {
            bytes: b.clone(),
            shape: vec![n],
        }));
    }
    if let Ok(b) = obj.downcast::<PyByteArray>() {
        let n = b.len();
        return Ok(Some(Flat {
            bytes: PyBytes::new(obj.py(), &b.to_vec()),
            shape: vec![n],
        }));
    }
    let Ok(view) = PyMemoryView::from(obj) else {
        return Ok(None);
    };
    let itemsize: usize = view.getattr("itemsize")?.extract()?;
    if itemsize != 1 {
        let format: String = view.getattr("format")?.extract()?;
        return Err(invalid(format!(
            "{what} must be a buffer of bytes (uint8), but this {} has items of \
             {itemsize} bytes (format {format:?}); convert it, e.g. with .view(numpy.uint8)",
            describe(obj)
        )));
    }
    let shape: Vec<usize> = view.getattr("shape")?.extract()?;
    let bytes = view.call_method0("tobytes")?.downcast_into::<PyBytes>()?;
    Ok(Some(Flat { bytes, shape }))
}

/// A 1-D byte buffer, read in place when it is `bytes`. Page-size limits
/// are the caller's (the codec reports them as typed errors).
pub fn page<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Bound<'py, PyBytes>> {
    let Some(f) = flat(obj, what)? else {
        return Err(PyTypeError::new_err(format!(
            "{what} must be a bytes-like object (bytes, bytearray, memoryview, numpy uint8 \
             array), not {}",
            describe(obj)
        )));
    };
    if f.shape.len() > 1 {
        return Err(invalid(format!(
            "{what} must be one-dimensional, but has shape {:?}; pass one row",
            f.shape
        )));
    }
    Ok(f.bytes)
}

/// A collection of pages, each exactly 4096 bytes.
pub enum Pages<'py> {
    /// One buffer split into rows of `row` bytes.
    Rows {
        /// All the bytes.
        bytes: Bound<'py, PyBytes>,
        /// Bytes per page.
        row: usize,
    },
    /// Separate page objects.
    List(Vec<Bound<'py, PyBytes>>),
}

impl Pages<'_> {
    /// The pages as slices (valid while `self` lives; `Send`, so usable
    /// with the GIL released).
    pub fn slices(&self) -> Vec<&[u8]> {
        match self {
            Pages::Rows { bytes, row } => {
                let b = bytes.as_bytes();
                if *row == 0 {
                    return Vec::new();
                }
                b.chunks(*row).collect()
            }
            Pages::List(v) => v.iter().map(|b| b.as_bytes()).collect(),
        }
    }
}

/// A collection of pages from a 2-D buffer, a 1-D buffer of whole pages, or
/// an iterable of page buffers.
pub fn pages<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Pages<'py>> {
    if let Some(f) = flat(obj, what)? {
        return match f.shape.as_slice() {
            [n] => {
                if n % PAGE_SIZE != 0 {
                    return Err(invalid(format!(
                        "{what}: a single buffer is read as whole 4096-byte pages back to \
                         back, but this one is {n} bytes; pass a list of pages instead"
                    )));
                }
                Ok(Pages::Rows {
                    bytes: f.bytes,
                    row: PAGE_SIZE,
                })
            }
            [_, row] => {
                if *row != PAGE_SIZE {
                    let how = if *row > PAGE_SIZE {
                        "longer"
                    } else {
                        "shorter"
                    };
                    return Err(invalid(format!(
                        "{what}: rows of {row} bytes are {how} than a 4096-byte page; \
                         every page of a collection is exactly 4096 bytes"
                    )));
                }
                Ok(Pages::Rows {
                    bytes: f.bytes,
                    row: *row,
                })
            }
            shape => Err(invalid(format!(
                "{what} must be a 2-D array of pages (one per row), not shape {shape:?}"
            ))),
        };
    }
    let iter = obj.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be an iterable of pages or a 2-D uint8 array, not {}",
            describe(obj)
        ))
    })?;
    let mut v = Vec::new();
    for (i, item) in iter.enumerate() {
        let b = page(&item?, &format!("{what}[{i}]"))?;
        let n = b.as_bytes().len();
        if n != PAGE_SIZE {
            return Err(invalid(format!(
                "{what}[{i}] is {n} bytes; every page of a collection is exactly 4096"
            )));
        }
        v.push(b);
    }
    Ok(Pages::List(v))
}
