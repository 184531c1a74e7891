//! Page compression and decompression: `compress_page` and
//! `decompress_page`, calling `cannery_codec::{Encoder, Decoder}`, and
//! `compressed_sizes`, many pages through the engines' batch path
//! (`cannery_engines::batch`, cannery's software engine on each worker),
//! all with the GIL released.
//!
//! Incompressible pages: `compress_page` raises `IncompressibleError` (a
//! `CanneryError`, not a `ValueError`: the input was fine) when the output
//! would reach 4096 bytes, the point at which zswap stores a page raw.
//! `compressed_sizes` reports such pages as 4096, the bytes zswap would
//! spend on them. No encoding or decoding logic lives here.
//!
//! Each thread keeps the last encoder `compress_page` made and the last
//! decoder `decompress_page` made, with what they were made from: making
//! them costs more than a page (about 13 µs for an encoder, 32 µs for a
//! canned decoder's tables), so a loop over pages with the same arguments
//! makes each once.

use std::cell::RefCell;

use cannery_codec::table::BlockHeader;
use cannery_codec::{
    CodeLengths, DecodeError, Decoder, EncodeError, Encoder, Format, Level, Mode, Outcome, Table,
};
use cannery_engines::backend::software::Software;
use cannery_engines::batch::{BatchCompressor, UnitStatus, MAX_BATCH_SIZE};
use cannery_engines::EngineError;
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

/// Converts an engine's error (an encoder's keeps its own mapping).
fn engine_error(e: EngineError) -> PyErr {
    match e {
        EngineError::Encode(e) => encode_error(e),
        EngineError::InputTooLarge { .. } | EngineError::TableRequired => invalid(e),
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
    let (mode, format, level) = arguments(table, mode, level, format)?;
    Encoder::new(mode, format, level, table.map(|t| &t.inner)).map_err(encode_error)
}

/// The mode, format and level named, checked as every compress function
/// checks them.
fn arguments(
    table: Option<&PyTable>,
    mode: &str,
    level: &str,
    format: &str,
) -> PyResult<(Mode, Format, Level)> {
    let mode: Mode = parse(mode)?;
    let format: Format = parse(format)?;
    let level: Level = parse(level)?;
    if mode == Mode::Canned && table.is_none() {
        return Err(invalid(
            "canned mode needs a table: pass table=... (e.g. cannery.Table.kernel_2024())",
        ));
    }
    Ok((mode, format, level))
}

/// What an encoder or decoder is made from: equal keys make equal ones.
#[derive(PartialEq)]
struct Key {
    mode: Mode,
    format: Format,
    /// `None` for a decoder.
    level: Option<Level>,
    /// The table's code lengths where the table is used.
    lengths: Option<CodeLengths>,
    /// The header canned deflate output starts with: tables of equal
    /// lengths may write different headers.
    header: Option<BlockHeader>,
}

impl Key {
    fn new(mode: Mode, format: Format, level: Option<Level>, table: Option<&Table>) -> Key {
        let canned = mode == Mode::Canned;
        let table = table.filter(|_| canned && (level.is_some() || format == Format::Iaa));
        Key {
            mode,
            format,
            level,
            lengths: table.map(|t| *t.lengths()),
            header: table
                .filter(|_| level.is_some() && format == Format::Deflate)
                .map(|t| t.header().clone()),
        }
    }
}

thread_local! {
    /// The last encoder `compress_page` made on this thread.
    static LAST_ENCODER: RefCell<Option<(Key, Encoder)>> = const { RefCell::new(None) };
    /// The last decoder `decompress_page` made on this thread.
    static LAST_DECODER: RefCell<Option<(Key, Decoder)>> = const { RefCell::new(None) };
}

/// This thread's last encoder if it was made from `key`, else a new one.
fn take_encoder(key: &Key, table: Option<&PyTable>) -> PyResult<Encoder> {
    let last = LAST_ENCODER.with(|c| c.borrow_mut().take());
    match last {
        Some((k, e)) if k == *key => Ok(e),
        _ => Encoder::new(
            key.mode,
            key.format,
            key.level.expect("an encoder's key has a level"),
            table.map(|t| &t.inner),
        )
        .map_err(encode_error),
    }
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
///
/// Each thread keeps the last encoder it made, so a loop of calls with the
/// same arguments builds it once (building one costs more than a page).
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
    let table = table.as_deref();
    let (mode, format, level) = arguments(table, mode, level, format)?;
    let key = Key::new(mode, format, Some(level), table.map(|t| &t.inner));
    let mut enc = take_encoder(&key, table)?;
    let page = buffer::page(page, "page")?;
    let input = page.as_bytes();
    let mut out = Vec::with_capacity(PAGE_SIZE);
    let outcome = py.allow_threads(|| enc.compress(input, &mut out));
    LAST_ENCODER.with(|c| *c.borrow_mut() = Some((key, enc)));
    match outcome.map_err(encode_error)? {
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
///
/// Each thread keeps the last decoder it made, so a loop of calls with the
/// same table builds its decoding tables once.
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
    let table = table.as_deref().map(|t| &t.inner);
    let key = Key::new(mode, format, None, table);
    let dec = match LAST_DECODER.with(|c| c.borrow_mut().take()) {
        Some((k, d)) if k == key => d,
        _ => Decoder::new(mode, format, table).ok_or_else(|| {
            invalid("canned IAA-format data needs the table it was compressed with: pass table=...")
        })?,
    };
    let data = buffer::page(data, "data")?;
    let input = data.as_bytes();
    let mut out = vec![0u8; PAGE_SIZE];
    let n = py.allow_threads(|| dec.decompress(input, &mut out));
    LAST_DECODER.with(|c| *c.borrow_mut() = Some((key, dec)));
    Ok(PyBytes::new(py, &out[..n.map_err(decode_error)?]))
}

/// Compressed size of every page in `pages` (a 2-D uint8 array, a buffer
/// of whole 4096-byte pages, or an iterable of pages), with the arguments
/// of `compress_page`, as a 1-D NumPy int64 array (one entry per page).
/// Incompressible pages count as 4096 bytes, as zswap stores them raw.
/// The pages go through the batch path in batches of 32, spread over
/// `workers` (1 to 32: the calling thread and `workers - 1` threads of its
/// own), with the GIL released; the sizes do not depend on `workers`.
/// Raises InvalidInputError for a worker count out of range.
#[pyfunction]
#[pyo3(signature = (pages, *, table=None, mode="canned", level="fast", format="iaa", workers=1))]
pub fn compressed_sizes<'py>(
    py: Python<'py>,
    pages: &Bound<'py, PyAny>,
    table: Option<PyRef<'py, PyTable>>,
    mode: &str,
    level: &str,
    format: &str,
    workers: usize,
) -> PyResult<Bound<'py, PyAny>> {
    // The arguments' errors, as compress_page gives them.
    encoder(table.as_deref(), mode, level, format)?;
    if !(1..=MAX_BATCH_SIZE).contains(&workers) {
        return Err(invalid(format!(
            "workers must be between 1 and {MAX_BATCH_SIZE}, not {workers}"
        )));
    }
    let (mode, level, format) = (parse(mode)?, parse(level)?, parse(format)?);
    let table = table.as_deref().map(|t| &t.inner);
    let lanes = (0..workers)
        .map(|_| Software::bound(mode, format, level, table))
        .collect::<Result<_, _>>()
        .map_err(engine_error)?;
    let mut batch =
        BatchCompressor::new(MAX_BATCH_SIZE, lanes).map_err(|e| error(Kind::Cannery, e))?;
    let pages = buffer::pages(pages, "pages")?;
    let slices = pages.slices();
    let sizes = py
        .allow_threads(|| {
            let mut sizes = Vec::with_capacity(slices.len());
            for group in slices.chunks(MAX_BATCH_SIZE) {
                let done = batch.compress(group.iter().map(|p| &p[..])).map_err(|e| {
                    EngineError::Rejected {
                        backend: "batch",
                        message: e.to_string(),
                    }
                })?;
                for (status, _) in done.iter() {
                    sizes.push(match status {
                        UnitStatus::Compressed(n) => *n as i64,
                        UnitStatus::Incompressible => PAGE_SIZE as i64,
                        UnitStatus::Failed(e) => return Err(e.clone()),
                    });
                }
            }
            Ok(sizes)
        })
        .map_err(engine_error)?;
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
