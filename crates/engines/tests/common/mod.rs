//! The codec's shared test helpers (crates/codec/tests/common/mod.rs):
//! pages, tables, the shipped corpus's pages and QPL's stream form, used
//! by the engines' tests as they are.

#![allow(dead_code)]

#[path = "../../../codec/tests/common/mod.rs"]
mod codec_common;

pub use codec_common::*;

use cannery_codec::{Format, Level, Mode, Outcome, Table};
use cannery_engines::backend::software::Software;
use cannery_engines::{Bound, Capabilities, Engine, EngineError};

/// Cannery's software engine in `format` at `level`, bound to `mode` with
/// the kernel's 2024 table, or `None` if the table does not fit that mode.
pub fn software(mode: Mode, format: Format, level: Level) -> Option<Bound<Software>> {
    let t = Table::kernel_2024();
    let mut s = Software::with_format(level, format);
    s.prepare(mode, Some(&t)).ok()?;
    Some(Bound::new(s, mode, Some(&t)))
}

/// A test engine: `hook` runs on every unit or stream first (it may sleep,
/// wait, panic or refuse), then cannery's software engine does the work.
/// Every engine of the batch tests is one of these.
pub struct Hooked<F> {
    /// The engine doing the work.
    pub inner: Software,
    /// What runs first.
    pub hook: F,
}

/// `hook` before cannery's software engine in `format` at `level`, bound to
/// `mode` with the kernel's 2024 table.
pub fn hooked<F>(mode: Mode, format: Format, level: Level, hook: F) -> Bound<Hooked<F>>
where
    F: FnMut(&[u8]) -> Result<(), EngineError>,
{
    let inner = Software::with_format(level, format);
    Bound::new(Hooked { inner, hook }, mode, Some(&Table::kernel_2024()))
}

impl<F: FnMut(&[u8]) -> Result<(), EngineError>> Engine for Hooked<F> {
    fn name(&self) -> &'static str {
        "hooked"
    }

    fn capabilities(&self) -> &Capabilities {
        self.inner.capabilities()
    }

    fn compress(
        &mut self,
        mode: Mode,
        table: Option<&Table>,
        page: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Outcome, EngineError> {
        (self.hook)(page)?;
        self.inner.compress(mode, table, page, out)
    }

    fn decompress(
        &mut self,
        mode: Mode,
        table: Option<&Table>,
        data: &[u8],
        out: &mut [u8],
    ) -> Result<usize, EngineError> {
        (self.hook)(data)?;
        self.inner.decompress(mode, table, data, out)
    }
}
