//! `cannery._native`: the compiled part of the `cannery` Python package.
//!
//! Thin PyO3 bindings over the workspace crates: every computation (LZ77,
//! Huffman codes, training, corpus reading, export) happens in those crates;
//! this crate converts arguments, releases the GIL around heavy calls and
//! maps errors onto the exception hierarchy in `errors`. The public Python
//! API is `cannery/__init__.py`, which re-exports from here; the type stubs
//! are `cannery/_native.pyi`.

mod buffer;
mod capture;
mod codec;
mod corpus;
mod errors;
mod export;
mod histogram;
mod progress;
mod sources;
mod table;
mod train;

use pyo3::prelude::*;

/// Native core of the cannery package (use the `cannery` package instead).
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("PAGE_SIZE", buffer::PAGE_SIZE)?;
    m.add_class::<table::PyTable>()?;
    m.add_function(wrap_pyfunction!(codec::compress_page, m)?)?;
    m.add_function(wrap_pyfunction!(codec::decompress_page, m)?)?;
    m.add_function(wrap_pyfunction!(codec::compressed_sizes, m)?)?;
    m.add_class::<corpus::PyPageFile>()?;
    m.add_class::<histogram::PyHistogram>()?;
    m.add_function(wrap_pyfunction!(train::train, m)?)?;
    m.add_function(wrap_pyfunction!(train::train_with_report, m)?)?;
    m.add_function(wrap_pyfunction!(train::train_dictionaries, m)?)?;
    m.add_function(wrap_pyfunction!(train::train_from_histogram, m)?)?;
    m.add_function(wrap_pyfunction!(train::_evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(train::_cross_evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(corpus::open_pages, m)?)?;
    m.add_function(wrap_pyfunction!(corpus::open_corpus, m)?)?;
    m.add_function(wrap_pyfunction!(capture::capture, m)?)?;
    m.add_function(wrap_pyfunction!(export::export_kernel_header, m)?)?;
    m.add_function(wrap_pyfunction!(export::import_kernel_header, m)?)?;
    Ok(())
}
