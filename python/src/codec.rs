//! Page compression and decompression: `compress_page`, `decompress_page`
//! and `compressed_sizes`, calling `cannery_codec::{Encoder, Decoder}` with
//! the GIL released.
//!
//! Incompressible pages: `compress_page` raises `IncompressibleError` (a
//! `CanneryError`, not a `ValueError`: the input was fine) when the output
//! would reach 4096 bytes, the point at which zswap stores a page raw.
//! `compressed_sizes` reports such pages as 4096, the bytes zswap would
//! spend on them. No encoding or decoding logic lives here.

use cannery_codec::{DecodeError, EncodeError, Encoder, Format, Level, Mode, Outcome};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::buffer::{self, PAGE_SIZE};
use crate::errors::{error, invalid, Kind};
use crate::table::PyTable;

/// Parses a mode, format or level name into a typed value.
pub fn parse<T: std::str::FromStr<Err = String>>(s: &str) -> PyResult<T> {
    s.parse().map_err(invalid)
}

/// Converts an encoder error.
pub fn encode_error(e: EncodeError) -> PyErr {
    match e {
        EncodeError::InputTooLarge { .. } | EncodeError::TableRequired => invalid(e),
        EncodeError::TableNotEncodable { .. } | EncodeError::TableNotStandard => {
            error(Kind::Table, e)
        }
        other => error(Kind::Cannery, other),
    }
}

fn decode_error(e: DecodeError) -> PyErr {
    error(Kind::Decompress, e)
}

/// An encoder for the arguments every compress function shares.
pub fn encoder(
    table: Option<&PyTable>,
    mode: &str,
    level: &str,
    format: &str,
) -> PyResult<Encoder> {
    let mode: Mode = parse(mode)?;
    let format: Format = parse(format)?;
    let level: Level = parse(level)?;
    if mode == Mode::Canned && table.is_none() {
        return Err(invalid(
            "canned mode needs a table: pass table=... (e.g. cannery.Table.kernel_2024())",
        ));
    }
    Encoder::new(mode, format, level, table.map(|t| &t.inner)).map_err(encode_error)
}

/// Compresses one page (any bytes-like object of at most 4096 bytes).
///
/// `mode` is "canned" (needs `table`), "fixed" or "dynamic" (which ignore
/// `table`); `level` is "fast", "default" or "best"; `format` matters for
/// canned mode only: "iaa" gives the IAA wire format (body only, no
/// header), "deflate" gives standard raw deflate (the table's header, then
/// the body). Fixed and dynamic output is always raw deflate.
///
/// Raises IncompressibleError when the output would reach 4096 bytes
/// (zswap then stores the page raw), InvalidInputError for bad arguments,
/// TableError when the table cannot code every symbol a page may need (or,
/// for format="deflate", has a non-standard header).
#[pyfunction]
#[pyo3(signature = (page, *, table=None, mode="canned", level="fast", format="iaa"))]
pub fn compress_page<'py>(
    py: Python<'py>,
    page: &Bound<'py, PyAny>,
    table: Option<PyRef<'py, PyTable>>,
    mode: &str,
    level: &str,
    format: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut enc = encoder(table.as_deref(), mode, level, format)?;
    let page = buffer::page(page, "page")?;
    let input = page.as_bytes();
    let mut out = Vec::with_capacity(PAGE_SIZE);
    let outcome = py
        .allow_threads(|| enc.compress(input, &mut out))
        .map_err(encode_error)?;
    match outcome {
        Outcome::Compressed(n) => Ok(PyBytes::new(py, &out[..n])),
        Outcome::Incompressible => Err(error(
            Kind::Incompressible,
            format!(
                "the page ({} bytes) does not compress below 4096 bytes in {mode} mode; \
                 zswap would store it raw",
                input.len()
            ),
        )),
    }
}

/// Decompresses one page compressed with the same `table`, `mode` and
/// `format` (see `compress_page`). Output is limited to 4096 bytes.
///
/// Only canned IAA-format data needs `table`; everything else is standard
/// raw deflate and is decoded without one (a given table is ignored).
/// Raises DecompressError for malformed, truncated or over-long data.
#[pyfunction]
#[pyo3(signature = (data, *, table=None, mode="canned", format="iaa"))]
pub fn decompress_page<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    table: Option<PyRef<'py, PyTable>>,
    mode: &str,
    format: &str,
) -> PyResult<Bound<'py, PyBytes>> {
    let mode: Mode = parse(mode)?;
    let format: Format = parse(format)?;
    let dec = cannery_codec::Decoder::new(mode, format, table.as_deref().map(|t| &t.inner))
        .ok_or_else(|| {
            invalid("canned IAA-format data needs the table it was compressed with: pass table=...")
        })?;
    let data = buffer::page(data, "data")?;
    let input = data.as_bytes();
    let mut out = vec![0u8; PAGE_SIZE];
    let n = py
        .allow_threads(|| dec.decompress(input, &mut out))
        .map_err(decode_error)?;
    Ok(PyBytes::new(py, &out[..n]))
}

/// Compressed size of every page in `pages` (a 2-D uint8 array, a buffer
/// of whole 4096-byte pages, or an iterable of pages), with the arguments
/// of `compress_page`, as a 1-D NumPy int64 array (one entry per page).
/// Incompressible pages count as 4096 bytes, as zswap stores them raw.
/// Runs with the GIL released.
#[pyfunction]
#[pyo3(signature = (pages, *, table=None, mode="canned", level="fast", format="iaa"))]
pub fn compressed_sizes<'py>(
    py: Python<'py>,
    pages: &Bound<'py, PyAny>,
    table: Option<PyRef<'py, PyTable>>,
    mode: &str,
    level: &str,
    format: &str,
) -> PyResult<Bound<'py, PyAny>> {
    let mut enc = encoder(table.as_deref(), mode, level, format)?;
    let pages = buffer::pages(pages, "pages")?;
    let slices = pages.slices();
    let sizes = py
        .allow_threads(|| {
            let mut out = Vec::with_capacity(PAGE_SIZE);
            slices
                .iter()
                .map(|p| match enc.compress(p, &mut out)? {
                    Outcome::Compressed(n) => Ok(n as i64),
                    Outcome::Incompressible => Ok(PAGE_SIZE as i64),
                })
                .collect::<Result<Vec<i64>, EncodeError>>()
        })
        .map_err(encode_error)?;
    // A writable int64 array over the sizes' bytes (native byte order).
    let bytes: Vec<u8> = sizes.iter().flat_map(|n| n.to_ne_bytes()).collect();
    let np = py.import("numpy")?;
    np.call_method1(
        "frombuffer",
        (
            pyo3::types::PyByteArray::new(py, &bytes),
            np.getattr("int64")?,
        ),
    )
}
