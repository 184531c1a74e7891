//! The reference deflate libraries as engines, one type for the three:
//! zlib (through flate2's `zlib` feature), miniz_oxide and libdeflate
//! (through libdeflater). The library calls are [`crate::peer::deflate`]'s
//! (feature `reference`); the peers `zlib-N`, `miniz-N` and `libdeflate-N`
//! are these same engines.
//!
//! Each decompresses raw deflate of any mode; canned streams are read
//! through [`super::canned_to_deflate`] (the table's header in front).
//! Each compresses dynamic raw deflate (its own block choice; level 6 in
//! [`super::open`]); miniz_oxide also fixed (all static blocks). flate2
//! exposes no fixed-code strategy, libdeflate cannot force fixed codes, and
//! none compresses with a canned table.

use super::{
    as_deflate, inflate_error, outcome_of, Capabilities, Engine, EngineError, ExecPath, Job,
    ALL_MODES,
};
use crate::peer::deflate;
use cannery_codec::encode::Outcome;
use cannery_codec::mode::Mode;
use cannery_codec::table::rules::Rule;

/// Which library, at which level.
enum Library {
    Zlib(u32),
    Miniz(u8),
    Libdeflate(deflate::Libdeflate),
}

/// A reference deflate library as an engine.
pub struct Reference {
    caps: Capabilities,
    library: Library,
}

impl std::fmt::Debug for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Reference").field(&self.caps).finish()
    }
}

impl Reference {
    fn new(name: &'static str, compress: Vec<Mode>, library: Library) -> Reference {
        Reference {
            caps: Capabilities {
                name,
                compress,
                decompress: ALL_MODES.to_vec(),
                path: ExecPath::Software,
                path_note: None,
                canned_compress_rules: &[],
                canned_decompress_rules: &[Rule::Standard],
            },
            library,
        }
    }

    /// zlib compressing at `level` (0..=9; zlib's default is 6).
    pub fn zlib(level: u32) -> Reference {
        Reference::new("zlib", vec![Mode::Dynamic], Library::Zlib(level.min(9)))
    }

    /// miniz_oxide compressing at `level` (0..=10).
    pub fn miniz(level: u8) -> Reference {
        Reference::new(
            "miniz_oxide",
            vec![Mode::Fixed, Mode::Dynamic],
            Library::Miniz(level.min(10)),
        )
    }

    /// libdeflate compressing at `level` (1..=12; its default is 6).
    pub fn libdeflate(level: i32) -> Result<Reference, EngineError> {
        let lib = deflate::Libdeflate::new(level).map_err(|message| EngineError::Rejected {
            backend: "libdeflate",
            message,
        })?;
        Ok(Reference::new(
            "libdeflate",
            vec![Mode::Dynamic],
            Library::Libdeflate(lib),
        ))
    }
}

impl Engine for Reference {
    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn compress_job(&mut self, job: Job<'_>, out: &mut Vec<u8>) -> Result<Outcome, EngineError> {
        let (page, mode) = (job.data, job.mode);
        match &mut self.library {
            Library::Zlib(l) => deflate::zlib_deflate(*l, page, out),
            Library::Miniz(l) => deflate::miniz_deflate(*l, mode == Mode::Fixed, page, out),
            Library::Libdeflate(lib) => lib.deflate(page, out),
        }
        .map_err(|message| EngineError::Rejected {
            backend: self.caps.name,
            message,
        })?;
        Ok(outcome_of(out))
    }

    fn decompress_job(&mut self, job: Job<'_>, out: &mut [u8]) -> Result<usize, EngineError> {
        let data = as_deflate(job.mode, job.table, job.data)?;
        let limit = out.len();
        match &mut self.library {
            Library::Zlib(_) => deflate::zlib_inflate(&data, out),
            Library::Miniz(_) => deflate::miniz_inflate(&data, out),
            Library::Libdeflate(lib) => lib.inflate(&data, out),
        }
        .map_err(|e| inflate_error(self.caps.name, limit, e))
    }
}
