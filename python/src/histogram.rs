//! `cannery.Histogram`: symbol statistics of many pages, the unit of
//! fleet-scale training, wrapping `cannery_trainer::Histogram`.
//!
//! Histograms form a monoid: `Histogram(parse)` is the zero, `a + b` (or
//! `a.merge(b)`) adds counts, `sum(histograms)` works because `0 + h` is
//! `h`, and merging histograms gathered with different settings (parse
//! model, window, pricing table) raises `HistogramError`. They pickle (as
//! their versioned JSON form), so Dask or Ray workers can ship them instead
//! of pages. Parsing pages and building tables happen in the trainer crate;
//! this file converts arguments and releases the GIL.

use std::path::PathBuf;

use cannery_trainer::gather::gather_pages;
use cannery_trainer::histogram::{Histogram, HistogramError, ParseModel};
use cannery_trainer::TrainOptions;
use cannery_trainer::{Smoothing, TrainError};
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::buffer;
use crate::corpus::corpus_error;
use crate::errors::{error, invalid, Kind};
use crate::table::PyTable;

/// Converts a histogram error.
pub fn histogram_error(e: HistogramError) -> PyErr {
    error(Kind::Histogram, e)
}

/// Converts a training error.
pub fn train_error(e: TrainError) -> PyErr {
    match e {
        TrainError::BadTestFraction(_)
        | TrainError::BadTableCount { .. }
        | TrainError::NothingMeasured { .. } => invalid(e),
        TrainError::Histogram(h) => histogram_error(h),
        TrainError::Source(s) => match s.downcast::<cannery_capture::Error>() {
            Ok(c) => corpus_error(*c),
            Err(other) => error(Kind::Corpus, other),
        },
        other => error(Kind::Train, other),
    }
}

/// Table construction options (`smoothing=None` is the parse's default:
/// prior:0.005, or add-one for a library target).
pub fn table_options(
    smoothing: Option<&str>,
    qpl_compatible: bool,
    all_distances: bool,
) -> PyResult<TrainOptions> {
    let smoothing = match smoothing {
        Some(s) => Some(s.parse::<Smoothing>().map_err(invalid)?),
        None => None,
    };
    Ok(TrainOptions::with_table(
        smoothing,
        all_distances,
        qpl_compatible,
    ))
}

/// A parse model by name: "fast" (the IAA-like greedy parse; "iaa" is the
/// same), "default" or "best"; "qpl-default", "qpl-high" and "isal" where
/// the package was built with those libraries.
pub fn parse_model(s: &str) -> PyResult<ParseModel> {
    s.parse().map_err(invalid)
}

/// Symbol statistics of many pages (a mergeable, picklable histogram).
///
/// `Histogram(parse="fast")` is the empty histogram; build real ones with
/// `Histogram.from_pages` or `Histogram.from_file`, combine them with `+`
/// or `sum()`, and turn them into a table with `to_table()` or
/// `cannery.train_from_histogram`. Zero and same-filled pages are counted
/// apart and never parsed (zswap does not compress them).
#[pyclass(name = "Histogram", module = "cannery._native", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct PyHistogram {
    pub inner: Histogram,
}

impl PyHistogram {
    pub fn new(inner: Histogram) -> PyHistogram {
        PyHistogram { inner }
    }
}

/// Settings of a histogram gathered with `parse` (and, for "best", the
/// table whose code lengths priced the parse).
fn settings(
    parse: &str,
    pricing: Option<&PyTable>,
) -> PyResult<(ParseModel, Option<cannery_codec::Table>)> {
    let model = parse_model(parse)?;
    if pricing.is_some() && model != ParseModel::Best {
        return Err(invalid(
            "pricing= is only used by the \"best\" parse; drop it or pass parse=\"best\"",
        ));
    }
    Ok((model, pricing.map(|t| t.inner.clone())))
}

#[pymethods]
impl PyHistogram {
    /// The empty histogram for a parse model ("fast", "default" or "best";
    /// "best" is priced by `pricing`, default the fixed code).
    #[new]
    #[pyo3(signature = (parse="fast", *, pricing=None))]
    fn py_new(parse: &str, pricing: Option<PyRef<'_, PyTable>>) -> PyResult<PyHistogram> {
        let (model, pricing) = settings(parse, pricing.as_deref())?;
        let empty: [&[u8]; 0] = [];
        let h = gather_pages(&empty, model, pricing.as_ref(), &|_| true).map_err(train_error)?;
        Ok(PyHistogram::new(h))
    }

    /// Histogram of `pages` (a 2-D uint8 array, a buffer of whole 4096-byte
    /// pages, or an iterable of pages), parsed in parallel with the GIL
    /// released.
    #[classmethod]
    #[pyo3(signature = (pages, *, parse="fast", pricing=None))]
    fn from_pages(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        pages: &Bound<'_, PyAny>,
        parse: &str,
        pricing: Option<PyRef<'_, PyTable>>,
    ) -> PyResult<PyHistogram> {
        let (model, pricing) = settings(parse, pricing.as_deref())?;
        let pages = buffer::pages(pages, "pages")?;
        let slices = pages.slices();
        let h = py
            .allow_threads(|| gather_pages(&slices, model, pricing.as_ref(), &|_| true))
            .map_err(train_error)?;
        Ok(PyHistogram::new(h))
    }

    /// Histogram of every page of a snapshot (`.cansnap`) or raw `.pages`
    /// file, or of a corpus directory, streamed with the GIL released. Same-
    /// filled pages the snapshot counted at capture are included.
    #[classmethod]
    #[pyo3(signature = (path, *, parse="fast", pricing=None))]
    fn from_file(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        path: PathBuf,
        parse: &str,
        pricing: Option<PyRef<'_, PyTable>>,
    ) -> PyResult<PyHistogram> {
        let (model, pricing) = settings(parse, pricing.as_deref())?;
        let source = crate::sources::source_of_path(&path)?;
        let h = py
            .allow_threads(|| cannery_trainer::gather::gather_all(&source, model, pricing.as_ref()))
            .map_err(train_error)?;
        Ok(PyHistogram::new(h))
    }

    /// The sum of two histograms (a new histogram). Raises HistogramError
    /// if they were gathered with different settings.
    fn merge(&self, other: PyRef<'_, PyHistogram>) -> PyResult<PyHistogram> {
        self.inner
            .clone()
            .merged(&other.inner)
            .map(PyHistogram::new)
            .map_err(histogram_error)
    }

    fn __add__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        if let Ok(h) = other.downcast::<PyHistogram>() {
            return Ok(self
                .merge(h.borrow())?
                .into_pyobject(py)?
                .into_any()
                .unbind());
        }
        // `0 + h`: lets sum(histograms) start from its default 0.
        if other.extract::<i64>().is_ok_and(|v| v == 0) {
            return Ok(self.clone().into_pyobject(py)?.into_any().unbind());
        }
        Ok(py.NotImplemented())
    }

    fn __radd__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        self.__add__(py, other)
    }

    /// A table from this histogram (same as `cannery.train_from_histogram`):
    /// smoothing, optimal length-limited codes and the IAA checks of the
    /// trainer. Raises TrainError if it holds too few pages.
    #[pyo3(signature = (*, name="fleet", smoothing=None, qpl_compatible=false, all_distances=false))]
    fn to_table(
        &self,
        py: Python<'_>,
        name: &str,
        smoothing: Option<&str>,
        qpl_compatible: bool,
        all_distances: bool,
    ) -> PyResult<PyTable> {
        let opts = table_options(smoothing, qpl_compatible, all_distances)?;
        let h = &self.inner;
        py.allow_threads(|| cannery_trainer::train::table_from_histogram(h, &opts, name))
            .map(PyTable::new)
            .map_err(train_error)
    }

    /// The versioned JSON form.
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    /// Reads the JSON form, checking format, version and consistency.
    #[classmethod]
    fn from_json(_cls: &Bound<'_, PyType>, text: &str) -> PyResult<PyHistogram> {
        Histogram::from_json(text)
            .map(PyHistogram::new)
            .map_err(histogram_error)
    }

    /// Writes the JSON form to `path`.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let text = self.inner.to_json();
        py.allow_threads(|| crate::errors::write_atomic(&path, text.as_bytes()))?;
        Ok(())
    }

    /// Reads a histogram file written by `save` (or `cannery stats`).
    #[classmethod]
    fn load(_cls: &Bound<'_, PyType>, py: Python<'_>, path: PathBuf) -> PyResult<PyHistogram> {
        let text = py
            .allow_threads(|| {
                // Bounded like the CLI's: /dev/zero is refused, not read.
                let limit = cannery_files::input::SMALL_FILE_LIMIT;
                cannery_files::input::read_text_limited(&path, limit, "histogram")
            })
            .map_err(|e| match e.io_error() {
                Some(io) => crate::errors::os_error(&path, io),
                None => error(Kind::Histogram, e.to_string()),
            })?;
        Histogram::from_json(&text)
            .map(PyHistogram::new)
            .map_err(|e| error(Kind::Histogram, format!("{}: {e}", path.display())))
    }

    /// Pages parsed (each contributed one end-of-block symbol).
    #[getter]
    fn pages(&self) -> u64 {
        self.inner.pages
    }

    /// Zero and same-filled pages counted but not parsed.
    #[getter]
    fn same_filled_pages(&self) -> u64 {
        self.inner.same_filled_pages
    }

    /// Parse model: "fast", "default" or "best".
    #[getter]
    fn parse(&self) -> &'static str {
        crate::train::parse_name(self.inner.settings().parse)
    }

    /// History window in bytes.
    #[getter]
    fn window(&self) -> u32 {
        self.inner.settings().window
    }

    /// For the "best" parse, the id of the table that priced it.
    #[getter]
    fn pricing_table(&self) -> Option<String> {
        self.inner.settings().cost_table.clone()
    }

    /// Counts of literal/length symbols 0..=285.
    #[getter]
    fn litlen(&self) -> Vec<u64> {
        self.inner.counts.litlen.to_vec()
    }

    /// Counts of distance symbols 0..=29.
    #[getter]
    fn dist(&self) -> Vec<u64> {
        self.inner.counts.dist.to_vec()
    }

    /// Extra bits of all lengths and distances.
    #[getter]
    fn extra_bits(&self) -> u64 {
        self.inner.counts.extra_bits
    }

    fn __repr__(&self) -> String {
        format!(
            "Histogram(parse={:?}, pages={}, same_filled_pages={})",
            crate::train::parse_name(self.inner.settings().parse),
            self.inner.pages,
            self.inner.same_filled_pages
        )
    }

    /// Pickles as the JSON form.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let ctor = slf.get_type().getattr("from_json")?;
        Ok((ctor, (slf.get().inner.to_json(),)))
    }
}
