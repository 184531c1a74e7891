//! The codec's shared test helpers (crates/codec/tests/common/mod.rs):
//! pages, tables, the shipped corpus's pages and QPL's stream form, used
//! by the engines' tests as they are.

#![allow(dead_code)]

#[path = "../../../codec/tests/common/mod.rs"]
mod codec_common;

pub use codec_common::*;

use cannery_codec::{Format, Level, Mode, Table};
use cannery_engines::backend::software::Software;
use cannery_engines::backend::tampered::{Step, Tampered};
use cannery_engines::{Bound, EngineError};

/// Cannery's software engine in `format` at `level`, bound to `mode` with
/// the kernel's 2024 table, or `None` if the table does not fit that mode.
pub fn software(mode: Mode, format: Format, level: Level) -> Option<Bound<Software>> {
    let t = Table::kernel_2024();
    let mut s = Software::with_format(level, format);
    s.prepare(mode, Some(&t)).ok()?;
    Some(Bound::new(s, mode, Some(&t)))
}

/// `hook` on every unit or stream first (it may sleep, wait, panic or
/// refuse), then cannery's software engine in `format` at `level`, bound to
/// `mode` with the kernel's 2024 table: every engine of the batch tests is
/// one of these ([`Tampered`] shown only each input).
pub fn hooked<F>(
    mode: Mode,
    format: Format,
    level: Level,
    mut hook: F,
) -> Bound<Tampered<Software, impl FnMut(Step<'_>) -> Result<(), EngineError>>>
where
    F: FnMut(&[u8]) -> Result<(), EngineError>,
{
    let inner = Software::with_format(level, format);
    let tamper = move |step: Step<'_>| match step {
        Step::Input(bytes) => hook(bytes),
        _ => Ok(()),
    };
    let engine = Tampered::new(inner, "hooked", tamper);
    Bound::new(engine, mode, Some(&Table::kernel_2024()))
}
