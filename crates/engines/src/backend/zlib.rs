//! The `zlib` backend: zlib itself (through flate2's `zlib` feature) as a
//! reference inflater and deflater; the library calls are
//! [`crate::peer::deflate`]'s (feature `reference`).
//!
//! Decompresses raw deflate of any mode; canned streams are read through
//! [`super::canned_to_deflate`]. Compresses dynamic raw deflate (zlib's own
//! block choice, level 6 unless [`Zlib::with_level`]). flate2 exposes no
//! fixed-code strategy and zlib cannot compress with a canned table.

use super::{
    as_deflate, check_page, inflate_error, outcome_of, Backend, BackendError, Capabilities,
    ExecPath, ALL_MODES,
};
use crate::peer::deflate::{zlib_deflate, zlib_inflate};
use cannery_codec::encode::Outcome;
use cannery_codec::mode::Mode;
use cannery_codec::table::rules::Rule;
use cannery_codec::table::Table;

/// zlib as a backend.
#[derive(Debug)]
pub struct Zlib {
    caps: Capabilities,
    level: u32,
}

impl Default for Zlib {
    fn default() -> Self {
        Zlib::new()
    }
}

impl Zlib {
    /// The backend at zlib's default level, 6.
    pub fn new() -> Zlib {
        Zlib::with_level(6)
    }

    /// The backend compressing at `level` (0..=9).
    pub fn with_level(level: u32) -> Zlib {
        Zlib {
            level: level.min(9),
            caps: Capabilities {
                compress: vec![Mode::Dynamic],
                decompress: ALL_MODES.to_vec(),
                path: ExecPath::Software,
                path_note: None,
                canned_compress_rules: &[],
                canned_decompress_rules: &[Rule::Standard],
            },
        }
    }
}

impl Backend for Zlib {
    fn name(&self) -> &'static str {
        "zlib"
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
        zlib_deflate(self.level, page, out).map_err(|message| BackendError::Rejected {
            backend: "zlib",
            message,
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
        zlib_inflate(&data, out).map_err(|e| inflate_error("zlib", out.len(), e))
    }
}
