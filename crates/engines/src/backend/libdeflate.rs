//! The `libdeflate` backend: Eric Biggers' libdeflate (through the
//! libdeflater crate) as a reference inflater and deflater; the library
//! calls are [`crate::peer::deflate`]'s (feature `reference`).
//!
//! Decompresses raw deflate of any mode; canned streams are read through
//! [`super::canned_to_deflate`]. Compresses dynamic raw deflate (its own
//! block choice, level 6 unless [`Libdeflate::with_level`]). It cannot compress with a canned table or force
//! fixed codes.

use super::{
    as_deflate, check_page, inflate_error, outcome_of, Backend, BackendError, Capabilities,
    ExecPath, ALL_MODES,
};
use crate::peer::deflate;
use cannery_codec::encode::Outcome;
use cannery_codec::mode::Mode;
use cannery_codec::table::rules::Rule;
use cannery_codec::table::Table;

/// libdeflate as a backend.
pub struct Libdeflate {
    caps: Capabilities,
    lib: deflate::Libdeflate,
}

impl std::fmt::Debug for Libdeflate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Libdeflate").finish_non_exhaustive()
    }
}

impl Default for Libdeflate {
    fn default() -> Self {
        Libdeflate::new()
    }
}

impl Libdeflate {
    /// The backend at libdeflate's default level, 6.
    pub fn new() -> Libdeflate {
        Libdeflate::with_level(6).expect("6 is a libdeflate level")
    }

    /// The backend compressing at `level` (1..=12).
    pub fn with_level(level: i32) -> Result<Libdeflate, BackendError> {
        let lib = deflate::Libdeflate::new(level).map_err(|message| BackendError::Rejected {
            backend: "libdeflate",
            message,
        })?;
        Ok(Libdeflate {
            caps: Capabilities {
                compress: vec![Mode::Dynamic],
                decompress: ALL_MODES.to_vec(),
                path: ExecPath::Software,
                path_note: None,
                canned_compress_rules: &[],
                canned_decompress_rules: &[Rule::Standard],
            },
            lib,
        })
    }
}

impl Backend for Libdeflate {
    fn name(&self) -> &'static str {
        "libdeflate"
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
        self.lib
            .deflate(page, out)
            .map_err(|message| BackendError::Rejected {
                backend: "libdeflate",
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
        let limit = out.len();
        self.lib
            .inflate(&data, out)
            .map_err(|e| inflate_error("libdeflate", limit, e))
    }
}
