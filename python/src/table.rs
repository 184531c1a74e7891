//! `cannery.Table`: an immutable canned Huffman table (286 literal/length
//! and 30 distance code lengths) wrapping `cannery_codec::Table`.
//!
//! Loading, saving, validation, ids and the implied block header all come
//! from the codec crate; this file converts arguments and results and
//! formats the `show()` summary (the same text as `cannery table show`).

use std::path::PathBuf;

use cannery_codec::table::SerialError;
use cannery_codec::{Table, TableError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};

use crate::errors::{error, invalid, Kind};

/// Converts a table validation error.
pub fn table_error(e: TableError) -> PyErr {
    error(Kind::Table, e)
}

fn serial_error(e: SerialError) -> PyErr {
    error(Kind::Table, e)
}

/// A canned Huffman table: 286 literal/length and 30 distance code lengths.
///
/// Tables are immutable and compare equal when their code lengths are equal
/// (names and provenance do not count). Build one with `Table.from_lengths`,
/// take a built-in one (`Table.fixed()`, `Table.kernel_2024()`), load one
/// (`Table.load`, `Table.from_bytes`), or train one (`cannery.train`).
#[pyclass(name = "Table", module = "cannery._native", frozen, eq, hash)]
#[derive(Clone)]
pub struct PyTable {
    pub inner: Table,
}

impl PartialEq for PyTable {
    fn eq(&self, other: &Self) -> bool {
        self.inner == other.inner
    }
}

impl std::hash::Hash for PyTable {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.inner.lengths().hash(state);
    }
}

impl PyTable {
    pub fn new(inner: Table) -> PyTable {
        PyTable { inner }
    }
}

/// Code lengths given as any sequence of integers (list, bytes, NumPy array).
fn lengths_arg(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    let values: Vec<i64> = obj.extract().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err(format!("{what} must be a sequence of integers"))
    })?;
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            u8::try_from(v).map_err(|_| {
                error(
                    Kind::Table,
                    format!("{what}[{i}] is {v}; code lengths are 0..=15"),
                )
            })
        })
        .collect()
}

/// "len:count" pairs, e.g. `4:1 5:6 8:60` (as `cannery table show` prints).
fn profile(lengths: &[u8]) -> String {
    let mut count = [0usize; 16];
    for &x in lengths {
        count[usize::from(x).min(15)] += 1;
    }
    (0..16)
        .filter(|&i| count[i] > 0)
        .map(|i| format!("{i}:{}", count[i]))
        .collect::<Vec<_>>()
        .join(" ")
}

#[pymethods]
impl PyTable {
    /// Builds a table from 286 literal/length and 30 distance code lengths
    /// (sequences of integers 0..=15; 0 means "no code"). Raises TableError
    /// unless a decoder could use the lengths (no over-subscribed code, an
    /// end-of-block code).
    #[classmethod]
    #[pyo3(signature = (litlen, dist, *, name=None))]
    fn from_lengths(
        _cls: &Bound<'_, PyType>,
        litlen: &Bound<'_, PyAny>,
        dist: &Bound<'_, PyAny>,
        name: Option<String>,
    ) -> PyResult<PyTable> {
        let ll = lengths_arg(litlen, "litlen")?;
        let d = lengths_arg(dist, "dist")?;
        let mut t = Table::from_lengths(&ll, &d).map_err(table_error)?;
        t.name = name;
        Ok(PyTable::new(t))
    }

    /// The RFC 1951 fixed code (BTYPE=01) as a table.
    #[classmethod]
    fn fixed(_cls: &Bound<'_, PyType>) -> PyTable {
        PyTable::new(Table::fixed())
    }

    /// The canned table of the 2024 Linux iaa_crypto patch series.
    #[classmethod]
    fn kernel_2024(_cls: &Bound<'_, PyType>) -> PyTable {
        PyTable::new(Table::kernel_2024())
    }

    /// A built-in table by name (see `Table.BUILTIN_NAMES`).
    #[classmethod]
    fn builtin(_cls: &Bound<'_, PyType>, name: &str) -> PyResult<PyTable> {
        Table::builtin(name).map(PyTable::new).ok_or_else(|| {
            invalid(format!(
                "no built-in table {name:?} (expected one of {})",
                Table::BUILTIN_NAMES.join(", ")
            ))
        })
    }

    /// Names accepted by `Table.builtin`.
    #[classattr]
    #[allow(non_snake_case)]
    fn BUILTIN_NAMES() -> Vec<&'static str> {
        Table::BUILTIN_NAMES.to_vec()
    }

    /// Reads a table file (JSON or the 332-byte binary form, told apart by
    /// content). Raises TableError for damaged files, OSError if unreadable.
    #[classmethod]
    fn load(_cls: &Bound<'_, PyType>, py: Python<'_>, path: PathBuf) -> PyResult<PyTable> {
        let bytes = py
            .allow_threads(|| {
                // Bounded like the CLI's: /dev/zero is refused, not read.
                let limit = cannery_files::input::SMALL_FILE_LIMIT;
                cannery_files::input::read_limited(&path, limit, "table")
            })
            .map_err(|e| match e.io_error() {
                Some(io) => crate::errors::os_error(&path, io),
                None => error(Kind::Table, e.to_string()),
            })?;
        Table::from_bytes(&bytes)
            .map(PyTable::new)
            .map_err(|e| error(Kind::Table, format!("{}: {e}", path.display())))
    }

    /// Reads a table from the bytes of a table file (JSON or binary).
    #[classmethod]
    fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<PyTable> {
        let b = crate::buffer::page(data, "data")?;
        Table::from_bytes(b.as_bytes())
            .map(PyTable::new)
            .map_err(serial_error)
    }

    /// Reads the JSON form.
    #[classmethod]
    fn from_json(_cls: &Bound<'_, PyType>, text: &str) -> PyResult<PyTable> {
        Table::from_json(text)
            .map(PyTable::new)
            .map_err(serial_error)
    }

    /// Writes the table to `path`: the 332-byte binary form if `format` is
    /// "binary" (or is None and the path ends in ".bin"), else JSON.
    #[pyo3(signature = (path, *, format=None))]
    fn save(&self, py: Python<'_>, path: PathBuf, format: Option<&str>) -> PyResult<()> {
        let binary = match format {
            Some("binary") => true,
            Some("json") => false,
            Some(other) => {
                return Err(invalid(format!(
                    "unknown table file format {other:?} (expected json or binary)"
                )))
            }
            None => path.extension().is_some_and(|e| e == "bin"),
        };
        let bytes = if binary {
            self.inner.to_binary()
        } else {
            self.inner.to_json().into_bytes()
        };
        py.allow_threads(|| crate::errors::write_atomic(&path, &bytes))?;
        Ok(())
    }

    /// The JSON form (with name and provenance).
    fn to_json(&self) -> String {
        self.inner.to_json()
    }

    /// The 332-byte binary form (lengths and id only).
    fn to_binary<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_binary())
    }

    /// A human-readable summary: id, provenance, header size, Kraft sums,
    /// IAA compatibility and the code-length profile.
    fn show(&self) -> String {
        let t = &self.inner;
        let mut s = String::new();
        let name = t
            .name
            .as_ref()
            .map(|n| format!(" ({n})"))
            .unwrap_or_default();
        s += &format!("table     {}{name}\n", t.id());
        if let Some(x) = &t.provenance.source {
            s += &format!("source    {x}\n");
        }
        if let Some(c) = &t.provenance.corpus {
            s += &format!("corpus    {c}\n");
        }
        for (mode, r) in &t.provenance.ratios {
            s += &format!("ratio     {mode}: {r:.3}\n");
        }
        s += &format!(
            "header    {} bits ({} bytes), gen_decomp_table_flags {:#x}\n",
            t.header().bits,
            t.header().bytes.len(),
            t.header().gen_decomp_table_flags()
        );
        let (ll, d) = t.kraft();
        s += &format!("kraft     literal/length {ll}/32768, distance {d}/32768\n");
        let v = t.iaa_violations();
        if v.is_empty() {
            s += "IAA       ok: every rule for canned compression holds\n";
        } else {
            s += &format!("IAA       {} rule(s) broken:\n", v.len());
            for r in v.iter().take(10) {
                s += &format!("          - {r}\n");
            }
            if v.len() > 10 {
                s += &format!("          ... and {} more\n", v.len() - 10);
            }
        }
        let l = t.lengths();
        s += &format!("lengths   literal/length: {}\n", profile(&l.litlen));
        s += &format!("          distance:       {}\n", profile(&l.dist));
        s
    }

    /// Stable id: 16 hex digits of SHA-256 over the 316 code lengths.
    #[getter]
    fn id(&self) -> String {
        self.inner.id()
    }

    /// Human name (a workload, "fixed", "kernel-2024"), or None.
    #[getter]
    fn name(&self) -> Option<String> {
        self.inner.name.clone()
    }

    /// A copy of the table with another name (tables are immutable).
    fn with_name(&self, name: Option<String>) -> PyTable {
        let mut t = self.inner.clone();
        t.name = name;
        PyTable::new(t)
    }

    /// Where the table came from, as a dict (source, corpus, created,
    /// generator, training, ratios); keys that are unknown are absent.
    #[getter]
    fn provenance<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text =
            serde_json::to_string(&self.inner.provenance).map_err(|e| error(Kind::Cannery, e))?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// The 286 literal/length code lengths (0 = no code).
    #[getter]
    fn litlen_lengths(&self) -> Vec<u32> {
        // u32, not u8: PyO3 turns a Vec<u8> into `bytes`; analysts get a list.
        self.inner
            .lengths()
            .litlen
            .iter()
            .map(|&l| l.into())
            .collect()
    }

    /// The 30 distance code lengths (0 = no code).
    #[getter]
    fn dist_lengths(&self) -> Vec<u32> {
        self.inner
            .lengths()
            .dist
            .iter()
            .map(|&l| l.into())
            .collect()
    }

    /// The implied dynamic block header (BFINAL=1, BTYPE=2), zero-padded to
    /// whole bytes; `header_bits` says how many bits count. Prepending it to
    /// a canned IAA body gives a standard raw deflate stream.
    #[getter]
    fn header<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.header().bytes)
    }

    /// Exact length of `header` in bits.
    #[getter]
    fn header_bits(&self) -> usize {
        self.inner.header().bits
    }

    /// Kraft sums (scaled by 2**15) of the literal/length and distance codes;
    /// 32768 means complete.
    #[getter]
    fn kraft(&self) -> (u64, u64) {
        self.inner.kraft()
    }

    /// Every IAA canned-mode rule the table breaks, as messages (empty if none).
    fn iaa_violations(&self) -> Vec<String> {
        self.inner
            .iaa_violations()
            .iter()
            .map(|r| r.to_string())
            .collect()
    }

    /// True if IAA hardware can compress with this table.
    #[getter]
    fn iaa_compatible(&self) -> bool {
        self.inner.check_iaa().is_ok()
    }

    /// True if standard inflaters accept the table's dynamic header, so
    /// `format="deflate"` output is plain raw deflate.
    #[getter]
    fn is_standard(&self) -> bool {
        self.inner.is_standard()
    }

    fn __repr__(&self) -> String {
        match &self.inner.name {
            Some(n) => format!("Table(name={n:?}, id={:?})", self.inner.id()),
            None => format!("Table(id={:?})", self.inner.id()),
        }
    }

    fn __str__(&self) -> String {
        self.show()
    }

    /// Pickles as the JSON form (so name and provenance survive).
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
        let ctor = slf.get_type().getattr("from_json")?;
        Ok((ctor, (slf.get().inner.to_json(),)))
    }
}
