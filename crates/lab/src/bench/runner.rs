//! What a [`BenchCodec`] runs on: an engine with the mode and table of
//! every page, or (feature `qpl`) QPL's software path, whose canned level
//! is not a mode. The warm and the cycled measurements share it.

#[cfg(feature = "qpl")]
use crate::mode_key::QplMode;
use cannery_codec::{Mode, Outcome, Table};
use cannery_engines::backend::software::Software;
use cannery_engines::peer::Peer;

use super::{BenchCodec, BenchError};

/// What a codec runs on: an engine with the mode and table of every page,
/// or (feature `qpl`) QPL's software path, whose canned level is not a mode.
pub(super) enum Runner {
    Engine {
        engine: Box<dyn cannery_engines::Engine>,
        mode: Mode,
        table: Option<Box<Table>>,
    },
    #[cfg(feature = "qpl")]
    Qpl(Box<QplEngine>),
}

impl Runner {
    pub(super) fn compress(
        &mut self,
        page: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Option<usize>, String> {
        match self {
            Runner::Engine {
                engine,
                mode,
                table,
            } => match engine.compress(*mode, table.as_deref(), page, out) {
                Ok(Outcome::Compressed(n)) => Ok(Some(n)),
                Ok(Outcome::Incompressible) => Ok(None),
                Err(e) => Err(e.to_string()),
            },
            #[cfg(feature = "qpl")]
            Runner::Qpl(q) => q.compress(page, out),
        }
    }

    pub(super) fn decompress(&mut self, stream: &[u8], out: &mut [u8]) -> Result<usize, String> {
        match self {
            Runner::Engine {
                engine,
                mode,
                table,
            } => engine
                .decompress(*mode, table.as_deref(), stream, out)
                .map_err(|e| e.to_string()),
            #[cfg(feature = "qpl")]
            Runner::Qpl(q) => q.decompress(stream, out),
        }
    }
}

/// QPL's software path in one mode: its job, and for canned modes the
/// table inside QPL, the level, and the table itself (for decompression,
/// which QPL programs from the table's header).
#[cfg(feature = "qpl")]
pub(super) struct QplEngine {
    qpl: cannery_engines::backend::qpl::Qpl,
    mode: Mode,
    canned: Option<(
        cannery_engines::backend::qpl::QplTable,
        cannery_engines::backend::qpl::QplLevel,
        Table,
    )>,
}

#[cfg(feature = "qpl")]
impl QplEngine {
    fn new(m: QplMode, table: Option<&Table>) -> Result<QplEngine, String> {
        use cannery_engines::backend::qpl::{Qpl, QplLevel};
        let mut qpl = Qpl::open_software().map_err(|e| e.to_string())?;
        let (mode, level) = match m {
            QplMode::Fixed => (Mode::Fixed, None),
            QplMode::Dynamic => (Mode::Dynamic, None),
            QplMode::CannedDefault => (Mode::Canned, Some(QplLevel::Default)),
            QplMode::CannedHigh => (Mode::Canned, Some(QplLevel::High)),
        };
        let canned = match (level, table) {
            (Some(level), Some(t)) => Some((
                qpl.loaded_table(t).map_err(|e| e.to_string())?,
                level,
                t.clone(),
            )),
            (Some(_), None) => return Err("canned mode needs a table".into()),
            (None, _) => None,
        };
        Ok(QplEngine { qpl, mode, canned })
    }

    fn compress(&mut self, page: &[u8], out: &mut Vec<u8>) -> Result<Option<usize>, String> {
        use cannery_engines::backend::Engine;
        let r = match &self.canned {
            Some((t, level, _)) => self.qpl.canned_stream(t, *level, page).map(|s| {
                s.map(|s| {
                    *out = s;
                    out.len()
                })
            }),
            None => self
                .qpl
                .compress(self.mode, None, page, out)
                .map(|o| match o {
                    Outcome::Compressed(n) => Some(n),
                    Outcome::Incompressible => None,
                }),
        };
        r.map_err(|e| e.to_string())
    }

    fn decompress(&mut self, stream: &[u8], out: &mut [u8]) -> Result<usize, String> {
        use cannery_engines::backend::Engine;
        let table = self.canned.as_ref().map(|(_, _, t)| t);
        self.qpl
            .decompress(self.mode, table, stream, out)
            .map_err(|e| e.to_string())
    }
}

pub(super) fn engine(codec: &BenchCodec) -> Result<Runner, BenchError> {
    let setup = |m: String| BenchError::Setup {
        codec: codec.key().to_string(),
        message: m,
    };
    Ok(match codec {
        BenchCodec::Cannery {
            mode,
            format,
            level,
            table,
            ..
        } => {
            let mut software = Software::with_format(*level, *format);
            software
                .prepare(*mode, table.as_deref())
                .map_err(|e| setup(e.to_string()))?;
            Runner::Engine {
                engine: Box::new(software),
                mode: *mode,
                table: table.clone(),
            }
        }
        BenchCodec::Peer(kind, dict) => Runner::Engine {
            engine: Box::new(
                Peer::new(kind.clone(), dict.as_deref()).map_err(|e| setup(e.to_string()))?,
            ),
            mode: Mode::Dynamic,
            table: None,
        },
        #[cfg(feature = "qpl")]
        BenchCodec::Qpl(m, table) => Runner::Qpl(Box::new(
            QplEngine::new(*m, table.as_deref()).map_err(setup)?,
        )),
        #[cfg(not(feature = "qpl"))]
        BenchCodec::Qpl(..) => {
            return Err(setup("cannery was built without the `qpl` feature".into()))
        }
    })
}
