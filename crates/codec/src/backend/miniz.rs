//! The `miniz_oxide` backend: a pure-Rust reference inflater (and deflater).
//!
//! Decompresses raw deflate of any mode; canned streams are read through
//! [`super::canned_to_deflate`] (the table's header in front). Compresses
//! fixed (all static blocks) and dynamic (its own block choice) raw deflate
//! at level 6. It cannot compress with a canned table.

use miniz_oxide::deflate::core::{
    compress, create_comp_flags_from_zip_params, CompressionStrategy, CompressorOxide, TDEFLFlush,
    TDEFLStatus,
};
use miniz_oxide::inflate::core::{decompress, inflate_flags, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

use super::{
    as_deflate, check_page, outcome_of, Backend, BackendError, Capabilities, ExecPath, ALL_MODES,
};
use crate::constants::PAGE_SIZE;
use crate::encode::Outcome;
use crate::mode::Mode;
use crate::table::rules::Rule;
use crate::table::Table;

/// Compression level used for fixed and dynamic streams.
const LEVEL: i32 = 6;

/// miniz_oxide as a backend.
#[derive(Debug)]
pub struct Miniz {
    caps: Capabilities,
}

impl Default for Miniz {
    fn default() -> Self {
        Miniz::new()
    }
}

impl Miniz {
    /// The backend.
    pub fn new() -> Miniz {
        Miniz {
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
        let strategy = if mode == Mode::Fixed {
            CompressionStrategy::Fixed
        } else {
            CompressionStrategy::Default
        };
        let flags = create_comp_flags_from_zip_params(LEVEL, -15, strategy as i32);
        let mut c = CompressorOxide::new(flags);
        out.clear();
        out.resize(2 * PAGE_SIZE + 64, 0);
        let (status, read, written) = compress(&mut c, page, out, TDEFLFlush::Finish);
        if status != TDEFLStatus::Done || read != page.len() {
            return Err(BackendError::Rejected {
                backend: "miniz_oxide",
                message: format!("compressor stopped with {status:?} after {read} bytes"),
            });
        }
        out.truncate(written);
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
        let mut d = DecompressorOxide::new();
        let (status, _read, written) = decompress(
            &mut d,
            &data,
            out,
            0,
            inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
        );
        match status {
            TINFLStatus::Done => Ok(written),
            TINFLStatus::HasMoreOutput => Err(BackendError::OutputLimit {
                backend: "miniz_oxide",
                limit: out.len(),
            }),
            other => Err(BackendError::Rejected {
                backend: "miniz_oxide",
                message: format!("{other:?}"),
            }),
        }
    }
}
