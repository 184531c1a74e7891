//! The `libdeflate` backend: Eric Biggers' libdeflate (through the
//! libdeflater crate) as a reference inflater and deflater.
//!
//! Decompresses raw deflate of any mode; canned streams are read through
//! [`super::canned_to_deflate`]. Compresses dynamic raw deflate (its own
//! block choice, level 6). It cannot compress with a canned table or force
//! fixed codes.

use libdeflater::{CompressionLvl, Compressor, DecompressionError, Decompressor};

use super::{
    as_deflate, check_page, outcome_of, Backend, BackendError, Capabilities, ExecPath, ALL_MODES,
};
use crate::constants::PAGE_SIZE;
use crate::encode::Outcome;
use crate::mode::Mode;
use crate::table::rules::Rule;
use crate::table::Table;

/// libdeflate as a backend.
pub struct Libdeflate {
    caps: Capabilities,
    c: Compressor,
    d: Decompressor,
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
    /// The backend.
    pub fn new() -> Libdeflate {
        Libdeflate {
            caps: Capabilities {
                compress: vec![Mode::Dynamic],
                decompress: ALL_MODES.to_vec(),
                path: ExecPath::Software,
                path_note: None,
                canned_compress_rules: &[],
                canned_decompress_rules: &[Rule::Standard],
            },
            c: Compressor::new(CompressionLvl::default()),
            d: Decompressor::new(),
        }
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
        out.clear();
        out.resize(self.c.deflate_compress_bound(page.len()).max(PAGE_SIZE), 0);
        let n = self
            .c
            .deflate_compress(page, out)
            .map_err(|e| BackendError::Rejected {
                backend: "libdeflate",
                message: e.to_string(),
            })?;
        out.truncate(n);
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
        self.d.deflate_decompress(&data, out).map_err(|e| match e {
            DecompressionError::InsufficientSpace => BackendError::OutputLimit {
                backend: "libdeflate",
                limit: out.len(),
            },
            DecompressionError::BadData => BackendError::Rejected {
                backend: "libdeflate",
                message: "bad data".into(),
            },
        })
    }
}
