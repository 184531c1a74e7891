//! The Python exception hierarchy of `cannery`, and the conversions from the
//! Rust crates' error enums into it.
//!
//! ```text
//! CanneryError(Exception)
//! ├── InvalidInputError(CanneryError, ValueError)   bad argument values
//! │   ├── TableError           lengths that are no usable table; damaged table files
//! │   ├── DecompressError      malformed or truncated compressed data
//! │   ├── HistogramError       malformed histogram data; merging different settings
//! │   └── CorpusError          damaged or unreadable snapshot / page files
//! ├── IncompressibleError      the page does not compress below 4096 bytes
//! ├── TrainError               training could not produce a table (e.g. too few pages)
//! ├── CaptureError             reading a live process's memory failed
//! └── ExportError              a table cannot be written in the requested export form
//! ```
//!
//! The classes are made at module initialisation with `type(name, bases,
//! ...)`, because PyO3's `create_exception!` takes a single base and the
//! invalid-input classes derive from both `CanneryError` and `ValueError`.
//! Objects of the wrong *type* (a `str` where a buffer is expected) raise
//! Python's own `TypeError`; operating-system errors stay `OSError`s.
//! This file holds no codec logic.

use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyDict, PyTuple, PyType};

/// One exception class of the hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Base of every cannery exception.
    Cannery,
    /// Bad argument values.
    InvalidInput,
    /// Unusable table lengths or damaged table files.
    Table,
    /// Malformed compressed data.
    Decompress,
    /// Malformed histograms or incompatible merges.
    Histogram,
    /// Damaged snapshot or page files.
    Corpus,
    /// A page that does not compress below the page size.
    Incompressible,
    /// Training failed.
    Train,
    /// Capture failed.
    Capture,
    /// Export failed.
    Export,
}

impl Kind {
    const ALL: [Kind; 10] = [
        Kind::Cannery,
        Kind::InvalidInput,
        Kind::Table,
        Kind::Decompress,
        Kind::Histogram,
        Kind::Corpus,
        Kind::Incompressible,
        Kind::Train,
        Kind::Capture,
        Kind::Export,
    ];

    fn index(self) -> usize {
        Kind::ALL.iter().position(|&k| k == self).expect("listed")
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Cannery => "CanneryError",
            Kind::InvalidInput => "InvalidInputError",
            Kind::Table => "TableError",
            Kind::Decompress => "DecompressError",
            Kind::Histogram => "HistogramError",
            Kind::Corpus => "CorpusError",
            Kind::Incompressible => "IncompressibleError",
            Kind::Train => "TrainError",
            Kind::Capture => "CaptureError",
            Kind::Export => "ExportError",
        }
    }

    fn doc(self) -> &'static str {
        match self {
            Kind::Cannery => "Base class of every error cannery raises.",
            Kind::InvalidInput => {
                "An argument has an invalid value (also a ValueError): an unknown mode, \
                 a page longer than 4096 bytes, a buffer whose items are not bytes, ..."
            }
            Kind::Table => {
                "Code lengths that are no usable table, a table a mode or format cannot \
                 use, or a damaged table file."
            }
            Kind::Decompress => "Compressed data that is malformed, truncated or too long.",
            Kind::Histogram => {
                "Malformed histogram data, or histograms gathered with different \
                 settings that cannot be merged."
            }
            Kind::Corpus => "A snapshot or page file that is damaged or not what it claims.",
            Kind::Incompressible => {
                "The page does not compress below 4096 bytes; zswap would store it raw."
            }
            Kind::Train => "Training could not produce a table (for example, too few pages).",
            Kind::Capture => "Capturing pages of a live process failed.",
            Kind::Export => "The table cannot be exported in the requested form.",
        }
    }

    fn parent(self) -> Option<Kind> {
        match self {
            Kind::Cannery => None,
            Kind::InvalidInput
            | Kind::Incompressible
            | Kind::Train
            | Kind::Capture
            | Kind::Export => Some(Kind::Cannery),
            Kind::Table | Kind::Decompress | Kind::Histogram | Kind::Corpus => {
                Some(Kind::InvalidInput)
            }
        }
    }
}

static TYPES: [GILOnceCell<Py<PyType>>; 10] = [const { GILOnceCell::new() }; 10];

/// Creates the classes and adds them to `m`.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    for kind in Kind::ALL {
        // A second initialisation (a re-import in the same interpreter) reuses
        // the first classes, so `except` clauses keep matching.
        if let Some(ty) = TYPES[kind.index()].get(py) {
            m.add(kind.name(), ty.bind(py))?;
            continue;
        }
        let mut bases: Vec<Bound<'_, PyType>> = match kind.parent() {
            None => vec![py.get_type::<PyException>()],
            Some(p) => vec![class(py, p).clone()],
        };
        if kind == Kind::InvalidInput {
            bases.push(py.get_type::<PyValueError>());
        }
        let dict = PyDict::new(py);
        dict.set_item("__doc__", kind.doc())?;
        dict.set_item("__module__", "cannery._native")?;
        let ty = py
            .get_type::<PyType>()
            .call1((kind.name(), PyTuple::new(py, bases)?, dict))?
            .downcast_into::<PyType>()?;
        m.add(kind.name(), &ty)?;
        let _ = TYPES[kind.index()].set(py, ty.unbind());
    }
    Ok(())
}

fn class(py: Python<'_>, kind: Kind) -> &Bound<'_, PyType> {
    TYPES[kind.index()]
        .get(py)
        .expect("exception classes are created when cannery._native is imported")
        .bind(py)
}

/// An exception of `kind` with `message`.
pub fn error(kind: Kind, message: impl std::fmt::Display) -> PyErr {
    Python::with_gil(|py| PyErr::from_type(class(py, kind).clone(), message.to_string()))
}

/// Shorthand for [`Kind::InvalidInput`].
pub fn invalid(message: impl std::fmt::Display) -> PyErr {
    error(Kind::InvalidInput, message)
}

/// An I/O error on `path` as Python raises one: `OSError(errno, strerror,
/// filename)`, which Python turns into the matching subclass
/// (`FileNotFoundError`, `PermissionError`, …) with `filename` set.
pub fn os_error(path: &std::path::Path, e: &std::io::Error) -> PyErr {
    // "No such file or directory (os error 2)" -> the C library's words.
    let text = e.to_string();
    let strerror = text.split(" (os error").next().unwrap_or(&text).to_string();
    match e.raw_os_error() {
        Some(errno) => {
            pyo3::exceptions::PyOSError::new_err((errno, strerror, path.display().to_string()))
        }
        None => pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())),
    }
}

/// Writes `bytes` to `path` atomically (a temporary file renamed into
/// place, so an interrupted write never leaves a partial file), replacing
/// an existing file as Python's `open(path, "wb")` would. I/O errors are
/// `OSError`.
pub fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> PyResult<()> {
    use cannery_files::output::{write_file, Existing};
    write_file(path, bytes, Existing::Replace)
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))
}
