//! A deliberately faulty engine for tests: another engine whose input and
//! results a closure sees and may change or refuse. It proves that checks
//! catch what a broken engine does (a bit flipped in each stream, or in
//! each page it gives back) and that the batch path survives an engine
//! that sleeps, fails or panics. Never offered as a backend.

use cannery_codec::Outcome;

use crate::engine::{Capabilities, Engine, EngineError, Job};

/// What the closure of a [`Tampered`] engine is shown.
pub enum Step<'a> {
    /// A page to compress or a stream to decompress, before the work.
    Input(&'a [u8]),
    /// The stream just compressed (not called for a stored page).
    Compressed(&'a mut [u8]),
    /// The bytes just decompressed.
    Decompressed(&'a mut [u8]),
}

/// `inner` with `tamper` shown every [`Step`]; an error from `tamper` is
/// the engine's error.
pub struct Tampered<E, F> {
    /// The engine doing the work.
    pub inner: E,
    /// The name it reports.
    pub name: &'static str,
    /// What sees (and may change) each step.
    pub tamper: F,
}

impl<E, F> Tampered<E, F>
where
    E: Engine,
    F: FnMut(Step<'_>) -> Result<(), EngineError>,
{
    /// `inner`, named `name`, with `tamper` shown every step.
    pub fn new(inner: E, name: &'static str, tamper: F) -> Self {
        Tampered {
            inner,
            name,
            tamper,
        }
    }
}

impl<E, F> Engine for Tampered<E, F>
where
    E: Engine,
    F: FnMut(Step<'_>) -> Result<(), EngineError>,
{
    fn capabilities(&self) -> &Capabilities {
        self.inner.capabilities()
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn compress_job(&mut self, job: Job<'_>, out: &mut Vec<u8>) -> Result<Outcome, EngineError> {
        (self.tamper)(Step::Input(job.data))?;
        let r = self.inner.compress_job(job, out)?;
        if let Outcome::Compressed(n) = r {
            (self.tamper)(Step::Compressed(&mut out[..n]))?;
        }
        Ok(r)
    }

    fn decompress_job(&mut self, job: Job<'_>, out: &mut [u8]) -> Result<usize, EngineError> {
        (self.tamper)(Step::Input(job.data))?;
        let n = self.inner.decompress_job(job, out)?;
        (self.tamper)(Step::Decompressed(&mut out[..n]))?;
        Ok(n)
    }
}

/// Flips one bit in the middle of `bytes` (nothing if empty): the fault
/// the tests' broken engines make.
pub fn flip_middle_bit(bytes: &mut [u8], bit: u8) {
    let n = bytes.len();
    if n > 0 {
        bytes[n / 2] ^= bit;
    }
}
