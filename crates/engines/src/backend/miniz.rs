//! The `miniz_oxide` backend: a pure-Rust reference inflater (and deflater);
//! the library calls are [`crate::peer::deflate`]'s (feature `reference`).
//!
//! Decompresses raw deflate of any mode; canned streams are read through
//! [`super::canned_to_deflate`] (the table's header in front). Compresses
//! fixed (all static blocks) and dynamic (its own block choice) raw deflate
//! at level 6 unless [`Miniz::with_level`]. It cannot compress with a
//! canned table.

use super::{
    as_deflate, check_page, inflate_error, outcome_of, Backend, BackendError, Capabilities,
    ExecPath, ALL_MODES,
};
use crate::peer::deflate::{miniz_deflate, miniz_inflate};
use cannery_codec::encode::Outcome;
use cannery_codec::mode::Mode;
use cannery_codec::table::rules::Rule;
use cannery_codec::table::Table;

/// miniz_oxide as a backend.
#[derive(Debug)]
pub struct Miniz {
    caps: Capabilities,
    level: u8,
}

impl Default for Miniz {
    fn default() -> Self {
        Miniz::new()
    }
}

impl Miniz {
    /// The backend at level 6.
    pub fn new() -> Miniz {
        Miniz::with_level(6)
    }

    /// The backend compressing at `level` (0..=10).
    pub fn with_level(level: u8) -> Miniz {
        Miniz {
            level: level.min(10),
            caps: Capabilities {
                compress: vec![Mode::Fixed, Mode::Dynamic],
                decompress: ALL_MODES.to_vec(),
                path: ExecPath::Software,
                path_note: None,
                canned_compress_rules: &[],
                canned_decompress_rules: &[Rule::Standard],
            },
        }
    }
}

impl Backend for Miniz {
    fn name(&self) -> &'static str {
        "miniz_oxide"
    }

    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn compress(
        &mut self,
        mode: Mode,
        _table: Option<&Table>,
        page: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Outcome, BackendError> {
        check_page(page)?;
        self.caps.check_compress(self.name(), mode)?;
        miniz_deflate(self.level, mode == Mode::Fixed, page, out).map_err(|message| {
            BackendError::Rejected {
                backend: "miniz_oxide",
                message,
            }
        })?;
        Ok(outcome_of(out))
    }

    fn decompress(
        &mut self,
        mode: Mode,
        table: Option<&Table>,
        data: &[u8],
        out: &mut [u8],
    ) -> Result<usize, BackendError> {
        let data = as_deflate(mode, table, data)?;
        miniz_inflate(&data, out).map_err(|e| inflate_error("miniz_oxide", out.len(), e))
    }
}
