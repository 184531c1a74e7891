//! A batch-size sweep: the same corpus replayed once per compression batch
//! size, each run with fresh codec lanes (one per engine) of one codec:
//! cannery's encoder and decoder in a mode, or a peer compressor. What
//! `cannery zswap-sim` runs; [`crate::run`] is one run of it.

use cannery_codec::{Format, Level, Mode, Table};
use cannery_engines::backend::software::Software;
use cannery_engines::peer::{Peer, PeerKind};

use crate::replay::{run, Policy, RunConfig};
use crate::{Error, FolioSize, RunReport};

/// The codec a sweep replays with.
#[derive(Clone, Debug)]
pub enum SweepCodec {
    /// cannery's encoder and decoder (a table for canned mode).
    Cannery {
        /// Mode.
        mode: Mode,
        /// Format.
        format: Format,
        /// Level.
        level: Level,
        /// Table (canned mode).
        table: Option<Box<Table>>,
    },
    /// An outside compressor.
    Peer(PeerKind),
}

/// What a sweep varies and keeps.
#[derive(Clone, Debug)]
pub struct Sweep {
    /// Compression batch sizes, one run each.
    pub batches: Vec<usize>,
    /// Decompression batch size (default: the run's compression batch).
    pub decompress_batch: Option<usize>,
    /// Folio size.
    pub folio: FolioSize,
    /// Incompressible page policy.
    pub policy: Policy,
    /// Parallel engines (codec lanes).
    pub engines: usize,
    /// Same-filled pages the corpus' captures counted (see [`RunConfig`]).
    pub unstored_same_filled: f64,
}

/// Runs `corpus` (pages back to back) once per batch size of `sweep`;
/// `progress` hears how many runs are done after each.
pub fn sweep(
    corpus: &[u8],
    codec: &SweepCodec,
    sweep: &Sweep,
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<RunReport>, Error> {
    let setup = |what: &str, e: String| Error::Setup(format!("cannot set up the {what}: {e}"));
    sweep
        .batches
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            let cfg = RunConfig {
                compress_batch: b,
                decompress_batch: sweep.decompress_batch.unwrap_or(b),
                folio: sweep.folio,
                policy: sweep.policy,
                unstored_same_filled: sweep.unstored_same_filled,
            };
            let n = sweep.engines;
            let report = match codec {
                SweepCodec::Cannery {
                    mode,
                    format,
                    level,
                    table,
                } => {
                    let t = table.as_deref();
                    let engines = || {
                        (0..n)
                            .map(|_| Software::bound(*mode, *format, *level, t))
                            .collect::<Result<Vec<_>, _>>()
                            .map_err(|e| setup("encoder", e.to_string()))
                    };
                    run(corpus, cfg, engines()?, engines()?)
                }
                SweepCodec::Peer(kind) => {
                    let peers = || {
                        (0..n)
                            .map(|_| Peer::new(kind.clone(), None).map(Peer::bound))
                            .collect::<Result<Vec<_>, _>>()
                            .map_err(|e| setup(&kind.to_string(), e.to_string()))
                    };
                    run(corpus, cfg, peers()?, peers()?)
                }
            };
            progress(i + 1);
            report
        })
        .collect()
}
