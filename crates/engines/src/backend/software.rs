//! The `software` backend: this crate's own encoder and decoders. Always
//! available; compresses and decompresses every mode; canned streams are in
//! IAA wire format (end-of-block and zero padding, as IAA hardware writes
//! them).
//!
//! It keeps one encoder per mode and one canned decoder, rebuilt only when
//! the table changes. It does not emulate QPL's or IAA's match finder.

use super::{Capabilities, Engine, EngineError, ExecPath, Job, ALL_MODES};
use cannery_codec::decode::{inflate, CannedDecoder};
use cannery_codec::encode::{Encoder, Outcome};
use cannery_codec::lz77::Level;
use cannery_codec::mode::{Format, Mode};
use cannery_codec::table::rules::Rule;
use cannery_codec::table::{CodeLengths, Table};

/// Our encoder and decoders as a backend.
#[derive(Debug)]
pub struct Software {
    level: Level,
    format: Format,
    caps: Capabilities,
    fixed: Option<Encoder>,
    dynamic: Option<Encoder>,
    canned: Option<(CodeLengths, Encoder)>,
    decoder: Option<(CodeLengths, CannedDecoder)>,
}

impl Default for Software {
    fn default() -> Self {
        Software::new()
    }
}

impl Software {
    /// The backend at the default match-finder level.
    pub fn new() -> Software {
        Software::with_level(Level::Default)
    }

    /// The backend at a given match-finder level.
    pub fn with_level(level: Level) -> Software {
        Software::with_format(level, Format::Iaa)
    }

    /// The backend at a match-finder level writing canned streams in
    /// `format` (IAA wire format, or with the table's header in front).
    pub fn with_format(level: Level, format: Format) -> Software {
        Software {
            level,
            format,
            caps: Capabilities {
                name: "software",
                compress: ALL_MODES.to_vec(),
                decompress: ALL_MODES.to_vec(),
                path: ExecPath::Software,
                path_note: None,
                canned_compress_rules: &[Rule::Encodable],
                canned_decompress_rules: &[Rule::Decodable],
            },
            fixed: None,
            dynamic: None,
            canned: None,
            decoder: None,
        }
    }

    /// Builds the encoder for `mode` (and `table`), and the canned
    /// decoder, now rather than on the first page, or says why it cannot
    /// (e.g. a canned table that does not code every literal).
    pub fn prepare(&mut self, mode: Mode, table: Option<&Table>) -> Result<(), EngineError> {
        self.encoder(mode, table)?;
        if mode == Mode::Canned && self.format == Format::Iaa {
            self.decoder(table)?;
        }
        Ok(())
    }

    /// The engine in `format` at `level` bound to `mode` (and `table`), for
    /// the batch path, with its encoder and canned decoder built now.
    pub fn bound(
        mode: Mode,
        format: Format,
        level: Level,
        table: Option<&Table>,
    ) -> Result<crate::batch::Bound<Software>, EngineError> {
        let mut s = Software::with_format(level, format);
        s.prepare(mode, table)?;
        Ok(crate::batch::Bound::new(s, mode, table))
    }

    fn decoder(&mut self, table: Option<&Table>) -> Result<&CannedDecoder, EngineError> {
        let t = table.ok_or(EngineError::TableRequired)?;
        if self.decoder.as_ref().map(|(l, _)| l) != Some(t.lengths()) {
            self.decoder = Some((*t.lengths(), CannedDecoder::new(t)));
        }
        Ok(&self.decoder.as_ref().expect("just set").1)
    }

    fn encoder(&mut self, mode: Mode, table: Option<&Table>) -> Result<&mut Encoder, EngineError> {
        let (level, format) = (self.level, self.format);
        let slot = match mode {
            Mode::Fixed => &mut self.fixed,
            Mode::Dynamic => &mut self.dynamic,
            Mode::Canned => {
                let t = table.ok_or(EngineError::TableRequired)?;
                if self.canned.as_ref().map(|(l, _)| l) != Some(t.lengths()) {
                    let e = Encoder::new(Mode::Canned, format, level, Some(t))?;
                    self.canned = Some((*t.lengths(), e));
                }
                return Ok(&mut self.canned.as_mut().expect("just set").1);
            }
        };
        if slot.is_none() {
            *slot = Some(Encoder::new(mode, format, level, None)?);
        }
        Ok(slot.as_mut().expect("just set"))
    }
}

impl Engine for Software {
    fn capabilities(&self) -> &Capabilities {
        &self.caps
    }

    fn compress_job(&mut self, job: Job<'_>, out: &mut Vec<u8>) -> Result<Outcome, EngineError> {
        Ok(self.encoder(job.mode, job.table)?.compress(job.data, out)?)
    }

    fn decompress_job(&mut self, job: Job<'_>, out: &mut [u8]) -> Result<usize, EngineError> {
        match job.mode {
            Mode::Canned if self.format == Format::Iaa => {
                Ok(self.decoder(job.table)?.decompress(job.data, out)?)
            }
            _ => Ok(inflate(job.data, out)?),
        }
    }
}
