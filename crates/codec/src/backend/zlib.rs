//! The `zlib` backend: zlib itself (through flate2's `zlib` feature) as a
//! reference inflater and deflater.
//!
//! Decompresses raw deflate of any mode; canned streams are read through
//! [`super::canned_to_deflate`]. Compresses dynamic raw deflate (zlib's own
//! block choice, level 6). flate2 exposes no fixed-code strategy and zlib
//! cannot compress with a canned table.

use flate2::{Compress, Compression, Decompress, FlushCompress, FlushDecompress, Status};

use super::{
    as_deflate, check_page, outcome_of, Backend, BackendError, Capabilities, ExecPath, ALL_MODES,
};
use crate::constants::PAGE_SIZE;
use crate::encode::Outcome;
use crate::mode::Mode;
use crate::table::rules::Rule;
use crate::table::Table;

/// zlib as a backend.
#[derive(Debug)]
pub struct Zlib {
    caps: Capabilities,
}

impl Default for Zlib {
    fn default() -> Self {
        Zlib::new()
    }
}

impl Zlib {
    /// The backend.
    pub fn new() -> Zlib {
        Zlib {
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
        let mut c = Compress::new(Compression::new(6), false);
        out.clear();
        out.reserve(2 * PAGE_SIZE + 64);
        let status = c
            .compress_vec(page, out, FlushCompress::Finish)
            .map_err(|e| BackendError::Rejected {
                backend: "zlib",
                message: e.to_string(),
            })?;
        if status != Status::StreamEnd {
            return Err(BackendError::Rejected {
                backend: "zlib",
                message: format!("deflate stopped with {status:?}"),
            });
        }
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
        let mut d = Decompress::new(false);
        let status = d
            .decompress(&data, out, FlushDecompress::Finish)
            .map_err(|e| BackendError::Rejected {
                backend: "zlib",
                message: e.to_string(),
            })?;
        match status {
            Status::StreamEnd => Ok(d.total_out() as usize),
            // Finish without reaching the end: either the output is full or the input ran out.
            _ if d.total_out() as usize == out.len() => Err(BackendError::OutputLimit {
                backend: "zlib",
                limit: out.len(),
            }),
            _ => Err(BackendError::Rejected {
                backend: "zlib",
                message: "stream is truncated: input ends before the end of the final block".into(),
            }),
        }
    }
}
