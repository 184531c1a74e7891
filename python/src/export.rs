//! Kernel export and import: `export_kernel_header` (a C header for the
//! Linux iaa_crypto driver) and `Table.from_kernel_header`'s engine,
//! `import_kernel_header`. Both are `cannery_export` calls; this file only
//! converts arguments and errors and optionally writes the text to a file.

use std::path::PathBuf;

use cannery_export::c_header::{self, Api, KernelOptions};
use cannery_export::ExportError;
use pyo3::prelude::*;

use crate::codec::parse;
use crate::errors::{error, invalid, Kind};
use crate::table::PyTable;

fn export_error(e: ExportError) -> PyErr {
    match e {
        ExportError::InvalidName { .. } => invalid(e),
        other => error(Kind::Export, other),
    }
}

/// The C header that registers `table` as an iaa_crypto compression mode
/// called `name` (a C identifier, also the prefix of every identifier):
/// `ll`/`d` arrays in the kernel's `(length << 15) | code` form, the implied
/// block header with its bit count and `gen_decomp_table_flags`, compile-time
/// guards and a registration function.
///
/// `api` picks the `add_iaa_compression_mode()` form: "header-table" (the
/// 10-argument form of the canned patches, the only one in which canned mode
/// works end to end), "mainline" (7 arguments; no header) or "builtin" (the
/// batching-era driver). If `path` is given the text is also written there.
/// Raises ExportError for tables IAA cannot use, InvalidInputError for a
/// name that is not a C identifier or an unknown `api`.
#[pyfunction]
#[pyo3(signature = (table, *, name, api="header-table", path=None))]
pub fn export_kernel_header(
    py: Python<'_>,
    table: PyRef<'_, PyTable>,
    name: &str,
    api: &str,
    path: Option<PathBuf>,
) -> PyResult<String> {
    let api: Api = parse(api)?;
    let opts = KernelOptions::new(name).with_api(api);
    let text = c_header::kernel_header(&table.inner, &opts).map_err(export_error)?;
    if let Some(path) = path {
        py.allow_threads(|| crate::errors::write_atomic(&path, text.as_bytes()))?;
    }
    Ok(text)
}

/// Reads a table back from a kernel C header (one written by
/// `export_kernel_header`, or the 2024 patch's `canned_ll_iaa` /
/// `canned_d_iaa` / `canned_header`), checking that codes, lengths and the
/// header agree. Raises TableError if they do not or the text is not such a
/// header.
#[pyfunction]
pub fn import_kernel_header(text: &str) -> PyResult<PyTable> {
    cannery_export::table_from_kernel_header(text)
        .map(PyTable::new)
        .map_err(|e| error(Kind::Table, e))
}
