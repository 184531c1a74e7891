//! Reading page files and corpora: `open_pages` (iterate the pages of one
//! snapshot or raw `.pages` file, as `bytes` or NumPy arrays) and
//! `open_corpus` (workload name → files).
//!
//! Snapshot decoding and corpus layout are `cannery_capture`'s; this file
//! adapts them to Python iteration and exceptions.

use std::path::PathBuf;
use std::sync::Mutex;

use cannery_capture::corpus::{open_pages as capture_open, PageReader};
use cannery_capture::{Corpus, ErrorKind};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::buffer::PAGE_SIZE;
use crate::errors::{error, Kind};

/// Converts a capture-crate error raised while reading files.
pub fn corpus_error(e: cannery_capture::Error) -> PyErr {
    match e.kind() {
        ErrorKind::NotFound => PyFileNotFoundError::new_err(e.to_string()),
        ErrorKind::PermissionDenied => PyPermissionError::new_err(e.to_string()),
        ErrorKind::Io => PyOSError::new_err(e.to_string()),
        _ => error(Kind::Corpus, e),
    }
}

/// The workloads of a corpus directory (or page file): name → page files,
/// sorted. A bare name such as "fleet-snapshots" is also looked up under
/// `corpora/` in the current directory.
#[pyfunction]
pub fn open_corpus<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let corpus = Corpus::open(&path).map_err(corpus_error)?;
    let d = PyDict::new(py);
    for w in corpus.workloads {
        let files: Vec<String> = w.files.iter().map(|f| f.display().to_string()).collect();
        d.set_item(w.name, files)?;
    }
    Ok(d)
}

/// The pages of one snapshot (`.cansnap`) or raw `.pages` file, streamed
/// one at a time: iterate it for `bytes` (or NumPy uint8 arrays with
/// `numpy=True`, zero-copy views of those bytes), or read the rest at once
/// with `read_all()` / `to_numpy()`.
#[pyclass(name = "PageFile", module = "cannery._native", frozen)]
pub struct PyPageFile {
    path: PathBuf,
    reader: Mutex<Option<PageReader>>,
    numpy: bool,
    header_json: String,
}

#[pymethods]
impl PyPageFile {
    /// The file's path.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The snapshot header as a dict: version, finalized, counts (scanned,
    /// stored, zero, same_filled, duplicate, ...), metadata (label, command,
    /// capture time, kernel release, sampling). Raw files get a synthesized
    /// header (label = file stem, stored = number of pages).
    #[getter]
    fn header<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?
            .call_method1("loads", (&self.header_json,))
    }

    /// Pages stored in the file (for a finalized snapshot or a raw file).
    fn __len__(&self) -> PyResult<usize> {
        let v: serde_json::Value =
            serde_json::from_str(&self.header_json).map_err(|e| error(Kind::Cannery, e))?;
        Ok(v["counts"]["stored"].as_u64().unwrap_or(0) as usize)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let next = py.allow_threads(|| {
            let mut guard = self.reader.lock().expect("page reader lock");
            guard.as_mut().and_then(|r| r.next())
        });
        match next {
            None => Ok(None),
            Some(Err(e)) => {
                *self.reader.lock().expect("page reader lock") = None;
                Err(corpus_error(e))
            }
            Some(Ok(page)) => {
                let b = PyBytes::new(py, &page.data);
                if self.numpy {
                    Ok(Some(as_numpy(py, b.into_any(), false)?))
                } else {
                    Ok(Some(b.into_any()))
                }
            }
        }
    }

    /// Every remaining page, back to back, as one `bytes` object.
    fn read_all<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let all = py.allow_threads(|| {
            let mut guard = self.reader.lock().expect("page reader lock");
            let mut out = Vec::new();
            if let Some(r) = guard.as_mut() {
                for p in r {
                    out.extend_from_slice(&p?.data);
                }
            }
            Ok::<_, cannery_capture::Error>(out)
        });
        match all {
            Ok(v) => Ok(PyBytes::new(py, &v)),
            Err(e) => {
                *self.reader.lock().expect("page reader lock") = None;
                Err(corpus_error(e))
            }
        }
    }

    /// Every remaining page as a read-only NumPy uint8 array of shape
    /// (pages, 4096): a zero-copy view of `read_all()`'s bytes.
    fn to_numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let b = self.read_all(py)?;
        as_numpy(py, b.into_any(), true)
    }

    fn __repr__(&self) -> String {
        format!("PageFile({:?})", self.path.display().to_string())
    }
}

/// `numpy.frombuffer(b, uint8)`, reshaped to rows of 4096 when `rows`.
fn as_numpy<'py>(py: Python<'py>, b: Bound<'py, PyAny>, rows: bool) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let a = np.call_method1("frombuffer", (b, np.getattr("uint8")?))?;
    if rows {
        a.call_method1("reshape", ((-1i64, PAGE_SIZE),))
    } else {
        Ok(a)
    }
}

/// Opens one snapshot or raw `.pages` file for reading its pages. Raises
/// CorpusError for a damaged or foreign file, FileNotFoundError if missing.
#[pyfunction]
#[pyo3(signature = (path, *, numpy=false))]
pub fn open_pages(py: Python<'_>, path: PathBuf, numpy: bool) -> PyResult<PyPageFile> {
    let reader = py
        .allow_threads(|| capture_open(&path))
        .map_err(corpus_error)?;
    let header_json =
        serde_json::to_string(reader.header()).map_err(|e| error(Kind::Cannery, e))?;
    Ok(PyPageFile {
        path,
        reader: Mutex::new(Some(reader)),
        numpy,
        header_json,
    })
}
